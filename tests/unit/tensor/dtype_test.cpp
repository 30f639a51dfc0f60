// The dtype table: names round-trip, sizes and C++ names match what kernels declare, and the
// float formats carry the constants the rest of kjudge derives floors and ulps from.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/tensor.hpp"

namespace kj {
namespace {

constexpr DType all_dtypes[] = {DType::f64,     DType::f32,     DType::f16, DType::bf16,
                                DType::fp8e4m3, DType::fp8e5m2, DType::i64, DType::i32,
                                DType::i16,     DType::i8,      DType::u8,  DType::boolean};

TEST(DType, NamesRoundTrip) {
  const char* names[] = {"f64", "f32", "f16", "bf16", "fp8e4m3", "fp8e5m2",
                         "i64", "i32", "i16", "i8",   "u8",      "bool"};
  ASSERT_EQ(std::size(names), std::size(all_dtypes));
  for (std::size_t k = 0; k < std::size(names); ++k) {
    const auto t = parse_dtype(names[k]);
    ASSERT_TRUE(t.has_value()) << names[k];
    EXPECT_EQ(*t, all_dtypes[k]);
    EXPECT_EQ(dtype_name(*t), names[k]);
  }
}

TEST(DType, UnknownNamesAreRejected) {
  for (const char* bad : {"", "float32", "F32", "Bool", "boolean", "fp8", "e4m3", "f32 ", "tf32"})
    EXPECT_FALSE(parse_dtype(bad).has_value()) << '"' << bad << '"';
}

TEST(DType, SizesAndCxxNames) {
  const std::size_t sizes[] = {8, 4, 2, 2, 1, 1, 8, 4, 2, 1, 1, 1};
  const char* cxx[] = {"double", "float",     "__half", "__nv_bfloat16", "__nv_fp8_e4m3",
                       "__nv_fp8_e5m2", "long long", "int", "short", "signed char",
                       "unsigned char", "bool"};
  for (std::size_t k = 0; k < std::size(all_dtypes); ++k) {
    EXPECT_EQ(dtype_size(all_dtypes[k]), sizes[k]) << dtype_name(all_dtypes[k]);
    EXPECT_EQ(dtype_cxx_name(all_dtypes[k]), cxx[k]);
  }
}

TEST(DType, FloatOrInteger) {
  for (std::size_t k = 0; k < std::size(all_dtypes); ++k) {
    EXPECT_EQ(is_float(all_dtypes[k]), k < 6) << dtype_name(all_dtypes[k]);
    EXPECT_EQ(is_integer(all_dtypes[k]), k >= 6) << dtype_name(all_dtypes[k]);
  }
}

TEST(DType, FloatFormats) {
  const FloatFormat f64 = float_format(DType::f64);
  EXPECT_EQ(f64.mantissa_bits, 52);
  EXPECT_EQ(f64.exponent_bits, 11);
  EXPECT_EQ(f64.max_finite, std::numeric_limits<double>::max());
  EXPECT_EQ(f64.min_normal, std::numeric_limits<double>::min());
  EXPECT_EQ(f64.min_subnormal, std::numeric_limits<double>::denorm_min());

  const FloatFormat f32 = float_format(DType::f32);
  EXPECT_EQ(f32.mantissa_bits, 23);
  EXPECT_EQ(f32.max_finite, static_cast<double>(std::numeric_limits<float>::max()));
  EXPECT_EQ(f32.min_normal, static_cast<double>(std::numeric_limits<float>::min()));
  EXPECT_EQ(f32.min_subnormal, static_cast<double>(std::numeric_limits<float>::denorm_min()));

  const FloatFormat f16 = float_format(DType::f16);
  EXPECT_EQ(f16.mantissa_bits, 10);
  EXPECT_EQ(f16.exponent_bits, 5);
  EXPECT_TRUE(f16.has_inf);
  EXPECT_EQ(f16.max_finite, 65504.0);
  EXPECT_EQ(f16.min_normal, 0x1p-14);
  EXPECT_EQ(f16.min_subnormal, 0x1p-24);

  const FloatFormat bf16 = float_format(DType::bf16);
  EXPECT_EQ(bf16.mantissa_bits, 7);
  EXPECT_EQ(bf16.exponent_bits, 8);
  EXPECT_EQ(bf16.max_finite, 0x1.fep127);
  EXPECT_EQ(bf16.min_normal, 0x1p-126);
  EXPECT_EQ(bf16.min_subnormal, 0x1p-133);

  const FloatFormat e4m3 = float_format(DType::fp8e4m3);
  EXPECT_EQ(e4m3.mantissa_bits, 3);
  EXPECT_EQ(e4m3.exponent_bits, 4);
  EXPECT_FALSE(e4m3.has_inf);
  EXPECT_EQ(e4m3.max_finite, 448.0);
  EXPECT_EQ(e4m3.min_normal, 0x1p-6);
  EXPECT_EQ(e4m3.min_subnormal, 0x1p-9);

  const FloatFormat e5m2 = float_format(DType::fp8e5m2);
  EXPECT_EQ(e5m2.mantissa_bits, 2);
  EXPECT_EQ(e5m2.exponent_bits, 5);
  EXPECT_TRUE(e5m2.has_inf);
  EXPECT_EQ(e5m2.max_finite, 57344.0);
  EXPECT_EQ(e5m2.min_normal, 0x1p-14);
  EXPECT_EQ(e5m2.min_subnormal, 0x1p-16);

  const FloatFormat tf32 = tf32_format();
  EXPECT_EQ(tf32.mantissa_bits, 10);
  EXPECT_EQ(tf32.exponent_bits, 8);
  EXPECT_EQ(tf32.max_finite, 0x1.ffcp127);
  EXPECT_EQ(tf32.min_subnormal, 0x1p-136);
}

TEST(DType, FloatFormatOfAnIntegerIsAnInternalError) {
  EXPECT_THROW(float_format(DType::i32), InternalError);
  EXPECT_THROW(float_format(DType::boolean), InternalError);
}

}  // namespace
}  // namespace kj
