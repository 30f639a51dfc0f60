// round_to and the bit encodings: exact halfway cases go to even, a hair either side of the half
// goes to the nearer neighbour, subnormals, overflow (to Inf, or saturation for e4m3), -0 and
// NaN, integer saturation. The small formats (f16, fp8) are also checked against a brute-force
// oracle built from the table of every representable value, so the fast path is not judged by
// itself alone.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/tensor.hpp"

namespace kj {
namespace {

// gtest's messages ignore std::hexfloat; spell the exact value out.
std::string hex(double x) { return fmt::format("{:a}", x); }

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

// Exactly equal, with -0 and +0 told apart and NaN equal to NaN.
::testing::AssertionResult same(double got, double want) {
  if (std::isnan(got) && std::isnan(want)) return ::testing::AssertionSuccess();
  if (got == want && std::signbit(got) == std::signbit(want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << hex(got) << ", want " << hex(want);
}

TEST(RoundTo, F64IsIdentity) {
  for (double x : {0.1, -0.0, 1e308, 4.9e-324, inf, -inf}) EXPECT_TRUE(same(round_to(DType::f64, x), x));
  EXPECT_TRUE(std::isnan(round_to(DType::f64, nan)));
}

TEST(RoundTo, F32Ties) {
  const DType t = DType::f32;
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-24), 1.0));                 // tie, 1 is even
  EXPECT_TRUE(same(round_to(t, 1.0 + 3 * 0x1p-24), 1.0 + 0x1p-22));  // tie, odd below: up
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-24 + 0x1p-50), 1.0 + 0x1p-23));  // just above half
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-24 - 0x1p-50), 1.0));            // just below half
  EXPECT_TRUE(same(round_to(t, -(1.0 + 3 * 0x1p-24)), -(1.0 + 0x1p-22)));
}

TEST(RoundTo, F32Subnormals) {
  const DType t = DType::f32;
  EXPECT_TRUE(same(round_to(t, 0x1p-149), 0x1p-149));
  EXPECT_TRUE(same(round_to(t, 0x1p-150), 0.0));                // tie with 0: even
  EXPECT_TRUE(same(round_to(t, -0x1p-150), -0.0));               // sign kept on underflow
  EXPECT_TRUE(same(round_to(t, 0x1p-150 + 0x1p-170), 0x1p-149));
  EXPECT_TRUE(same(round_to(t, 3 * 0x1p-150), 0x1p-148));       // tie between 1 and 2 units
  EXPECT_TRUE(same(round_to(t, 0x1p-126 - 0x1p-151), 0x1p-126));  // rounds up into normal
  EXPECT_TRUE(same(round_to(t, 1e-300), 0.0));
}

TEST(RoundTo, F32Overflow) {
  const DType t = DType::f32;
  const double max = 0x1.fffffep127;
  const double half_ulp = 0x1p103;
  EXPECT_TRUE(same(round_to(t, max), max));
  EXPECT_TRUE(same(round_to(t, max + half_ulp), inf));
  EXPECT_TRUE(same(round_to(t, std::nextafter(max + half_ulp, 0.0)), max));
  EXPECT_TRUE(same(round_to(t, -(max + half_ulp)), -inf));
  EXPECT_TRUE(same(round_to(t, 1e300), inf));
  EXPECT_TRUE(same(round_to(t, inf), inf));
  EXPECT_TRUE(same(round_to(t, -inf), -inf));
}

// On this host the FPU rounds to nearest even, so a plain double -> float conversion is a
// second, independent implementation of round_to(f32).
TEST(RoundTo, F32MatchesHardwareConversion) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 1'000'000; ++k) {
    const auto bits = rng();
    // Exponents from deep below f32's subnormals to beyond its max.
    const auto exponent = static_cast<std::uint64_t>(1023 - 160 + static_cast<int>(bits % 300));
    const std::uint64_t pattern = (bits & 0x800fffffffffffffu) | (exponent << 52);
    const double x = std::bit_cast<double>(pattern);
    ASSERT_TRUE(same(round_to(DType::f32, x), static_cast<double>(static_cast<float>(x))))
        << hex(x);
  }
}

