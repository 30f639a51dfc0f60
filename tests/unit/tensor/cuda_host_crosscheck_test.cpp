// A third opinion on the conversions: CUDA's own host-side implementations in cuda_fp16.h,
// cuda_bf16.h and cuda_fp8.h, compiled here by the host compiler. They were written
// independently of kjudge, so agreeing with them over millions of values (and every f16 / bf16
// pattern) pins kjudge's conversions to what device code sees. Needs the toolkit headers (the
// NVRTC link brings their include directory); without them the tests skip with a reason.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kjudge/rounding.hpp"
#include "kjudge/tensor.hpp"

#if defined(KJ_HAVE_NVRTC) && __has_include(<cuda_fp16.h>) && __has_include(<cuda_bf16.h>) && \
    __has_include(<cuda_fp8.h>)
#define KJ_HAVE_CUDA_HOST_HEADERS 1
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#endif

namespace kj {
namespace {

#if defined(KJ_HAVE_CUDA_HOST_HEADERS)

// gtest's messages ignore std::hexfloat; spell the exact value out.
std::string hex(double x) { return fmt::format("{:a}", x); }

std::uint16_t bits_of(__half h) { return static_cast<__half_raw>(h).x; }
std::uint16_t bits_of(__nv_bfloat16 h) { return static_cast<__nv_bfloat16_raw>(h).x; }
__half half_of(std::uint16_t u) {
  __half_raw r;
  r.x = u;
  return __half(r);
}
__nv_bfloat16 bfloat16_of(std::uint16_t u) {
  __nv_bfloat16_raw r;
  r.x = u;
  return __nv_bfloat16(r);
}

// Random doubles with exponents spread over [2^-160, 2^140): the f32 range, its subnormals and
// beyond on both sides; every other one sits on or next to a tie of the narrow formats.
double random_double(std::mt19937_64& rng, int k) {
  const auto r = rng();
  const auto exponent = static_cast<std::uint64_t>(1023 - 160 + static_cast<int>(r % 300));
  std::uint64_t pattern = (r & 0x800fffffffffffffu) | (exponent << 52);
  if (k % 3 == 1) pattern = (pattern & ~((std::uint64_t{1} << 45) - 1u)) | (std::uint64_t{1} << 44);
  if (k % 3 == 2) pattern = (pattern & ~((std::uint64_t{1} << 42) - 1u)) | (std::uint64_t{1} << 41);
  return std::bit_cast<double>(pattern);
}

TEST(CudaHostCrosscheck, FloatToHalfAndBack) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto u = static_cast<std::uint16_t>(b);
    const float theirs = __half2float(half_of(u));
    const float ours = f16_bits_to_float(u);
    if (std::isnan(theirs)) {
      ASSERT_TRUE(std::isnan(ours));
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(theirs), std::bit_cast<std::uint32_t>(ours)) << b;
    }
  }
  std::mt19937_64 rng(21);
  for (int k = 0; k < 1'000'000; ++k) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (std::isnan(x)) continue;  // payload conventions differ; both give a NaN
    ASSERT_EQ(float_to_f16_bits(x), bits_of(__float2half_rn(x))) << hex(x);
  }
}

TEST(CudaHostCrosscheck, FloatToBfloat16AndBack) {
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    const auto u = static_cast<std::uint16_t>(b);
    const float theirs = __bfloat162float(bfloat16_of(u));
    const float ours = bf16_bits_to_float(u);
    if (std::isnan(theirs)) {
      ASSERT_TRUE(std::isnan(ours));
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(theirs), std::bit_cast<std::uint32_t>(ours)) << b;
    }
  }
  std::mt19937_64 rng(22);
  for (int k = 0; k < 1'000'000; ++k) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(rng()));
    if (std::isnan(x)) continue;
    ASSERT_EQ(float_to_bf16_bits(x), bits_of(__float2bfloat16_rn(x))) << hex(x);
  }
}

TEST(CudaHostCrosscheck, DoubleToHalfAndBfloat16) {
  std::mt19937_64 rng(23);
  for (int k = 0; k < 1'000'000; ++k) {
    const double x = random_double(rng, k);
    ASSERT_EQ(encode_bits(DType::f16, x), bits_of(__double2half(x))) << hex(x);
    ASSERT_EQ(encode_bits(DType::bf16, x), bits_of(__double2bfloat16(x))) << hex(x);
  }
}

// e4m3 with __NV_SATFINITE is the saturating behaviour round_to documents; e5m2 has Inf, so
// __NV_NOSAT is IEEE overflow.
TEST(CudaHostCrosscheck, DoubleToFp8) {
  std::mt19937_64 rng(24);
  std::uniform_real_distribution<double> exponent(-22.0, 20.0);
  for (int k = 0; k < 1'000'000; ++k) {
    double x = std::exp2(exponent(rng)) * (rng() % 2 ? 1 : -1);
    if (k % 4 == 1) {  // an exact tie of e4m3 or e5m2 at a random binade
      const double unit = std::exp2(std::floor(exponent(rng)));
      x = unit * (1.0 + static_cast<double>(rng() % 16) / 16.0 + 1.0 / 32.0);
    }
    const auto e4m3 = __nv_cvt_double_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
    const auto e5m2 = __nv_cvt_double_to_fp8(x, __NV_NOSAT, __NV_E5M2);
    ASSERT_EQ(encode_bits(DType::fp8e4m3, x), static_cast<std::uint32_t>(e4m3)) << hex(x);
    ASSERT_EQ(encode_bits(DType::fp8e5m2, x), static_cast<std::uint32_t>(e5m2)) << hex(x);
  }
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(encode_bits(DType::fp8e4m3, inf),
            static_cast<std::uint32_t>(__nv_cvt_double_to_fp8(inf, __NV_SATFINITE, __NV_E4M3)));
  EXPECT_EQ(encode_bits(DType::fp8e5m2, -inf),
            static_cast<std::uint32_t>(__nv_cvt_double_to_fp8(-inf, __NV_NOSAT, __NV_E5M2)));
  // Every pattern decodes the same way.
  for (std::uint32_t b = 0; b < 0x100u; ++b) {
    const auto raw = static_cast<__nv_fp8_storage_t>(b);
    const double e4 = static_cast<double>(__half2float(__half(__nv_cvt_fp8_to_halfraw(raw, __NV_E4M3))));
    const double e5 = static_cast<double>(__half2float(__half(__nv_cvt_fp8_to_halfraw(raw, __NV_E5M2))));
    if (std::isnan(e4)) {
      EXPECT_TRUE(std::isnan(decode_bits(DType::fp8e4m3, b))) << b;
    } else {
      EXPECT_EQ(decode_bits(DType::fp8e4m3, b), e4) << b;
    }
    if (std::isnan(e5)) {
      EXPECT_TRUE(std::isnan(decode_bits(DType::fp8e5m2, b))) << b;
    } else {
      EXPECT_EQ(decode_bits(DType::fp8e5m2, b), e5) << b;
    }
  }
}

#else

TEST(CudaHostCrosscheck, Skipped) {
  GTEST_SKIP() << "CUDA toolkit headers (cuda_fp16.h, cuda_bf16.h, cuda_fp8.h) not found at "
                  "configure time; the cross-check against CUDA's host conversions did not run";
}

#endif

}  // namespace
}  // namespace kj
