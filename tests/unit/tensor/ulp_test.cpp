// ulp_of and ulp_distance at the places they are easy to get wrong: powers of two (the spacing
// changes there), zero and the subnormals (spacing is the smallest subnormal), beyond max,
// across zero (both zeros are one value), and exhaustively against the bit order of the small
// formats.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/tensor.hpp"

namespace kj {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

TEST(UlpOf, PowersOfTwo) {
  EXPECT_EQ(ulp_of(DType::f32, 1.0), 0x1p-23);
  EXPECT_EQ(ulp_of(DType::f32, 2.0), 0x1p-22);
  EXPECT_EQ(ulp_of(DType::f32, 2.0 - 0x1p-23), 0x1p-23);  // just below the power: old spacing
  EXPECT_EQ(ulp_of(DType::f32, -1.0), 0x1p-23);
  EXPECT_EQ(ulp_of(DType::f64, 1.0), 0x1p-52);
  EXPECT_EQ(ulp_of(DType::f16, 1.0), 0x1p-10);
  EXPECT_EQ(ulp_of(DType::f16, 1024.0), 1.0);
  EXPECT_EQ(ulp_of(DType::f16, 2048.0), 2.0);
  EXPECT_EQ(ulp_of(DType::bf16, 1.0), 0x1p-7);
  EXPECT_EQ(ulp_of(DType::fp8e4m3, 1.0), 0.125);
  EXPECT_EQ(ulp_of(DType::fp8e5m2, 1.0), 0.25);
  EXPECT_EQ(ulp_of(DType::f32, 3.0), 0x1p-22);  // between powers: the spacing of the binade
}

TEST(UlpOf, ZeroAndSubnormals) {
  EXPECT_EQ(ulp_of(DType::f32, 0.0), 0x1p-149);
  EXPECT_EQ(ulp_of(DType::f32, -0.0), 0x1p-149);
  EXPECT_EQ(ulp_of(DType::f32, 0x1p-140), 0x1p-149);
  EXPECT_EQ(ulp_of(DType::f32, 0x1p-126), 0x1p-149);  // min normal: same spacing as below it
  EXPECT_EQ(ulp_of(DType::f32, 0x1p-125), 0x1p-148);
  EXPECT_EQ(ulp_of(DType::f16, 0.0), 0x1p-24);
  EXPECT_EQ(ulp_of(DType::f16, 0x1p-20), 0x1p-24);
  EXPECT_EQ(ulp_of(DType::bf16, 0.0), 0x1p-133);
  EXPECT_EQ(ulp_of(DType::fp8e4m3, 0.0), 0x1p-9);
  EXPECT_EQ(ulp_of(DType::fp8e5m2, 0.0), 0x1p-16);
  EXPECT_EQ(ulp_of(DType::f64, 0.0), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(ulp_of(DType::f64, 1e-310), std::numeric_limits<double>::denorm_min());
}

TEST(UlpOf, BeyondMaxTakesTheSpacingAtMax) {
  EXPECT_EQ(ulp_of(DType::f16, 65504.0), 32.0);
  EXPECT_EQ(ulp_of(DType::f16, 1e9), 32.0);
  EXPECT_EQ(ulp_of(DType::f16, inf), 32.0);
  EXPECT_EQ(ulp_of(DType::f16, nan), 32.0);
  EXPECT_EQ(ulp_of(DType::fp8e4m3, 448.0), 32.0);
  EXPECT_EQ(ulp_of(DType::fp8e4m3, 1e6), 32.0);
  EXPECT_EQ(ulp_of(DType::fp8e5m2, 1e6), 8192.0);
  EXPECT_EQ(ulp_of(DType::f32, inf), 0x1p104);
  EXPECT_EQ(ulp_of(DType::f64, inf), 0x1p971);
}

TEST(UlpOf, IntegersAreOne) {
  for (DType t : {DType::i64, DType::i32, DType::i16, DType::i8, DType::u8, DType::boolean})
    EXPECT_EQ(ulp_of(t, 12345.0), 1.0);
}

TEST(UlpDistance, NeighboursAndPowersOfTwo) {
  const DType t = DType::f32;
  EXPECT_EQ(ulp_distance(t, 1.0, 1.0), 0.0);
  EXPECT_EQ(ulp_distance(t, 1.0, 1.0 + 0x1p-23), 1.0);
  EXPECT_EQ(ulp_distance(t, 1.0, 1.0 - 0x1p-24), 1.0);  // below 1 the spacing halves
  EXPECT_EQ(ulp_distance(t, 1.0 + 0x1p-23, 1.0), 1.0);  // symmetric
  EXPECT_EQ(ulp_distance(t, 2.0 - 0x1p-23, 2.0 + 0x1p-22), 2.0);
  EXPECT_EQ(ulp_distance(t, 1.0, 2.0), 0x1p23);
  EXPECT_EQ(ulp_distance(DType::f16, 1.0, 2.0), 1024.0);
  EXPECT_EQ(ulp_distance(DType::f64, 1.0, 2.0), 0x1p52);
}

TEST(UlpDistance, ZeroSubnormalsAndAcrossZero) {
  const DType t = DType::f32;
  EXPECT_EQ(ulp_distance(t, 0.0, -0.0), 0.0);  // one value
  EXPECT_EQ(ulp_distance(t, 0.0, 0x1p-149), 1.0);
  EXPECT_EQ(ulp_distance(t, -0.0, 0x1p-149), 1.0);
  EXPECT_EQ(ulp_distance(t, -0x1p-149, 0x1p-149), 2.0);
  EXPECT_EQ(ulp_distance(t, 0x1p-126, 0x1p-126 - 0x1p-149), 1.0);  // min normal, max subnormal
  EXPECT_EQ(ulp_distance(t, -1.0, 1.0), 2.0 * 0x3f800000);  // twice 1.0's bit pattern
  EXPECT_EQ(ulp_distance(DType::f16, -0x1p-24, 0x1p-24), 2.0);
}

TEST(UlpDistance, InfinityAndExtremes) {
  EXPECT_EQ(ulp_distance(DType::f16, 65504.0, inf), 1.0);
  EXPECT_EQ(ulp_distance(DType::f16, -inf, inf), 2.0 * 0x7c00);
  EXPECT_EQ(ulp_distance(DType::fp8e5m2, 57344.0, inf), 1.0);
  const double max = std::numeric_limits<double>::max();
  EXPECT_EQ(ulp_distance(DType::f64, -max, max), 2.0 * static_cast<double>(0x7fefffffffffffffull));
  EXPECT_EQ(ulp_distance(DType::f64, 0.0, max), static_cast<double>(0x7fefffffffffffffull));
}

TEST(UlpDistance, NanGivesNan) {
  EXPECT_TRUE(std::isnan(ulp_distance(DType::f32, nan, 1.0)));
  EXPECT_TRUE(std::isnan(ulp_distance(DType::f16, 1.0, nan)));
  EXPECT_FALSE(ulp_distance(DType::f32, nan, 1.0) <= 1e300);  // fails a `!(d <= bound)` check
}

TEST(UlpDistance, ValuesOutsideTheValueSetAreAPreconditionFailure) {
  EXPECT_THROW(ulp_distance(DType::f32, 1.0, 1.0 + 0x1p-30), InternalError);
  EXPECT_THROW(ulp_distance(DType::fp8e4m3, 448.0, inf), InternalError);  // e4m3 has no Inf
  EXPECT_THROW(ulp_distance(DType::i32, 0.5, 1.0), InternalError);
}

TEST(UlpDistance, Integers) {
  EXPECT_EQ(ulp_distance(DType::i32, 3.0, -5.0), 8.0);
  EXPECT_EQ(ulp_distance(DType::u8, 0.0, 255.0), 255.0);
  EXPECT_EQ(ulp_distance(DType::boolean, 0.0, 1.0), 1.0);
}

// For the narrow formats the ulp distance from zero is the bit pattern itself (magnitude bits),
// for every pattern; and ulp_of is the gap to the next pattern up.
TEST(UlpDistance, SmallFormatsMatchTheBitOrder) {
  for (DType t : {DType::f16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const std::uint32_t sign = dtype_size(t) == 2 ? 0x8000u : 0x80u;
    for (std::uint32_t b = 0; b < sign; ++b) {
      const double v = decode_bits(t, b);
      if (std::isnan(v)) continue;
      ASSERT_EQ(ulp_distance(t, 0.0, v), static_cast<double>(b)) << std::hex << b;
      ASSERT_EQ(ulp_distance(t, -v, v), 2.0 * b) << std::hex << b;
      const double next = decode_bits(t, b + 1);
      if (std::isfinite(v) && std::isfinite(next)) {
        ASSERT_EQ(ulp_of(t, v), next - v) << std::hex << b;
      }
    }
  }
}

}  // namespace
}  // namespace kj