TEST(RoundTo, F16TiesAndHalfUlps) {
  const DType t = DType::f16;
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-11), 1.0));
  EXPECT_TRUE(same(round_to(t, 1.0 + 3 * 0x1p-11), 1.0 + 0x1p-9));
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-11 + 0x1p-40), 1.0 + 0x1p-10));
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-11 - 0x1p-40), 1.0));
  EXPECT_TRUE(same(round_to(t, 2049.0), 2048.0));  // spacing 2 above 2048: tie to even
  EXPECT_TRUE(same(round_to(t, 2051.0), 2052.0));
  EXPECT_TRUE(same(round_to(t, 0.1), 0x1.998p-4));
}

TEST(RoundTo, F16Subnormals) {
  const DType t = DType::f16;
  EXPECT_TRUE(same(round_to(t, 0x1p-24), 0x1p-24));  // smallest subnormal
  EXPECT_TRUE(same(round_to(t, 0x1p-25), 0.0));      // tie with 0
  EXPECT_TRUE(same(round_to(t, 0x1p-25 + 0x1p-50), 0x1p-24));
  EXPECT_TRUE(same(round_to(t, 3 * 0x1p-25), 0x1p-23));
  EXPECT_TRUE(same(round_to(t, 5 * 0x1p-25), 0x1p-23));  // tie between 2 and 3 units: 2
  EXPECT_TRUE(same(round_to(t, 1023 * 0x1p-24), 1023 * 0x1p-24));  // largest subnormal
  EXPECT_TRUE(same(round_to(t, 0x1p-14 - 0x1p-25), 0x1p-14));     // tie: min normal is even
  EXPECT_TRUE(same(round_to(t, -0x1p-26), -0.0));
}

TEST(RoundTo, F16Overflow) {
  const DType t = DType::f16;
  EXPECT_TRUE(same(round_to(t, 65504.0), 65504.0));
  EXPECT_TRUE(same(round_to(t, 65519.99), 65504.0));
  EXPECT_TRUE(same(round_to(t, 65520.0), inf));  // max + half ulp: ties up to 2^16, i.e. Inf
  EXPECT_TRUE(same(round_to(t, -65520.0), -inf));
  EXPECT_TRUE(same(round_to(t, 1e10), inf));
}

TEST(RoundTo, Bf16) {
  const DType t = DType::bf16;
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-8), 1.0));
  EXPECT_TRUE(same(round_to(t, 1.0 + 3 * 0x1p-8), 1.0 + 0x1p-6));
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-8 + 0x1p-30), 1.0 + 0x1p-7));
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-8 - 0x1p-30), 1.0));
  EXPECT_TRUE(same(round_to(t, 0x1p-133), 0x1p-133));
  EXPECT_TRUE(same(round_to(t, 0x1p-134), 0.0));
  EXPECT_TRUE(same(round_to(t, 3 * 0x1p-134), 0x1p-132));
  const double max = 0x1.fep127;
  EXPECT_TRUE(same(round_to(t, max + 0x1p119), inf));  // half ulp at max is 2^119
  EXPECT_TRUE(same(round_to(t, max + 0x1p119 - 0x1p80), max));
  // Not the double rounding through f32: 1 + 2^-8 + 2^-30 is a tie after rounding to f32.
  EXPECT_NE(round_to(t, 1.0 + 0x1p-8 + 0x1p-30),
            round_to(t, static_cast<double>(static_cast<float>(1.0 + 0x1p-8 + 0x1p-30))));
}

