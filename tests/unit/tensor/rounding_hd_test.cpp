// The bit-twiddling conversions of rounding.hpp (the ones device code runs) against round_to,
// which gets there by a different road (ldexp and an integer tie rule): exhaustively over the
// 2^16 patterns of f16 and bf16, and over a million random float bit patterns, plus the
// round-to-odd path that makes kj::c<rounded<float, F>>(literal) round only once.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kjudge/rounding.hpp"
#include "kjudge/tensor.hpp"

namespace kj {
namespace {

// gtest's messages ignore std::hexfloat; spell the exact value out.
std::string hex(double x) { return fmt::format("{:a}", x); }

// A float bit pattern: exponents spread evenly, so subnormals, overflow and NaN all show up.
std::uint32_t random_float_bits(std::mt19937_64& rng) { return static_cast<std::uint32_t>(rng()); }

bool same_float(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

TEST(RoundingHd, F16EveryPatternRoundTrips) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const float f = f16_bits_to_float(h);
    const double exact = decode_bits(DType::f16, b);
    if (std::isnan(exact)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      // Quiet, with the payload kept: the top payload bits survive the round trip.
      ASSERT_EQ(float_to_f16_bits(f) & 0x7fffu, (b & 0x7fffu) | 0x0200u) << std::hex << b;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), exact) << std::hex << b;
    ASSERT_EQ(std::signbit(f), std::signbit(exact));
    ASSERT_EQ(float_to_f16_bits(f), h) << std::hex << b;
  }
}

TEST(RoundingHd, Bf16EveryPatternRoundTrips) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const float f = bf16_bits_to_float(h);
    const double exact = decode_bits(DType::bf16, b);
    if (std::isnan(exact)) {
      ASSERT_TRUE(std::isnan(f));
      ASSERT_EQ(float_to_bf16_bits(f), h | 0x0040u) << std::hex << b;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), exact) << std::hex << b;
    ASSERT_EQ(float_to_bf16_bits(f), h) << std::hex << b;
  }
}

TEST(RoundingHd, F16MatchesRoundToOnRandomFloats) {
  std::mt19937_64 rng(1);
  for (int k = 0; k < 1'000'000; ++k) {
    const float x = std::bit_cast<float>(random_float_bits(rng));
    const std::uint16_t got = float_to_f16_bits(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(f16_bits_to_float(got)));
      continue;
    }
    ASSERT_EQ(got, encode_bits(DType::f16, static_cast<double>(x))) << hex(x);
  }
}

TEST(RoundingHd, Bf16MatchesRoundToOnRandomFloats) {
  std::mt19937_64 rng(2);
  for (int k = 0; k < 1'000'000; ++k) {
    const float x = std::bit_cast<float>(random_float_bits(rng));
    const std::uint16_t got = float_to_bf16_bits(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(bf16_bits_to_float(got)));
      continue;
    }
    ASSERT_EQ(got, encode_bits(DType::bf16, static_cast<double>(x))) << hex(x);
  }
}

// Random patterns rarely land on a tie; these do, in every binade and in the subnormals.
TEST(RoundingHd, F16AndBf16ExactTies) {
  std::mt19937_64 rng(3);
  for (int k = 0; k < 200'000; ++k) {
    const auto base = static_cast<std::uint32_t>(rng()) & 0xffffe000u;  // on the f16 grid bits
    const float f16_tie = std::bit_cast<float>(base | 0x1000u);
    if (!std::isnan(f16_tie)) {
      ASSERT_EQ(float_to_f16_bits(f16_tie), encode_bits(DType::f16, static_cast<double>(f16_tie)))
          << hex(f16_tie);
    }
    const float bf16_tie = std::bit_cast<float>((base & 0xffff0000u) | 0x8000u);
    if (!std::isnan(bf16_tie)) {
      ASSERT_EQ(float_to_bf16_bits(bf16_tie), encode_bits(DType::bf16, static_cast<double>(bf16_tie)))
          << hex(bf16_tie);
    }
  }
}

