// kjudge's own elementary functions (log, exp, sincos) in double, written so that the host and
// the device compute the same bits: only + - * (never contracted into fma), correctly rounded
// division and sqrt, and bit manipulation. The input generator's Box-Muller and Pareto draws go
// through these, so a device kernel that includes this header reproduces the host's inputs.
//
// Host translation units that include this header must be compiled with -ffp-contract=off (the
// kj_inputs module is); on the device every product goes through __dmul_rn, which nvcc never
// fuses into an fma whatever --fmad says. No std:: call is visible under NVRTC.
#pragma once

#ifndef KJ_HD
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KJ_HD __host__ __device__ __forceinline__
#else
#define KJ_HD inline
#endif
#endif

#if !defined(__CUDACC_RTC__)
#include <cmath>
#include <cstring>
#endif

namespace kj::detail {

// ---- primitives -------------------------------------------------------------------------------

// a*b rounded once; the wrapper exists so the device compiler cannot fuse it with an addition.
KJ_HD double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// A fused multiply-add where an algorithm wants one (correctly rounded on both sides).
KJ_HD double fma_hd(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return ::fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

KJ_HD double sqrt_hd(double x) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(x);  // IEEE correctly rounded for double on the device
#else
  return std::sqrt(x);
#endif
}

KJ_HD unsigned long long bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned long long>(__double_as_longlong(x));
#else
  unsigned long long u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

KJ_HD double double_of(unsigned long long u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

// 2^n for a normal exponent, -1022 <= n <= 1023, built from bits.
KJ_HD double pow2i(int n) {
  return double_of(static_cast<unsigned long long>(n + 1023) << 52);
}

// Nearest integer of |t| < 2^51, ties to even, by the add-and-subtract trick (no conversion
// instruction whose rounding mode could differ).
KJ_HD double round_nearest(double t) {
  const double magic = 0x1.8p52;
  return (t + magic) - magic;
}

KJ_HD double quiet_nan() { return double_of(0x7ff8000000000000ull); }
KJ_HD double infinity() { return double_of(0x7ff0000000000000ull); }

// ---- log --------------------------------------------------------------------------------------

// Natural log. x = 2^k * m with m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact by Sterbenz),
// s = f / (2 + f) so log(m) = 2 atanh(s) = 2s + s*R(s^2) with the Taylor series of atanh
// (|s| < 0.172, twelve terms reach 2^-60). The sum is arranged as
//   log(1+f) = f - (f^2/2 - s*(f^2/2 + R))
// so the rounding error of s is only multiplied by small terms, and k*ln2 is split in a part
// with trailing zeros (k*ln2_hi exact for |k| < 2^11) and a tail. Error below 1 ulp.
KJ_HD double log_impl(double x) {
  unsigned long long b = bits_of(x);
  int k = 0;
  if ((b >> 63) != 0) {  // negative or -0
    if ((b << 1) == 0) return -infinity();
    return quiet_nan();
  }
  unsigned int ex = static_cast<unsigned int>(b >> 52);
  if (ex == 0x7ffu) return x + x;  // +inf stays, NaN stays NaN (quieted)
  if (ex == 0) {
    if (b == 0) return -infinity();
    x = mul(x, 0x1p54);  // subnormal: scale into the normal range, exactly
    k = -54;
    b = bits_of(x);
    ex = static_cast<unsigned int>(b >> 52);
  }
  k += static_cast<int>(ex) - 1023;
  const unsigned long long frac = b & 0x000fffffffffffffull;
  double m = double_of(frac | 0x3ff0000000000000ull);  // [1, 2)
  if (m > 0x1.6a09e667f3bcdp+0) {                      // above sqrt(2): use m/2, k+1
    m = double_of(frac | 0x3fe0000000000000ull);
    k += 1;
  }
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = mul(s, s);
  double r = 0x1.47ae147ae147bp-4;  // 2/25
  r = 0x1.642c8590b2164p-4 + mul(z, r);  // 2/23
  r = 0x1.8618618618618p-4 + mul(z, r);  // 2/21
  r = 0x1.af286bca1af28p-4 + mul(z, r);  // 2/19
  r = 0x1.e1e1e1e1e1e1ep-4 + mul(z, r);  // 2/17
  r = 0x1.1111111111111p-3 + mul(z, r);  // 2/15
  r = 0x1.3b13b13b13b14p-3 + mul(z, r);  // 2/13
  r = 0x1.745d1745d1746p-3 + mul(z, r);  // 2/11
  r = 0x1.c71c71c71c71cp-3 + mul(z, r);  // 2/9
  r = 0x1.2492492492492p-2 + mul(z, r);  // 2/7
  r = 0x1.999999999999ap-2 + mul(z, r);  // 2/5
  r = 0x1.5555555555555p-1 + mul(z, r);  // 2/3
  r = mul(z, r);
  const double hfsq = mul(0.5, mul(f, f));
  const double dk = static_cast<double>(k);
  const double ln2_hi = 0x1.62e42fefa3800p-1;
  const double ln2_lo = 0x1.ef35793c76730p-45;
  return mul(dk, ln2_hi) - ((hfsq - (mul(s, hfsq + r) + mul(dk, ln2_lo))) - f);
}

// ---- exp --------------------------------------------------------------------------------------

// e^x. x = n*ln2 + r with |r| <= ln2/2 (n*ln2_hi exact), e^r by its Taylor series to r^14
// (truncation below 2^-58), scaled by 2^n through the exponent bits. Below 1 ulp for normal
// results; results in the subnormal range are scaled in two steps and may be off by one more.
KJ_HD double exp_impl(double x) {
  if (x != x) return x + x;
  if (x > 0x1.62e42fefa39efp+9) return infinity();  // above ln(DBL_MAX)
  if (x < -0x1.74910d52d3052p+9) return 0.0;         // below ln(min subnormal / 2)
  const double n = round_nearest(mul(x, 0x1.71547652b82fep+0));
  const double hi = x - mul(n, 0x1.62e42fefa3800p-1);
  const double lo = mul(n, 0x1.ef35793c76730p-45);
  const double r = hi - lo;
  double p = 0x1.93974a8c07c9dp-37;     // 1/14!
  p = 0x1.6124613a86d09p-33 + mul(r, p);  // 1/13!
  p = 0x1.1eed8eff8d898p-29 + mul(r, p);  // 1/12!
  p = 0x1.ae64567f544e4p-26 + mul(r, p);  // 1/11!
  p = 0x1.27e4fb7789f5cp-22 + mul(r, p);  // 1/10!
  p = 0x1.71de3a556c734p-19 + mul(r, p);  // 1/9!
  p = 0x1.a01a01a01a01ap-16 + mul(r, p);  // 1/8!
  p = 0x1.a01a01a01a01ap-13 + mul(r, p);  // 1/7!
  p = 0x1.6c16c16c16c17p-10 + mul(r, p);  // 1/6!
  p = 0x1.1111111111111p-7 + mul(r, p);   // 1/5!
  p = 0x1.5555555555555p-5 + mul(r, p);   // 1/4!
  p = 0x1.5555555555555p-3 + mul(r, p);   // 1/3!
  p = 0.5 + mul(r, p);
  const double y = 1.0 + (r + mul(mul(r, r), p));
  const int ni = static_cast<int>(n);
  if (ni >= -1021) {
    if (ni <= 1023) return mul(y, pow2i(ni));
    return mul(mul(y, pow2i(1023)), pow2i(ni - 1023));  // may overflow to inf, as it should
  }
  return mul(mul(y, pow2i(ni + 1000)), pow2i(-1000));
}

// ---- sincos -----------------------------------------------------------------------------------

// sin and cos of x. Cody-Waite reduction x = n*pi/2 + y with pi/2 in three parts (33 + 33 + 53
// bits, so n*p1 and n*p2 are exact for |n| < 2^20) and the reduced argument kept as y + yl;
// then Taylor polynomials on |y| <= pi/4. Below 1 ulp for |x| <= 2^20 (the generator uses
// |x| < 2*pi); beyond that the result is deterministic but loses accuracy. Inf/NaN give NaN.
KJ_HD void sincos_impl(double x, double* s_out, double* c_out) {
  const unsigned long long b = bits_of(x);
  const unsigned int ex = static_cast<unsigned int>(b >> 52) & 0x7ffu;
  if (ex == 0x7ffu) {
    *s_out = x - x;  // NaN for inf and NaN
    *c_out = x - x;
    return;
  }
  if (ex < 1023 - 27) {  // |x| < 2^-27: sin x = x and cos x = 1 after rounding
    *s_out = x;
    *c_out = 1.0;
    return;
  }
  const double pio2_1 = 0x1.921fb54400000p+0;
  const double pio2_2 = 0x1.0b4611a600000p-34;
  const double pio2_3 = 0x1.3198a2e037073p-69;
  const double n = round_nearest(mul(x, 0x1.45f306dc9c883p-1));
  const double t = x - mul(n, pio2_1);
  const double w = mul(n, pio2_2);
  // r + e = t - w exactly (two-sum), then the third part of pi/2 joins the tail.
  const double r = t - w;
  const double bv = r - t;
  const double e = (t - (r - bv)) + (-w - bv);
  const double tail = e - mul(n, pio2_3);
  const double y = r + tail;
  const double yl = tail - (y - r);

  const double z = mul(y, y);
  // sin(y + yl) = y + y^3*S(z) + yl*(1 - z/2)
  double ps = 0x1.71b8ef6dcf572p-66;       // 1/21!
  ps = -0x1.2f49b46814157p-57 + mul(z, ps);  // -1/19!
  ps = 0x1.952c77030ad4ap-49 + mul(z, ps);   // 1/17!
  ps = -0x1.ae7f3e733b81fp-41 + mul(z, ps);  // -1/15!
  ps = 0x1.6124613a86d09p-33 + mul(z, ps);   // 1/13!
  ps = -0x1.ae64567f544e4p-26 + mul(z, ps);  // -1/11!
  ps = 0x1.71de3a556c734p-19 + mul(z, ps);   // 1/9!
  ps = -0x1.a01a01a01a01ap-13 + mul(z, ps);  // -1/7!
  ps = 0x1.1111111111111p-7 + mul(z, ps);    // 1/5!
  ps = -0x1.5555555555555p-3 + mul(z, ps);   // -1/3!
  const double sn = y + (mul(mul(z, y), ps) + mul(yl, 1.0 - mul(0.5, z)));
  // cos(y + yl) = (1 - z/2) + z^2*C(z) - y*yl, with the rounding error of 1 - z/2 recovered
  // exactly (Fast2Sum: 1 >= z/2).
  double pc = 0x1.e542ba4020225p-62;        // 1/20!
  pc = -0x1.6827863b97d97p-53 + mul(z, pc);  // -1/18!
  pc = 0x1.ae7f3e733b81fp-45 + mul(z, pc);   // 1/16!
  pc = -0x1.93974a8c07c9dp-37 + mul(z, pc);  // -1/14!
  pc = 0x1.1eed8eff8d898p-29 + mul(z, pc);   // 1/12!
  pc = -0x1.27e4fb7789f5cp-22 + mul(z, pc);  // -1/10!
  pc = 0x1.a01a01a01a01ap-16 + mul(z, pc);   // 1/8!
  pc = -0x1.6c16c16c16c17p-10 + mul(z, pc);  // -1/6!
  pc = 0x1.5555555555555p-5 + mul(z, pc);    // 1/4!
  const double hz = mul(0.5, z);
  const double wc = 1.0 - hz;
  const double cs = wc + (((1.0 - wc) - hz) + (mul(mul(z, z), pc) - mul(y, yl)));

  switch (static_cast<int>(static_cast<long long>(n) & 3)) {
    case 0: *s_out = sn; *c_out = cs; break;
    case 1: *s_out = cs; *c_out = -sn; break;
    case 2: *s_out = -sn; *c_out = -cs; break;
    default: *s_out = -cs; *c_out = sn; break;
  }
}

}  // namespace kj::detail
