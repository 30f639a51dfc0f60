// Bit-exact conversions between float and the narrow formats (bf16, f16, tf32, fp8), usable on
// the host and, through kjudge/device.cuh, in device code. They are plain integer arithmetic on
// the bits, so host and device give the same answers. The rounding types wrap a value and round
// after every operation: `kj::rounded<float, kj::bf16>` is a float that lives on the bf16 grid,
// which is how the audit builds a downgraded reference from the same template.
#pragma once

#include <cstdint>
#include <cstring>

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
KJ_HD std::uint32_t of(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}
KJ_HD float to_float(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}
}  // namespace bits

// float -> bf16 bits, round to nearest even; NaN stays a quiet NaN.
KJ_HD std::uint16_t float_to_bf16_bits(float x);
KJ_HD float bf16_bits_to_float(std::uint16_t b);
// float -> IEEE binary16 bits, round to nearest even, overflow to Inf, subnormals kept.
KJ_HD std::uint16_t float_to_f16_bits(float x);
KJ_HD float f16_bits_to_float(std::uint16_t h);
// float rounded to TF32 (10 explicit mantissa bits), to nearest even, kept as a float.
KJ_HD float round_to_tf32(float x);
KJ_HD float round_to_bf16(float x) { return bf16_bits_to_float(float_to_bf16_bits(x)); }
KJ_HD float round_to_f16(float x) { return f16_bits_to_float(float_to_f16_bits(x)); }

template <class Format>
KJ_HD float round_as(float x);
template <>
KJ_HD float round_as<bf16>(float x) { return round_to_bf16(x); }
template <>
KJ_HD float round_as<f16>(float x) { return round_to_f16(x); }
template <>
KJ_HD float round_as<tf32>(float x) { return round_to_tf32(x); }

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
