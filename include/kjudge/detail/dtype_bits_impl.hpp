// Rounding a double into a tensor's dtype and reading it back, as code the host and the device
// compile alike: the twin of kj::round_to / encode_bits / decode_bits (src/tensor/round.cpp) and
// of HostTensor::set / get, written with integer operations on the bits so the device stores
// exactly the bytes the host generator does. The logic is round.cpp's, ported line for line;
// the gpu_tests executable checks the two against each other on the host (no GPU needed) over
// every bit pattern of the narrow formats and millions of doubles.
//
// Compiled by the host compiler, nvcc and NVRTC (the builtin kernels include it): builtin types
// only, no std:: call visible under NVRTC.
#pragma once

#include "kjudge/detail/kjmath_impl.hpp"

namespace kj::detail {

// Dtype codes in the order of kj::DType (tensor.hpp); builtin_kernels.cpp checks they agree.
constexpr int dt_f64 = 0, dt_f32 = 1, dt_f16 = 2, dt_bf16 = 3, dt_fp8e4m3 = 4, dt_fp8e5m2 = 5,
              dt_i64 = 6, dt_i32 = 7, dt_i16 = 8, dt_i8 = 9, dt_u8 = 10, dt_bool = 11;

KJ_HD bool is_float_code(int dtype) { return dtype >= dt_f64 && dtype <= dt_fp8e5m2; }

// A binary float format: explicit mantissa bits, exponent bits, whether it has Inf, its largest
// finite value (not all-ones for e4m3, whose S.1111.111 is NaN).
struct float_format_hd {
  int p;
  int ebits;
  bool has_inf;
  double max_finite;
};

// The formats of the float dtypes (float_format in dtype.cpp).
KJ_HD float_format_hd format_of(int dtype) {
  switch (dtype) {
    case dt_f64: return {52, 11, true, double_of(0x7fefffffffffffffull)};
    case dt_f32: return {23, 8, true, 0x1.fffffep127};
    case dt_f16: return {10, 5, true, 65504.0};
    case dt_bf16: return {7, 8, true, 0x1.fep127};
    case dt_fp8e4m3: return {3, 4, false, 448.0};
    default: return {2, 5, true, 57344.0};  // dt_fp8e5m2
  }
}

// The exponent of the smallest normal, 1 - bias.
KJ_HD int min_exponent_of(const float_format_hd& f) { return 2 - (1 << (f.ebits - 1)); }

KJ_HD bool sign_of(double x) { return (bits_of(x) >> 63) != 0; }
KJ_HD double abs_of(double x) { return double_of(bits_of(x) & 0x7fffffffffffffffull); }
KJ_HD bool is_nan(double x) { return (bits_of(x) & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }

KJ_HD double floor_hd(double x) {
#if defined(__CUDA_ARCH__)
  return ::floor(x);  // exact on both sides: no rounding involved
#else
  return std::floor(x);
#endif
}

// a > 0, finite: rounded to nearest even with p mantissa bits and minimum exponent emin, with an
// unbounded exponent range above (round.cpp's round_magnitude). The scale 2^k is a normal
// double for every format of DType (k >= -149), so it is built from bits.
KJ_HD double round_magnitude_hd(double a, int p, int emin) {
  const unsigned long long u = bits_of(a);
  const int biased = static_cast<int>(u >> 52);
  const unsigned long long fraction = u & 0x000fffffffffffffull;
  const unsigned long long m = biased == 0 ? fraction : (fraction | (1ull << 52));
  const int e = biased == 0 ? -1022 : biased - 1023;
  const int shift = 52 - p + (e < emin ? emin - e : 0);
  if (shift <= 0) return a;
  if (shift >= 54) return 0.0;  // below half the smallest subnormal
  unsigned long long q = m >> shift;
  const unsigned long long rem = m & ((1ull << shift) - 1u);
  const unsigned long long half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1u) != 0u)) ++q;
  const int k = e - 52 + shift;
  return mul(static_cast<double>(q), pow2i(k));  // q < 2^54: exact; times 2^k: exact
}

// round_to_format: nearest even, overflow to Inf (or to max for a format without Inf), NaN and
// the sign of zero kept.
KJ_HD double round_to_format_hd(const float_format_hd& f, double x) {
  if (is_nan(x) || x == 0.0) return x;
  double r = abs_of(x);
  if (r < infinity()) r = round_magnitude_hd(r, f.p, min_exponent_of(f));
  if (r > f.max_finite) r = f.has_inf ? infinity() : f.max_finite;
  return sign_of(x) ? -r : r;
}