TEST(RoundTo, E4m3) {
  const DType t = DType::fp8e4m3;
  EXPECT_TRUE(same(round_to(t, 448.0), 448.0));
  EXPECT_TRUE(same(round_to(t, 449.0), 448.0));
  EXPECT_TRUE(same(round_to(t, 464.0), 448.0));  // would-be tie with 480, which is NaN's slot
  EXPECT_TRUE(same(round_to(t, 1e6), 448.0));    // saturation, documented in tensor.hpp
  EXPECT_TRUE(same(round_to(t, inf), 448.0));
  EXPECT_TRUE(same(round_to(t, -inf), -448.0));
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-4), 1.0));
  EXPECT_TRUE(same(round_to(t, 1.0 + 3 * 0x1p-4), 1.25));
  EXPECT_TRUE(same(round_to(t, 0x1p-9), 0x1p-9));
  EXPECT_TRUE(same(round_to(t, 0x1p-10), 0.0));
  EXPECT_TRUE(same(round_to(t, 3 * 0x1p-10), 0x1p-8));
  EXPECT_TRUE(same(round_to(t, -0.0), -0.0));
  EXPECT_TRUE(std::isnan(round_to(t, nan)));
  EXPECT_EQ(encode_bits(t, 448.0), 0x7eu);
  EXPECT_EQ(encode_bits(t, -448.0), 0xfeu);
  EXPECT_EQ(encode_bits(t, nan), 0x7fu);
  EXPECT_EQ(encode_bits(t, -nan), 0xffu);
  EXPECT_EQ(encode_bits(t, 1.0), 0x38u);
  EXPECT_EQ(encode_bits(t, 0x1p-9), 0x01u);
  EXPECT_TRUE(std::isnan(decode_bits(t, 0x7f)));
  EXPECT_TRUE(std::isnan(decode_bits(t, 0xff)));
  EXPECT_TRUE(same(decode_bits(t, 0x78), 256.0));  // the top exponent holds normals
  EXPECT_TRUE(same(decode_bits(t, 0x80), -0.0));
}

TEST(RoundTo, E5m2) {
  const DType t = DType::fp8e5m2;
  EXPECT_TRUE(same(round_to(t, 57344.0), 57344.0));
  EXPECT_TRUE(same(round_to(t, 61439.0), 57344.0));
  EXPECT_TRUE(same(round_to(t, 61440.0), inf));  // max + half ulp (4096)
  EXPECT_TRUE(same(round_to(t, -61440.0), -inf));
  EXPECT_TRUE(same(round_to(t, 0x1p-16), 0x1p-16));
  EXPECT_TRUE(same(round_to(t, 0x1p-17), 0.0));
  EXPECT_TRUE(same(round_to(t, 3 * 0x1p-17), 0x1p-15));
  EXPECT_TRUE(same(round_to(t, 1.0 + 0x1p-3), 1.0));
  EXPECT_TRUE(same(round_to(t, 1.0 + 3 * 0x1p-3), 1.5));
  EXPECT_EQ(encode_bits(t, inf), 0x7cu);
  EXPECT_EQ(encode_bits(t, -inf), 0xfcu);
  EXPECT_EQ(encode_bits(t, nan), 0x7eu);
  EXPECT_EQ(encode_bits(t, 1.0), 0x3cu);
  EXPECT_TRUE(same(decode_bits(t, 0x7b), 57344.0));
}

TEST(RoundTo, SpecialValuesInEveryFloatFormat) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    EXPECT_TRUE(same(round_to(t, -0.0), -0.0));
    EXPECT_TRUE(same(round_to(t, 0.0), 0.0));
    EXPECT_TRUE(std::isnan(round_to(t, nan)));
    EXPECT_TRUE(std::isnan(round_to(t, -nan)));
    EXPECT_TRUE(same(decode_bits(t, encode_bits(t, -0.0)), -0.0));
    EXPECT_TRUE(std::isnan(decode_bits(t, encode_bits(t, nan))));
  }
}

