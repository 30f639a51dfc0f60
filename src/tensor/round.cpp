// Exact rounding from double into every dtype, the bit encodings of the narrow float formats,
// and ulps. Rounding works on the double's bits (integer shifts and an explicit
// round-half-to-even), so results are correctly rounded once, never through f32, and do not
// depend on the FPU's rounding mode or flush-to-zero flags.
#include <bit>
#include <cmath>
#include <limits>

#include "kjudge/error.hpp"
#include "kjudge/tensor.hpp"

namespace kj {

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// y >= 0, finite: the nearest integer, ties to even. floor and the subtraction are exact for
// doubles (y - floor(y) loses nothing), so this needs no rounding mode.
double round_half_even(double y) {
  double n = std::floor(y);
  const double frac = y - n;
  if (frac > 0.5 || (frac == 0.5 && std::floor(n * 0.5) != n * 0.5)) n += 1.0;
  return n;
}

constexpr std::uint64_t f64_fraction = (std::uint64_t{1} << 52) - 1u;

// a > 0, finite: rounded to nearest even with p mantissa bits and minimum exponent emin, with an
// unbounded exponent range above (overflow is the caller's business).
double round_magnitude(double a, int p, int emin) {
  const auto u = std::bit_cast<std::uint64_t>(a);
  const int biased = static_cast<int>(u >> 52);
  // a = m * 2^(e - 52), m < 2^53; a double subnormal reads as e = -1022 without the implicit one.
  const std::uint64_t m = biased == 0 ? (u & f64_fraction) : (u & f64_fraction) | (std::uint64_t{1} << 52);
  const int e = biased == 0 ? -1022 : biased - 1023;
  // Bits of m below the format's quantum at this magnitude; below emin the quantum stays that
  // of the subnormals, so more bits go.
  const int shift = 52 - p + (e < emin ? emin - e : 0);
  if (shift <= 0) return a;
  if (shift >= 54) return 0.0;  // a < half the smallest subnormal (m < 2^53 <= 2^(shift-1))
  std::uint64_t q = m >> shift;
  const std::uint64_t rem = m & ((std::uint64_t{1} << shift) - 1u);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (q & 1u) != 0u)) ++q;
  // q < 2^54 converts exactly; scaling by a power of two is exact. Build 2^k from its bits when
  // it is a normal double (always, for the formats of DType), which is cheaper than ldexp.
  const int k = e - 52 + shift;
  if (k < -1022 || k > 1023) return std::ldexp(static_cast<double>(q), k);
  return static_cast<double>(q) * std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}

// 1 - bias, bias = 2^(exponent_bits - 1) - 1: the exponent of the smallest normal.
int min_exponent(const FloatFormat& f) { return 2 - (1 << (f.exponent_bits - 1)); }

struct IntRange {
  double lo, hi;
};

IntRange int_range(DType t) {
  switch (t) {
    // 2^63 - 1 is not a double; the largest double below it keeps round_to inside the range.
    case DType::i64: return {-0x1p63, 0x1p63 - 1024.0};
    case DType::i32: return {-2147483648.0, 2147483647.0};
    case DType::i16: return {-32768.0, 32767.0};
    case DType::i8: return {-128.0, 127.0};
    case DType::u8: return {0.0, 255.0};
    default: break;
  }
  KJ_EXPECTS(false, fmt::format("an integer dtype, got {}", dtype_name(t)));
  return {};
}

// Ordered index of a finite non-negative value of format f: the number of representable values
// in [0, v). Normal values at exponent e start at (e - emin + 1) * 2^p; the mantissa counts on
// from there, and the subnormals fill [0, 2^p). Fits in int64 even for f64 (< 2047 * 2^52).
std::int64_t magnitude_index(const FloatFormat& f, double v) {
  const int p = f.mantissa_bits;
  if (v < f.min_normal) return static_cast<std::int64_t>(v / f.min_subnormal);
  const int e = std::ilogb(v);
  const auto within = static_cast<std::int64_t>(std::ldexp(v, p - e));  // [2^p, 2^(p+1))
  return (static_cast<std::int64_t>(e - min_exponent(f)) << p) + within;
}