// round_to for the integer dtypes: NaN -> 0, saturation to [lo, hi], else nearest even, and -0
// becomes +0.
KJ_HD double round_to_int_hd(double x, double lo, double hi) {
  if (is_nan(x)) return 0.0;
  if (!(x > lo)) return lo;
  if (!(x < hi)) return hi;
  const double y = abs_of(x);
  double n = floor_hd(y);
  const double frac = y - n;
  if (frac > 0.5 || (frac == 0.5 && floor_hd(mul(n, 0.5)) != mul(n, 0.5))) n += 1.0;
  return (sign_of(x) ? -n : n) + 0.0;
}

// The saturation range of an integer dtype for round_to (i64: the largest double below 2^63).
KJ_HD void int_range_of(int dtype, double* lo, double* hi) {
  switch (dtype) {
    case dt_i64: *lo = -0x1p63; *hi = 0x1p63 - 1024.0; return;
    case dt_i32: *lo = -2147483648.0; *hi = 2147483647.0; return;
    case dt_i16: *lo = -32768.0; *hi = 32767.0; return;
    case dt_i8: *lo = -128.0; *hi = 127.0; return;
    default: *lo = 0.0; *hi = 255.0; return;  // dt_u8
  }
}

// kj::round_to(dtype, x).
KJ_HD double round_to_hd(int dtype, double x) {
  if (dtype == dt_f64) return x;
  if (is_float_code(dtype)) return round_to_format_hd(format_of(dtype), x);
  if (dtype == dt_bool) return x != 0.0 ? 1.0 : 0.0;
  double lo, hi;
  int_range_of(dtype, &lo, &hi);
  return round_to_int_hd(x, lo, hi);
}

// kj::encode_bits for f32, f16, bf16 and fp8: rounds, then encodes exactly; NaN is the quiet NaN
// of its sign (e4m3: S.1111.111).
KJ_HD unsigned int encode_bits_hd(int dtype, double x) {
  const float_format_hd f = format_of(dtype);
  const int p = f.p;
  const double v = round_to_format_hd(f, x);
  const unsigned int sign = sign_of(v) ? 1u << (f.ebits + p) : 0u;
  const unsigned int top_exponent = ((1u << f.ebits) - 1u) << p;
  if (is_nan(v)) {
    if (!f.has_inf) return sign | top_exponent | ((1u << p) - 1u);
    return sign | top_exponent | (1u << (p - 1));
  }
  const double a = abs_of(v);
  if (a == infinity()) return sign | top_exponent;
  if (a == 0.0) return sign;
  const unsigned long long u = bits_of(a);
  const int e = static_cast<int>(u >> 52) - 1023;
  const unsigned long long fraction = u & 0x000fffffffffffffull;
  const int emin = min_exponent_of(f);
  if (e < emin)
    return sign | static_cast<unsigned int>((fraction | (1ull << 52)) >> (52 - p + emin - e));
  const unsigned int mantissa = static_cast<unsigned int>(fraction >> (52 - p));
  return sign | (static_cast<unsigned int>(e - emin + 1) << p) | mantissa;
}

// The f32 bits HostTensor::set stores: round_to(f32, x) then a C++ double -> float conversion,
// which is exact for every non-NaN value left and, for a NaN, keeps the sign and the top 23
// payload bits and sets the quiet bit (what x86 does; the device would canonicalise, hence bits).
KJ_HD unsigned int f32_bits_hd(double x) {
  if (is_nan(x)) {
    const unsigned long long u = bits_of(x);
    return (static_cast<unsigned int>(u >> 32) & 0x80000000u) | 0x7fc00000u |
           static_cast<unsigned int>((u & 0x000fffffffffffffull) >> 29);
  }
  return encode_bits_hd(dt_f32, x);
}