TEST(RoundTo, IntegersRoundHalfToEvenAndSaturate) {
  EXPECT_TRUE(same(round_to(DType::i32, 2.5), 2.0));
  EXPECT_TRUE(same(round_to(DType::i32, 3.5), 4.0));
  EXPECT_TRUE(same(round_to(DType::i32, -2.5), -2.0));
  EXPECT_TRUE(same(round_to(DType::i32, -2.5000001), -3.0));
  EXPECT_TRUE(same(round_to(DType::i32, -0.4), 0.0));  // +0: integers have no -0
  EXPECT_TRUE(same(round_to(DType::i32, -0.0), 0.0));
  EXPECT_TRUE(same(round_to(DType::i32, 1e10), 2147483647.0));
  EXPECT_TRUE(same(round_to(DType::i32, -1e10), -2147483648.0));
  EXPECT_TRUE(same(round_to(DType::i32, inf), 2147483647.0));
  EXPECT_TRUE(same(round_to(DType::i32, nan), 0.0));  // documented: NaN -> 0
  EXPECT_TRUE(same(round_to(DType::i16, 32767.5), 32767.0));
  EXPECT_TRUE(same(round_to(DType::i16, -40000.0), -32768.0));
  EXPECT_TRUE(same(round_to(DType::i8, 127.5), 127.0));
  EXPECT_TRUE(same(round_to(DType::i8, -128.5), -128.0));
  EXPECT_TRUE(same(round_to(DType::i8, -127.5), -128.0));
  EXPECT_TRUE(same(round_to(DType::u8, -1.0), 0.0));
  EXPECT_TRUE(same(round_to(DType::u8, 254.5), 254.0));
  EXPECT_TRUE(same(round_to(DType::u8, 255.5), 255.0));
  EXPECT_TRUE(same(round_to(DType::u8, 300.0), 255.0));
  EXPECT_TRUE(same(round_to(DType::i64, 1e19), 0x1p63 - 1024.0));
  EXPECT_TRUE(same(round_to(DType::i64, -1e19), -0x1p63));
  EXPECT_TRUE(same(round_to(DType::i64, 0x1p60 + 0.5), 0x1p60));
  EXPECT_TRUE(same(round_to(DType::i64, 4503599627370495.5), 4503599627370496.0));  // 2^52 - 0.5
}

TEST(RoundTo, Bool) {
  EXPECT_EQ(round_to(DType::boolean, 0.0), 0.0);
  EXPECT_EQ(round_to(DType::boolean, -0.0), 0.0);
  EXPECT_EQ(round_to(DType::boolean, 0.1), 1.0);
  EXPECT_EQ(round_to(DType::boolean, -5.0), 1.0);
  EXPECT_EQ(round_to(DType::boolean, nan), 1.0);  // as (bool)NaN in C++
}

TEST(RoundTo, EncodeRejectsOtherDtypes) {
  EXPECT_THROW(encode_bits(DType::f64, 1.0), InternalError);
  EXPECT_THROW(encode_bits(DType::i32, 1.0), InternalError);
  EXPECT_THROW(decode_bits(DType::f16, 0x10000u), InternalError);
  EXPECT_THROW(decode_bits(DType::fp8e4m3, 0x100u), InternalError);
}

