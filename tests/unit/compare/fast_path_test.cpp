// The f32 and f64 fast paths of the comparator (a plain cast for rounding the golden, ulps from
// the exponent bits) must agree with the generic kj::round_to and kj::ulp_of on the values where
// a shortcut could slip: ties between two floats, subnormals, the edge of overflow, powers of two.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <limits>

#include <gtest/gtest.h>

#include "kjudge/detail/compare_pass_impl.hpp"
#include "kjudge/tensor.hpp"
#include "unit/compare/helpers.hpp"

namespace kj::test {
namespace {

// Values whose f32 rounding or ulp is easy to get wrong.
std::vector<double> tricky_goldens() {
  const double one_ulp = std::ldexp(1.0, -23);
  return {
      1.0 + one_ulp / 2,              // tie: rounds to the even float, 1.0
      1.0 + 3 * one_ulp / 2,          // tie: rounds up to 1 + 2 ulp
      std::ldexp(1.0, -149),          // smallest subnormal
      std::ldexp(3.0, -150),          // tie between two subnormals
      std::ldexp(1.0, -126),          // smallest normal
      -std::ldexp(1.0, 20),           // a power of two (ulp changes at it)
      3.4028235677973366e38,          // f32 max, just below the overflow threshold
      3.4028235677973366e38 * (1 + std::ldexp(1.0, -25)),  // rounds to Inf
      0.0,
      -0.0,
  };
}

TEST(FastPath, UlpPolicyAgreesWithGenericRounding) {
  const std::vector<double> g = tricky_goldens();
  // A candidate equal to the generically rounded golden is 0 ulp away everywhere the rounded
  // golden is finite; one float further is exactly 1 ulp.
  std::vector<double> same, next;
  for (double v : g) {
    const double r = round_to(DType::f32, v);
    same.push_back(r);
    // One float towards zero (away from it for zero itself): never past the finite range.
    const float f = static_cast<float>(r);
    next.push_back(!std::isfinite(r) ? r : std::nextafter(f, f == 0.0f ? 1.0f : 0.0f));
  }
  const OutputSpec spec = output(DType::f32, ulp(0));
  const HostTensor golden = tensor(DType::f64, g);
  const OutputFinding exact_match = judge(spec, tensor(DType::f32, same), &golden, nullptr);
  EXPECT_TRUE(exact_match.pass()) << exact_match.message;
  EXPECT_EQ(exact_match.stats.ulp.max, 0.0);

  const OutputSpec one_ulp = output(DType::f32, ulp(1));
  const OutputFinding off_by_one = judge(one_ulp, tensor(DType::f32, next), &golden, nullptr);
  EXPECT_TRUE(off_by_one.pass()) << off_by_one.message;
  EXPECT_EQ(off_by_one.stats.ulp.max, 1.0);
  EXPECT_FALSE(judge(spec, tensor(DType::f32, next), &golden, nullptr).pass());
}

TEST(FastPath, RelativeFloorsUseTheGenericUlp) {
  // The floor of relative is one f32 ulp at max|golden|: with a zero reference error and k = 1,
  // an error of exactly that ulp passes and the next float above it fails.
  const double scale = std::ldexp(1.0, 20);
  const double floor = ulp_of(DType::f32, scale);
  const HostTensor golden = tensor(DType::f64, {scale, 1.0});
  const HostTensor reference = tensor(DType::f32, {scale, 1.0});
  const OutputSpec spec = output(DType::f32, relative(1.0));
  const OutputFinding at_floor =
      judge(spec, tensor(DType::f32, {scale + floor, 1.0}), &golden, &reference);
  EXPECT_DOUBLE_EQ(at_floor.bound.max_bound, floor);
  EXPECT_FALSE(at_floor.bound.max_error > at_floor.bound.max_bound);
  const OutputFinding above =
      judge(spec, tensor(DType::f32, {scale + 2 * floor, 1.0}), &golden, &reference);
  EXPECT_FALSE(above.pass());
}

TEST(FastPath, UlpOfAnF32ValueIsTheGenericUlp) {
  // The pass's shortcut for expected values of f32's value set (error_statistics with
  // x_in_dtype) reads the ulp off the exponent field; every 2^7th bit pattern, both signs, all
  // subnormals and both ends of each binade.
  int checked = 0;
  for (std::uint64_t bits = 0; bits < 0x7f800000u; bits += bits < 0x00800000u ? 1 : 127) {
    for (const std::uint32_t sign : {0u, 0x80000000u}) {
      const auto pattern = static_cast<std::uint32_t>(bits) | sign;
      float f;
      std::memcpy(&f, &pattern, sizeof f);
      const double x = f;
      ASSERT_EQ(detail::ulp_of_f32_value(x), detail::ulp_at_hd(detail::dt_f32, x)) << x;
      ++checked;
    }
  }
  EXPECT_GT(checked, 30'000'000);
}

// lane_add computes a ratio only where it can reach the largest so far (ratio_reaching); its
// worst element and largest ratio must still be the definitions' own: the worse_of fold of every element's severity, and the largest error / allowed of the
// judged elements. Random f32 data under each elementwise policy: exact matches alone, then with
// ulps, then with failures and non-finite values mixed in.
TEST(FastPath, TheLanesWorstElementAndRatioAreTheDefinitions) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const int policy : {detail::cmp_allclose, detail::cmp_ulp, detail::cmp_exact}) {
    for (const int mix : {0, 1, 2}) { // exact matches only; with ulps; with failures too
      detail::compare_params p{};
      p.rtol = 1e-5;
      p.atol = 1e-6;
      p.max_ulps = 2;
      p.policy = policy;
      p.dtype = detail::dt_f32;
      detail::cmp_lane lane;
      detail::empty_lane(lane);
      detail::cmp_severity worst = detail::no_severity();
      double max_ratio = 0.0;
      for (int j = 0; j < 20000; ++j) {
        const int scale = static_cast<int>(rng() % 30) - 15;
        const auto x = static_cast<float>(unit(rng) * std::ldexp(1.0, scale));
        float c = x;
        const auto kind = mix == 0 ? 0 : rng() % (mix == 2 ? 8 : 5);
        if (kind == 1) c = std::nextafter(x, 2.0f * x + 1.0f);
        if (kind == 2) c = std::nextafter(std::nextafter(x, 0.0f), 0.0f);
        if (kind == 5) c = x * (1.0f + 1e-4f);
        if (kind == 6) c = std::numeric_limits<float>::infinity();
        if (kind == 7) c = std::numeric_limits<float>::quiet_NaN();
        const detail::cmp_element el = detail::judge_element_hd(p, c, nan, x, nan);
        double terms[3];
        detail::lane_add(p, lane, el, c, 0, j, 0, false, terms, nullptr);
        worst = detail::worse_of(worst, detail::severity_hd(p, el, j));
        if (el.status == detail::st_judged)
          max_ratio = std::max(max_ratio, detail::safe_ratio_hd(el.err, el.allowed));
      }
      EXPECT_EQ(lane.worst.index, worst.index) << "policy " << policy;
      EXPECT_EQ(lane.worst.failing, worst.failing) << "policy " << policy;
      EXPECT_EQ(lane.worst.ratio, worst.ratio) << "policy " << policy;
      EXPECT_EQ(lane.worst.error, worst.error) << "policy " << policy;
      EXPECT_EQ(lane.max_ratio, max_ratio) << "policy " << policy;
    }
  }
}

}  // namespace
}  // namespace kj::test
