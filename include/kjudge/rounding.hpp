// Bit-exact conversions between float and the narrow formats (bf16, f16, tf32), usable on the
// host and, through kjudge/device.cuh, in device code. They are plain integer arithmetic on
// the bits, so host and device give the same answers. The rounding types wrap a value and round
// after every operation: `kj::rounded<float, kj::bf16>` is a float that lives on the bf16 grid,
// which is how the audit builds a downgraded reference from the same template.
//
// This header is compiled three ways: by the host compiler, by nvcc, and by NVRTC (references
// include it through device.cuh). NVRTC has no <cstdint> or <cstring>, so the integer types are
// spelled with builtin types there and bit casts use the CUDA intrinsics.
#pragma once

#if !defined(__CUDACC_RTC__)
#include <cstdint>
#include <cstring>
#endif

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KJ_HD __host__ __device__ __forceinline__
#else
#define KJ_HD inline
#endif

namespace kj {

// Format tags for rounded<>.
struct bf16 {};
struct f16 {};
struct tf32 {};

namespace bits {
// The same types as std::uint16_t / std::uint32_t on every compiler that has <cstdint>.
#if defined(__CUDACC_RTC__)
using u16 = unsigned short;
using u32 = unsigned int;
#else
using u16 = std::uint16_t;
using u32 = std::uint32_t;
#endif
static_assert(sizeof(u16) == 2 && sizeof(u32) == 4 && sizeof(float) == 4, "IEEE binary32 expected");

KJ_HD u32 of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  u32 u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
KJ_HD float to_float(u32 u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}
}  // namespace bits

// float -> bf16 bits, round to nearest even, overflow to Inf; NaN stays a quiet NaN.
KJ_HD bits::u16 float_to_bf16_bits(float x);
KJ_HD float bf16_bits_to_float(bits::u16 b);
// float -> IEEE binary16 bits, round to nearest even, overflow to Inf, subnormals kept; NaN
// stays a quiet NaN (top payload bits kept).
KJ_HD bits::u16 float_to_f16_bits(float x);
KJ_HD float f16_bits_to_float(bits::u16 h);
// float rounded to TF32 (10 explicit mantissa bits, float's exponent range and subnormals), to
// nearest even, kept as a float; overflow to Inf.
KJ_HD float round_to_tf32(float x);
KJ_HD float round_to_bf16(float x) { return bf16_bits_to_float(float_to_bf16_bits(x)); }
KJ_HD float round_to_f16(float x) { return f16_bits_to_float(float_to_f16_bits(x)); }

// double -> float rounded to odd: truncate toward zero and set the last bit when inexact.
// Rounding that to any format with at least two fewer mantissa bits (all of bf16, f16, tf32)
// by round-to-nearest-even gives the correctly rounded result of the original double, so
// literals like kj::c<rounded<float, bf16>>(0.1) are rounded once, not twice.
KJ_HD float double_to_float_odd(double x);

template <class Format>
KJ_HD float round_as(float x);
template <>
KJ_HD float round_as<bf16>(float x) { return round_to_bf16(x); }
template <>
KJ_HD float round_as<f16>(float x) { return round_to_f16(x); }
template <>
KJ_HD float round_as<tf32>(float x) { return round_to_tf32(x); }

// The double rounded directly to Format (exactly once), as a float.
template <class Format>
KJ_HD float round_as_from_double(double x) { return round_as<Format>(double_to_float_odd(x)); }

// A Value that is rounded to Format after construction and after every arithmetic operation.
template <class Value, class Format>
struct rounded {
  Value v;
  KJ_HD rounded() : v(0) {}
  KJ_HD rounded(Value x) : v(static_cast<Value>(round_as<Format>(static_cast<float>(x)))) {}
  KJ_HD operator Value() const { return v; }
  KJ_HD rounded& operator+=(rounded o) { return *this = rounded(v + o.v); }
  KJ_HD rounded& operator-=(rounded o) { return *this = rounded(v - o.v); }
  KJ_HD rounded& operator*=(rounded o) { return *this = rounded(v * o.v); }
  KJ_HD rounded& operator/=(rounded o) { return *this = rounded(v / o.v); }
  friend KJ_HD rounded operator+(rounded a, rounded b) { return rounded(a.v + b.v); }
  friend KJ_HD rounded operator-(rounded a, rounded b) { return rounded(a.v - b.v); }
  friend KJ_HD rounded operator*(rounded a, rounded b) { return rounded(a.v * b.v); }
  friend KJ_HD rounded operator/(rounded a, rounded b) { return rounded(a.v / b.v); }
  friend KJ_HD rounded operator-(rounded a) { return rounded(-a.v); }
};

}  // namespace kj

// Definitions of the conversions above live in one header so nvcc and the host compiler see the
// same code.
#include "kjudge/detail/rounding_impl.hpp"