// Every pattern of the small formats decodes and encodes back to itself (NaNs: to a NaN), and the
// finite values come out strictly increasing in the bit order of the positive half.
TEST(RoundTo, SmallFormatsRoundTripEveryPattern) {
  for (DType t : {DType::f16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const std::uint32_t count = dtype_size(t) == 2 ? 0x10000u : 0x100u;
    const std::uint32_t sign = count >> 1;
    double previous = -1.0;
    for (std::uint32_t b = 0; b < count; ++b) {
      const double v = decode_bits(t, b);
      if (std::isnan(v)) {
        ASSERT_TRUE(std::isnan(decode_bits(t, encode_bits(t, v))));
        continue;
      }
      ASSERT_EQ(encode_bits(t, v), b) << std::hex << b;
      ASSERT_TRUE(same(round_to(t, v), v));
      if (b < sign) {
        ASSERT_GT(v, previous) << std::hex << b;
        previous = v;
      }
    }
  }
}

// Brute force: sort every finite non-negative value of the format; the nearest one wins, a tie
// goes to the even bit pattern; beyond max, Inf past the half-ulp threshold or e4m3 saturation.
class Oracle {
public:
  explicit Oracle(DType t) : f_(float_format(t)) {
    const std::uint32_t half = dtype_size(t) == 2 ? 0x8000u : 0x80u;
    for (std::uint32_t b = 0; b < half; ++b) {
      const double v = decode_bits(t, b);
      if (std::isfinite(v)) values_.push_back(v);  // ascending: checked in the test above
    }
  }
  double operator()(double x) const {
    const double a = std::fabs(x);
    double r;
    const double top = values_.back();
    const double half_ulp_at_top = (top - values_[values_.size() - 2]) / 2;
    if (a > top) {
      r = f_.has_inf && a >= top + half_ulp_at_top ? inf : top;
    } else {
      const auto hi = std::lower_bound(values_.begin(), values_.end(), a);
      if (*hi == a) {
        r = a;
      } else {
        const auto lo = hi - 1;
        const double dlo = a - *lo, dhi = *hi - a;
        const bool lo_even = (lo - values_.begin()) % 2 == 0;
        r = dlo < dhi ? *lo : dhi < dlo ? *hi : lo_even ? *lo : *hi;
      }
    }
    return std::copysign(r, x);
  }
  const std::vector<double>& values() const { return values_; }

private:
  FloatFormat f_;
  std::vector<double> values_;
};

TEST(RoundTo, SmallFormatsMatchBruteForce) {
  for (DType t : {DType::f16, DType::fp8e4m3, DType::fp8e5m2}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const Oracle oracle(t);
    const auto& v = oracle.values();
    // Every exact midpoint, a hair either side of it, and every value itself.
    for (std::size_t k = 0; k + 1 < v.size(); ++k) {
      const double mid = (v[k] + v[k + 1]) / 2;  // exact in double
      for (double x : {v[k], mid, std::nextafter(mid, 0.0), std::nextafter(mid, inf)}) {
        ASSERT_TRUE(same(round_to(t, x), oracle(x))) << hex(x);
        ASSERT_TRUE(same(round_to(t, -x), oracle(-x))) << hex(-x);
      }
    }
    // Random magnitudes across the whole range and beyond.
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> exponent(std::log2(v[1]) - 4, std::log2(v.back()) + 2);
    for (int k = 0; k < 200'000; ++k) {
      const double x = std::exp2(exponent(rng)) * (rng() % 2 ? 1 : -1);
      ASSERT_TRUE(same(round_to(t, x), oracle(x))) << hex(x);
    }
  }
}

// The in-place f32 form (the audit's downgrades) against the scalar one, bit for bit, over
// random f32 patterns (subnormals, ties, values past max, Inf and NaN among them) for tf32 and
// bf16 (the bit path) and f16 (the scalar path); saturation pinned at the formats' max.
TEST(RoundTo, InPlaceSaturatingF32MatchesTheScalarForm) {
  std::mt19937 rng(5);
  for (const FloatFormat& f : {tf32_format(), float_format(DType::bf16), float_format(DType::f16)}) {
    std::vector<float> values;
    for (int k = 0; k < 200'000; ++k) values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
    for (float x : {3.3895314e38f, -3.4028235e38f, 1.0f + 0x1p-8f, 1.0f + 0x1p-11f, 0x1p-140f, 65520.0f,
                    std::numeric_limits<float>::infinity()})
      values.push_back(x);
    std::vector<float> in_place = values;
    round_to_format_saturating(f, std::span<float>(in_place));
    for (std::size_t k = 0; k < values.size(); ++k) {
      const auto scalar = static_cast<float>(round_to_format_saturating(f, values[k]));
      ASSERT_TRUE(std::bit_cast<std::uint32_t>(scalar) == std::bit_cast<std::uint32_t>(in_place[k]) ||
                  (std::isnan(scalar) && std::isnan(in_place[k])))
          << hex(values[k]) << " mantissa bits " << f.mantissa_bits;
    }
  }
  std::vector<float> big{3.4028235e38f, -3.4028235e38f, 70000.0f};
  round_to_format_saturating(float_format(DType::bf16), std::span<float>(big));
  EXPECT_EQ(big[0], 3.3895314e38f); // bf16's max, where nearest would be Inf
  EXPECT_EQ(big[1], -3.3895314e38f);
  std::vector<float> half{70000.0f};
  EXPECT_TRUE(round_to_format_saturating(float_format(DType::f16), std::span<float>(half)));
  EXPECT_EQ(half[0], 65504.0f);
  std::vector<float> on_grid{1.0f, 0.5f};
  EXPECT_FALSE(round_to_format_saturating(float_format(DType::bf16), std::span<float>(on_grid)));
}

}  // namespace
}  // namespace kj