std::uint32_t all_ones(int bits) { return (std::uint32_t{1} << bits) - 1u; }

}  // namespace

double round_to_format(const FloatFormat& f, double x) {
  if (std::isnan(x) || x == 0.0) return x;  // keeps NaN and the sign of zero
  double r = std::fabs(x);
  if (std::isfinite(r)) r = round_magnitude(r, f.mantissa_bits, min_exponent(f));
  // Rounded as IEEE does with an unbounded exponent; anything now above max was at or past the
  // Inf threshold (max's mantissa is all ones, so max + half an ulp ties upward): Inf, or for a
  // format without Inf, saturation. For e4m3, whose max is not all ones, everything above max
  // saturates anyway.
  if (r > f.max_finite) r = f.has_inf ? inf : f.max_finite;
  return std::copysign(r, x);
}

double round_to_format_saturating(const FloatFormat& f, double x) {
  const double r = round_to_format(f, x);
  return std::isinf(r) && std::isfinite(x) ? std::copysign(f.max_finite, x) : r;
}

bool round_to_format_saturating(const FloatFormat& f, std::span<float> values) {
  bool changed = false;
  if (f.exponent_bits != 8 || f.mantissa_bits >= 23) {
    for (float& v : values) {
      const auto r = static_cast<float>(round_to_format_saturating(f, v));
      changed = changed || (r != v && !(std::isnan(r) && std::isnan(v)));
      v = r;
    }
    return changed;
  }
  // Nearest even on the bits: add half of the dropped part (less one unless the kept lsb is
  // odd), then clear it; a carry into the exponent is the correct rounding up, into Inf an
  // overflow, which saturates.
  const int drop = 23 - f.mantissa_bits;
  const std::uint32_t low = (std::uint32_t{1} << drop) - 1, half = low >> 1;
  const auto max_bits = std::bit_cast<std::uint32_t>(static_cast<float>(f.max_finite));
  for (float& v : values) {
    const auto u = std::bit_cast<std::uint32_t>(v);
    if ((u & 0x7f800000u) == 0x7f800000u) continue; // Inf and NaN stay
    std::uint32_t r = (u + half + ((u >> drop) & 1)) & ~low;
    if ((r & 0x7f800000u) == 0x7f800000u) r = (u & 0x80000000u) | max_bits;
    changed = changed || r != u;
    v = std::bit_cast<float>(r);
  }
  return changed;
}

double round_to(DType t, double x) {
  if (is_float(t)) return t == DType::f64 ? x : round_to_format(float_format(t), x);
  if (t == DType::boolean) return x != 0.0 ? 1.0 : 0.0;
  if (std::isnan(x)) return 0.0;
  const IntRange range = int_range(t);
  if (!(x > range.lo)) return range.lo;
  if (!(x < range.hi)) return range.hi;
  // Inside the range; + 0.0 turns a -0 from rounding -0.3 into +0, which is what an integer is.
  return std::copysign(round_half_even(std::fabs(x)), x) + 0.0;
}

