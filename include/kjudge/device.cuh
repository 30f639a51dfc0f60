// The header references include. A reference kernel is a template over its float type T: NVRTC
// builds it with T = the problem's dtype for the reference and with T = double for the golden,
// so nothing here may silently work in f32 when T is double. It gives:
//   kj::c<T>(0.79788456)     a literal as T, exact for double, rounded once for narrower types
//   kj::acc_t<T>             the accumulator type references sum in (halves accumulate in float)
//   kj::to_acc / from_acc<T> conversions between storage and accumulator types
//   kj::exp, log, ...        math overloads that keep the argument's precision: float calls
//                            expf, double calls exp (never a float function), rounded types
//                            compute in float and round to their grid
// and, from rounding.hpp, kj::rounded<float, kj::bf16 | kj::f16 | kj::tf32> for the precision
// downgrades the audit builds from the same template.
//
// Compiled by NVRTC (the toolkit include directory provides cuda_fp16.h and cuda_bf16.h) and by
// nvcc. Like CUDA's own math, max/min follow fmax/fmin: a NaN operand is ignored in favour of
// the other one.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kjudge/rounding.hpp"

#define KJ_DEV __device__ __forceinline__

namespace kj {

// Per storage type: its accumulator, the conversions both ways, and how a double literal
// becomes a value of the type. A T without a specialisation fails to compile here, by name.
template <class T>
struct storage_traits;

template <>
struct storage_traits<float> {
  using acc = float;
  static KJ_HD float to_acc(float x) { return x; }
  static KJ_HD float from_acc(float x) { return x; }
  static KJ_HD float from_double(double v) { return static_cast<float>(v); }
};

template <>
struct storage_traits<double> {
  using acc = double;
  static KJ_HD double to_acc(double x) { return x; }
  static KJ_HD double from_acc(double x) { return x; }
  static KJ_HD double from_double(double v) { return v; }
};

template <>
struct storage_traits<__half> {
  using acc = float;
  static KJ_HD float to_acc(__half x) { return __half2float(x); }
  static KJ_HD __half from_acc(float x) { return __float2half_rn(x); }
  static KJ_HD __half from_double(double v) { return __double2half(v); }  // one rounding
};

template <>
struct storage_traits<__nv_bfloat16> {
  using acc = float;
  static KJ_HD float to_acc(__nv_bfloat16 x) { return __bfloat162float(x); }
  static KJ_HD __nv_bfloat16 from_acc(float x) { return __float2bfloat16_rn(x); }
  static KJ_HD __nv_bfloat16 from_double(double v) { return __double2bfloat16(v); }
};

// A rounded type is its own accumulator: the downgrade is the point.
template <class Format>
struct storage_traits<rounded<float, Format>> {
  using type = rounded<float, Format>;
  using acc = type;
  static KJ_HD type to_acc(type x) { return x; }
  static KJ_HD type from_acc(type x) { return x; }
  static KJ_HD type from_double(double v) {
    type r;
    r.v = round_as_from_double<Format>(v);  // not via float first: that would round twice
    return r;
  }
};

template <class T>
using acc_t = typename storage_traits<T>::acc;

// A literal in the reference's precision: kj::c<T>(0.5). Write the literal as a double; an
// `f` suffix would cap the golden at f32.
template <class T>
KJ_HD T c(double v) {
  return storage_traits<T>::from_double(v);
}

template <class T>
KJ_HD acc_t<T> to_acc(T x) {
  return storage_traits<T>::to_acc(x);
}

// Explicit T: kj::from_acc<T>(sum).
template <class T>
KJ_HD T from_acc(acc_t<T> x) {
  return storage_traits<T>::from_acc(x);
}

// Math. Each name gets a float, a double, a rounded and a half/bfloat16 overload; the half types
// compute in float and round once on the way back, as their accumulator would.
#define KJ_UNARY(name, float_fn, double_fn)                                            \
  KJ_DEV float name(float x) { return ::float_fn(x); }                                \
  KJ_DEV double name(double x) { return ::double_fn(x); }                             \
  KJ_DEV __half name(__half x) { return __float2half_rn(::float_fn(__half2float(x))); } \
  KJ_DEV __nv_bfloat16 name(__nv_bfloat16 x) {                                          \
    return __float2bfloat16_rn(::float_fn(__bfloat162float(x)));                        \
  }                                                                                     \
  template <class Format>                                                               \
  KJ_DEV rounded<float, Format> name(rounded<float, Format> x) {                        \
    return rounded<float, Format>(::float_fn(x.v));                                     \
  }

#define KJ_BINARY(name, float_fn, double_fn)                                                  \
  KJ_DEV float name(float a, float b) { return ::float_fn(a, b); }                           \
  KJ_DEV double name(double a, double b) { return ::double_fn(a, b); }                       \
  KJ_DEV __half name(__half a, __half b) {                                                     \
    return __float2half_rn(::float_fn(__half2float(a), __half2float(b)));                      \
  }                                                                                            \
  KJ_DEV __nv_bfloat16 name(__nv_bfloat16 a, __nv_bfloat16 b) {                                \
    return __float2bfloat16_rn(::float_fn(__bfloat162float(a), __bfloat162float(b)));          \
  }                                                                                            \
  template <class Format>                                                                      \
  KJ_DEV rounded<float, Format> name(rounded<float, Format> a, rounded<float, Format> b) {     \
    return rounded<float, Format>(::float_fn(a.v, b.v));                                       \
  }

KJ_UNARY(exp, expf, exp)
KJ_UNARY(log, logf, log)
KJ_UNARY(sqrt, sqrtf, sqrt)
KJ_UNARY(rsqrt, rsqrtf, rsqrt)
KJ_UNARY(tanh, tanhf, tanh)
KJ_UNARY(erf, erff, erf)
KJ_UNARY(abs, fabsf, fabs)
KJ_UNARY(sin, sinf, sin)
KJ_UNARY(cos, cosf, cos)
KJ_BINARY(max, fmaxf, fmax)
KJ_BINARY(min, fminf, fmin)
KJ_BINARY(pow, powf, pow)

#undef KJ_UNARY
#undef KJ_BINARY

}  // namespace kj