// HostTensor::set(i, v) into raw storage: the same bytes, for every dtype.
KJ_HD void store_rounded(void* out, unsigned long long i, int dtype, double v) {
  switch (dtype) {
    case dt_f64: static_cast<double*>(out)[i] = v; return;
    case dt_f32: static_cast<unsigned int*>(out)[i] = f32_bits_hd(v); return;
    case dt_f16:
    case dt_bf16:
      static_cast<unsigned short*>(out)[i] = static_cast<unsigned short>(encode_bits_hd(dtype, v));
      return;
    case dt_fp8e4m3:
    case dt_fp8e5m2:
      static_cast<unsigned char*>(out)[i] = static_cast<unsigned char>(encode_bits_hd(dtype, v));
      return;
    case dt_bool: static_cast<unsigned char*>(out)[i] = v != 0.0 ? 1 : 0; return;
    default: break;
  }
  const double r = round_to_hd(dtype, v);  // an integer in the dtype's range: the casts are exact
  switch (dtype) {
    case dt_i64: static_cast<long long*>(out)[i] = static_cast<long long>(r); return;
    case dt_i32: static_cast<int*>(out)[i] = static_cast<int>(r); return;
    case dt_i16: static_cast<short*>(out)[i] = static_cast<short>(r); return;
    case dt_i8: static_cast<signed char*>(out)[i] = static_cast<signed char>(r); return;
    default: static_cast<unsigned char*>(out)[i] = static_cast<unsigned char>(r); return;  // u8
  }
}

// A float of f32, f16, bf16 or fp8 from its bits, as HostTensor::get returns it: exact for every
// number. NaNs as the host's conversions leave them: f32, f16 and bf16 widen through float, so
// the sign and the payload stay (shifted to the top of the double's fraction) with the quiet bit
// set; fp8 goes through decode_bits, which gives the default quiet NaN of the sign.
KJ_HD double decode_bits_hd(int dtype, unsigned int b) {
  const float_format_hd f = format_of(dtype);
  const int p = f.p;
  const int width = 1 + f.ebits + p;
  const bool negative = ((b >> (width - 1)) & 1u) != 0u;
  const unsigned int exponent = (b >> p) & ((1u << f.ebits) - 1u);
  const unsigned int mantissa = b & ((1u << p) - 1u);
  const unsigned int top = (1u << f.ebits) - 1u;
  const unsigned long long sign = negative ? 1ull << 63 : 0ull;
  const bool nan = f.has_inf ? (exponent == top && mantissa != 0u)
                             : (exponent == top && mantissa == (1u << p) - 1u);
  if (nan) {
    if (dtype == dt_fp8e4m3 || dtype == dt_fp8e5m2) return double_of(sign | 0x7ff8000000000000ull);
    return double_of(sign | 0x7ff8000000000000ull |
                     (static_cast<unsigned long long>(mantissa) << (52 - p)));
  }
  double a;
  if (f.has_inf && exponent == top) {
    a = infinity();
  } else if (exponent == 0u) {  // subnormal: a count of the smallest subnormal, exact
    a = mul(static_cast<double>(mantissa), pow2i(min_exponent_of(f) - p));
  } else {
    a = double_of(
        (static_cast<unsigned long long>(static_cast<int>(exponent) + min_exponent_of(f) - 1 + 1023)
         << 52) |
        (static_cast<unsigned long long>(mantissa) << (52 - p)));
  }
  return negative ? -a : a;
}

// HostTensor::get(i) from raw storage, for every dtype (i64 beyond 2^53 rounds to nearest, as
// the host's conversion does).
KJ_HD double load_widened(const void* in, unsigned long long i, int dtype) {
  switch (dtype) {
    case dt_f64: return static_cast<const double*>(in)[i];
    case dt_f32: return decode_bits_hd(dtype, static_cast<const unsigned int*>(in)[i]);
    case dt_f16:
    case dt_bf16: return decode_bits_hd(dtype, static_cast<const unsigned short*>(in)[i]);
    case dt_fp8e4m3:
    case dt_fp8e5m2: return decode_bits_hd(dtype, static_cast<const unsigned char*>(in)[i]);
    case dt_i64: return static_cast<double>(static_cast<const long long*>(in)[i]);
    case dt_i32: return static_cast<double>(static_cast<const int*>(in)[i]);
    case dt_i16: return static_cast<double>(static_cast<const short*>(in)[i]);
    case dt_i8: return static_cast<double>(static_cast<const signed char*>(in)[i]);
    case dt_u8: return static_cast<double>(static_cast<const unsigned char*>(in)[i]);
    default: return static_cast<const unsigned char*>(in)[i] != 0 ? 1.0 : 0.0;  // bool
  }
}

}  // namespace kj::detail
