// Definitions of the conversions declared in kjudge/rounding.hpp. Everything here is integer
// arithmetic on the bit patterns (no float arithmetic, no library calls), so the host compiler,
// nvcc and NVRTC all produce the same bits, independent of rounding modes, FTZ flags and
// -use_fast_math. Only builtin types are used: NVRTC compiles this file too.
#pragma once

#include "kjudge/rounding.hpp"

namespace kj {

namespace bits {
// Exponent and sign masks of binary32, shared by the conversions below.
constexpr u32 f32_sign = 0x80000000u;
constexpr u32 f32_abs = 0x7fffffffu;
constexpr u32 f32_inf = 0x7f800000u;
constexpr u32 f32_quiet = 0x00400000u;
}  // namespace bits

KJ_HD bits::u16 float_to_bf16_bits(float x) {
  bits::u32 u = bits::of(x);
  if ((u & bits::f32_abs) > bits::f32_inf)  // NaN: keep the top payload bits, force quiet
    return static_cast<bits::u16>((u >> 16) | 0x0040u);
  // Round to nearest even on the 16 dropped bits: adding 0x7fff rounds up anything above the
  // half; the kept lsb decides the exact half. A carry into the exponent is the right answer,
  // up to and including Inf for values at or above bf16 max + half an ulp.
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<bits::u16>(u >> 16);
}

KJ_HD float bf16_bits_to_float(bits::u16 b) {
  bits::u32 u = static_cast<bits::u32>(b) << 16;
  if ((u & bits::f32_abs) > bits::f32_inf) u |= bits::f32_quiet;
  return bits::to_float(u);
}

KJ_HD float round_to_tf32(float x) {
  bits::u32 u = bits::of(x);
  if ((u & bits::f32_abs) > bits::f32_inf) return bits::to_float((u | bits::f32_quiet) & ~0x1fffu);
  // Same trick as bf16, on the 13 bits TF32 drops.
  u += 0x0fffu + ((u >> 13) & 1u);
  return bits::to_float(u & ~0x1fffu);
}

KJ_HD bits::u16 float_to_f16_bits(float x) {
  const bits::u32 u = bits::of(x);
  const bits::u32 sign = (u >> 16) & 0x8000u;
  const bits::u32 a = u & bits::f32_abs;
  if (a > bits::f32_inf)  // NaN: f16 quiet bit is 0x0200, included in 0x7e00
    return static_cast<bits::u16>(sign | 0x7e00u | ((a >> 13) & 0x03ffu));
  if (a >= 0x38800000u) {  // |x| >= 2^-14: normal in f16, or overflow
    // Rebias the exponent (127 -> 15) in place, then round away the 13 extra mantissa bits;
    // a carry walks into the exponent and, past f16 max + half an ulp, to 0x7c00 (Inf).
    bits::u32 r = a - 0x38000000u;
    r = (r + 0x0fffu + ((r >> 13) & 1u)) >> 13;
    if (r > 0x7c00u) r = 0x7c00u;  // beyond the range (Inf included): Inf
    return static_cast<bits::u16>(sign | r);
  }
  // |x| < 2^-14: the result is a count of f16's smallest subnormal, 2^-24.
  const bits::u32 e = a >> 23;
  if (e < 102u) return static_cast<bits::u16>(sign);  // |x| < 2^-25: rounds to zero
  const bits::u32 m = (a & 0x007fffffu) | 0x00800000u;  // value = m * 2^(e - 150)
  const bits::u32 shift = 126u - e;                     // 14..24: value / 2^-24 = m >> shift
  bits::u32 q = m >> shift;
  const bits::u32 rem = m & ((1u << shift) - 1u);
  const bits::u32 half = 1u << (shift - 1u);
  if (rem > half || (rem == half && (q & 1u) != 0u)) ++q;  // q = 0x400 is min normal: correct
  return static_cast<bits::u16>(sign | q);
}

KJ_HD float f16_bits_to_float(bits::u16 h) {
  const bits::u32 hu = h;
  const bits::u32 sign = (hu & 0x8000u) << 16;
  const bits::u32 e = (hu >> 10) & 0x1fu;
  bits::u32 m = hu & 0x03ffu;
  if (e == 0x1fu)  // Inf, or NaN made quiet
    return bits::to_float(sign | bits::f32_inf | (m << 13) | (m != 0u ? bits::f32_quiet : 0u));
  if (e == 0u) {
    if (m == 0u) return bits::to_float(sign);
    // Subnormal m * 2^-24: shift the leading one up to bit 10 to get a normal float.
    bits::u32 ef = 113u;  // binary32 biased exponent of 2^-14
    while ((m & 0x0400u) == 0u) {
      m <<= 1;
      --ef;
    }
    return bits::to_float(sign | (ef << 23) | ((m & 0x03ffu) << 13));
  }
  return bits::to_float(sign | ((e + 112u) << 23) | (m << 13));
}

KJ_HD float double_to_float_odd(double x) {
  const float f = static_cast<float>(x);
  const double back = static_cast<double>(f);
  if (back == x || x != x) return f;  // exact, or NaN
  bits::u32 u = bits::of(f);
  // Sign-magnitude bits: u - 1 steps the magnitude down by one ulp (Inf -> max finite), which
  // turns a conversion that went away from zero into the truncation.
  const bool away = x > 0.0 ? back > x : back < x;
  if (away) u -= 1u;
  return bits::to_float(u | 1u);  // sticky bit: inexact
}

}  // namespace kj