TEST(RoundingHd, Tf32MatchesRoundToFormat) {
  const FloatFormat tf32 = tf32_format();
  std::mt19937_64 rng(4);
  for (int k = 0; k < 1'000'000; ++k) {
    auto bits = random_float_bits(rng);
    if (k % 4 == 0) bits = (bits & ~0x1fffu) | 0x1000u;  // an exact tie
    const float x = std::bit_cast<float>(bits);
    const float got = round_to_tf32(x);
    const double want = round_to_format(tf32, static_cast<double>(x));
    ASSERT_TRUE(same_float(got, static_cast<float>(want))) << hex(x);
    if (!std::isnan(x)) {
      ASSERT_EQ(static_cast<double>(got), want);
    }
  }
  EXPECT_EQ(round_to_tf32(1.0f + 0x1p-11f), 1.0f);
  EXPECT_EQ(round_to_tf32(1.0f + 3 * 0x1p-11f), 1.0f + 0x1p-9f);
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::max()), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(round_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(round_to_tf32(std::bit_cast<float>(0x7f800001u))));  // payload below cut
}

TEST(RoundingHd, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_f16_bits(inf), 0x7c00u);
  EXPECT_EQ(float_to_f16_bits(-inf), 0xfc00u);
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00u);
  EXPECT_EQ(float_to_f16_bits(65519.996f), 0x7bffu);
  EXPECT_EQ(float_to_f16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(float_to_f16_bits(0x1p-24f), 0x0001u);
  EXPECT_EQ(float_to_f16_bits(0x1p-25f), 0x0000u);
  EXPECT_EQ(float_to_f16_bits(std::bit_cast<float>(0x7f800001u)) & 0x7e00u, 0x7e00u);  // quiet
  EXPECT_EQ(float_to_bf16_bits(inf), 0x7f80u);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80u);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000u);
  EXPECT_EQ(float_to_bf16_bits(std::bit_cast<float>(0x7f800001u)), 0x7fc0u);  // quiet, not Inf
  EXPECT_TRUE(std::isnan(f16_bits_to_float(0x7c01u)));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(f16_bits_to_float(0x7c01u)) & 0x00400000u, 0x00400000u);
}

// Rounding a double to the narrow formats through a round-to-odd float is the single rounding.
TEST(RoundingHd, DoubleToNarrowRoundsOnce) {
  std::mt19937_64 rng(5);
  for (int k = 0; k < 1'000'000; ++k) {
    const auto r = rng();
    const auto exponent = static_cast<std::uint64_t>(1023 - 160 + static_cast<int>(r % 300));
    std::uint64_t pattern = (r & 0x800fffffffffffffu) | (exponent << 52);
    // Every other one sits a hair off a bf16 / f16 tie, where rounding twice goes wrong.
    if (k % 2 == 1) pattern = (pattern & ~((std::uint64_t{1} << 45) - 1u)) | (std::uint64_t{1} << 44) | 1u;
    const double x = std::bit_cast<double>(pattern);
    ASSERT_EQ(static_cast<double>(round_as_from_double<kj::bf16>(x)), round_to(DType::bf16, x))
        << hex(x);
    ASSERT_EQ(static_cast<double>(round_as_from_double<kj::f16>(x)), round_to(DType::f16, x))
        << hex(x);
    ASSERT_EQ(static_cast<double>(round_as_from_double<kj::tf32>(x)), round_to_format(tf32_format(), x))
        << hex(x);
  }
  EXPECT_EQ(round_as_from_double<kj::bf16>(1.0 + 0x1p-8 + 0x1p-30), 1.0f + 0x1p-7f);
  EXPECT_TRUE(std::signbit(round_as_from_double<kj::bf16>(-1e-300)));
  EXPECT_EQ(round_as_from_double<kj::bf16>(1e300), std::numeric_limits<float>::infinity());
}

TEST(RoundingHd, RoundedTypeStaysOnItsGrid) {
  using B = rounded<float, kj::bf16>;
  const B one(1.0f);
  const B tie(0x1p-8f);
  EXPECT_EQ(static_cast<float>(one + tie), 1.0f);  // 1 + 2^-8: tie to even
  B acc(0.0f);
  for (int k = 0; k < 1000; ++k) acc += B(1.0f);
  EXPECT_EQ(static_cast<float>(acc), 256.0f);  // bf16 stalls at 256: 256 + 1 ties back to 256
  EXPECT_EQ(static_cast<float>(B(0.1f)), bf16_bits_to_float(float_to_bf16_bits(0.1f)));
  using H = rounded<float, kj::f16>;
  EXPECT_EQ(static_cast<float>(H(70000.0f)), std::numeric_limits<float>::infinity());
  using T = rounded<float, kj::tf32>;
  EXPECT_EQ(static_cast<float>(T(1.0f) + T(0x1p-12f)), 1.0f);
}

}  // namespace
}  // namespace kj