std::uint32_t encode_bits(DType t, double x) {
  KJ_EXPECTS(is_float(t) && t != DType::f64,
             fmt::format("a float dtype of at most 32 bits, got {}", dtype_name(t)));
  const FloatFormat f = float_format(t);
  const int p = f.mantissa_bits;
  const double v = round_to(t, x);
  const std::uint32_t sign = std::signbit(v) ? std::uint32_t{1} << (f.exponent_bits + p) : 0u;
  const std::uint32_t top_exponent = all_ones(f.exponent_bits) << p;
  if (std::isnan(v)) {
    if (!f.has_inf) return sign | top_exponent | all_ones(p);  // e4m3: its only NaN
    return sign | top_exponent | (std::uint32_t{1} << (p - 1));  // quiet NaN
  }
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | top_exponent;
  if (a == 0.0) return sign;
  // a is in the format's value set and a normal double: its fields shift straight across.
  const auto u = std::bit_cast<std::uint64_t>(a);
  const int e = static_cast<int>(u >> 52) - 1023;
  const std::uint64_t m = (u & f64_fraction) | (std::uint64_t{1} << 52);
  const int emin = min_exponent(f);
  if (e < emin)  // subnormal: the count of smallest subnormals
    return sign | static_cast<std::uint32_t>(m >> (52 - p + emin - e));
  const auto mantissa = static_cast<std::uint32_t>((u & f64_fraction) >> (52 - p));
  return sign | (static_cast<std::uint32_t>(e - emin + 1) << p) | mantissa;
}

double decode_bits(DType t, std::uint32_t bits) {
  KJ_EXPECTS(is_float(t) && t != DType::f64,
             fmt::format("a float dtype of at most 32 bits, got {}", dtype_name(t)));
  const FloatFormat f = float_format(t);
  const int p = f.mantissa_bits;
  const int width = 1 + f.exponent_bits + p;
  KJ_EXPECTS(width == 32 || bits <= all_ones(width),
             fmt::format("bit pattern {:#x} wider than {}", bits, dtype_name(t)));
  const bool negative = ((bits >> (width - 1)) & 1u) != 0u;
  const std::uint32_t exponent = (bits >> p) & all_ones(f.exponent_bits);
  const std::uint32_t mantissa = bits & all_ones(p);
  double a;
  if (exponent == all_ones(f.exponent_bits) && f.has_inf)
    a = mantissa == 0u ? inf : nan;
  else if (exponent == all_ones(f.exponent_bits) && mantissa == all_ones(p))
    a = nan;  // e4m3: the top exponent holds normals except S.1111.111
  else if (exponent == 0u)
    a = static_cast<double>(mantissa) * f.min_subnormal;  // exact: a power-of-two scaling
  else  // a normal double with the same exponent and the mantissa shifted up
    a = std::bit_cast<double>(
        (static_cast<std::uint64_t>(static_cast<int>(exponent) + min_exponent(f) - 1 + 1023) << 52) |
        (static_cast<std::uint64_t>(mantissa) << (52 - p)));
  return negative ? -a : a;
}

double ulp_of(DType t, double x) {
  if (is_integer(t)) return 1.0;
  const FloatFormat f = float_format(t);
  double a = std::fabs(x);
  if (!(a <= f.max_finite)) a = f.max_finite;  // beyond max, Inf and NaN
  if (a < f.min_normal) return f.min_subnormal;
  return std::ldexp(1.0, std::ilogb(a) - f.mantissa_bits);
}

double ulp_distance(DType t, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return nan;
  KJ_EXPECTS(round_to(t, a) == a && round_to(t, b) == b,
             fmt::format("ulp_distance of values in {}'s value set, got {} and {}", dtype_name(t),
                         a, b));
  if (is_integer(t)) return std::fabs(a - b);
  const FloatFormat f = float_format(t);
  const auto signed_index = [&](double v) {
    const double m = std::fabs(v);
    const std::int64_t k =
        std::isinf(m) ? magnitude_index(f, f.max_finite) + 1 : magnitude_index(f, m);
    return v < 0.0 ? -k : k;  // -0 and +0 both land on 0
  };
  const std::int64_t ia = signed_index(a);
  const std::int64_t ib = signed_index(b);
  // The difference can exceed int64 for f64 across zero; in uint64 it is exact (< 2^64).
  const std::uint64_t d = ia >= ib ? static_cast<std::uint64_t>(ia) - static_cast<std::uint64_t>(ib)
                                   : static_cast<std::uint64_t>(ib) - static_cast<std::uint64_t>(ia);
  return static_cast<double>(d);
}

}  // namespace kj
