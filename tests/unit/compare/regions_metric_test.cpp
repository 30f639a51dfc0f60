// The CANN two-phase gate (`regions`, numerics.md), the approximate tier's metrics, and integer
// outputs.
#include <gtest/gtest.h>

#include "unit/compare/helpers.hpp"

namespace kj {
namespace {

using namespace kj::test;

// ------------------------------------------------------------------------------------ regions

TEST(Regions, ConstantsFromNumericsMd) {
  const auto f16 = cann_constants(DType::f16);
  EXPECT_EQ(f16.threshold, p2(-10));
  EXPECT_EQ(f16.small_boundary, p2(-11));
  EXPECT_EQ(f16.small_abs_bound, p2(-16));
  EXPECT_EQ(f16.cancel_boundary, p2(-5));
  const auto bf16 = cann_constants(DType::bf16);
  EXPECT_EQ(bf16.threshold, p2(-7));
  EXPECT_EQ(bf16.small_boundary, p2(-8));
  EXPECT_EQ(bf16.small_abs_bound, p2(-16));
  EXPECT_EQ(bf16.cancel_boundary, p2(-3));
  const auto f32 = cann_constants(DType::f32);
  EXPECT_EQ(f32.threshold, p2(-13));
  EXPECT_EQ(f32.small_boundary, p2(-14));
  EXPECT_EQ(f32.small_abs_bound, p2(-30));
  EXPECT_EQ(f32.cancel_boundary, p2(-8));
  EXPECT_EQ(f32.cancel_abs_bound, 10 * p2(-21));
  const auto e4m3 = cann_constants(DType::fp8e4m3);
  EXPECT_EQ(e4m3.threshold, p2(-3));
  EXPECT_EQ(e4m3.small_boundary, p2(-4));
  EXPECT_EQ(e4m3.small_abs_bound, p2(-6));
  EXPECT_EQ(e4m3.cancel_boundary, p2(-1));
  const auto e5m2 = cann_constants(DType::fp8e5m2);
  EXPECT_EQ(e5m2.threshold, p2(-2));
  EXPECT_EQ(e5m2.small_boundary, p2(-3));
  EXPECT_EQ(e5m2.small_abs_bound, p2(-5));
  EXPECT_EQ(e5m2.cancel_boundary, p2(0));
  // kjudge's f64 choice: f32's constants shifted by f64's 29 extra mantissa bits.
  const auto f64 = cann_constants(DType::f64);
  EXPECT_EQ(f64.threshold, p2(-42));
  EXPECT_EQ(f64.small_boundary, p2(-43));
  EXPECT_EQ(f64.small_abs_bound, p2(-59));
  EXPECT_EQ(f64.cancel_boundary, p2(-37));
}

TEST(Regions, PhaseOnePasses) {
  const auto golden = tensor(DType::f64, {1.0, 1.5, -2.0, 3.0});
  const auto ref = tensor(DType::f16, {1.0, 1.5, -2.0, 3.0});
  auto cand = ref;
  cand.set(3, 3.0 + p2(-9)); // one f16 ulp at 3: rel 2^-9 / 3 < 10 x 2^-10
  const auto f = judge(output(DType::f16, regions()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_TRUE(f.regions.empty());
  EXPECT_EQ(f.mismatches, 0);
  EXPECT_NE(f.message.find("phase 1: MERE"), std::string::npos) << f.message;
  EXPECT_LT(f.log_error_ratio, 0.0);
}

// f32: T = 2^-13. Elements: 0-3 normal (g = 1), 4-5 small (g = 2^-16 < 2^-14), 6-7
// cancellation (g = 2^-10, between 2^-14 and 2^-8, and the output below 2^-8).
struct Gate : ::testing::Test {
  HostTensor golden = tensor(DType::f64, {1, 1, 1, 1, p2(-16), p2(-16), p2(-10), p2(-10)});
  HostTensor ref = tensor(DType::f32, {1, 1, 1, 1, p2(-16), p2(-16), p2(-10), p2(-10)});
  HostTensor cand = tensor(DType::f32, {1.0 + p2(-9), 1, 1, 1,        // rel 2^-9 > 10T
                                        p2(-16) + p2(-29), p2(-16),   // abs 2^-29 > 2^-30
                                        p2(-10) + p2(-16), p2(-10)}); // abs 2^-16 > 10T*2^-8
  OutputSpec spec = output(DType::f32, regions());
};

TEST_F(Gate, PhaseTwoCountsPerRegion) {
  const auto f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  ASSERT_EQ(f.regions.size(), 3u);
  EXPECT_EQ(f.regions[0].region, "normal");
  EXPECT_EQ(f.regions[0].elements, 4);
  EXPECT_EQ(f.regions[0].errors, 1);
  EXPECT_EQ(f.regions[0].reference_errors, 0);
  EXPECT_EQ(f.regions[0].allowed, 0); // none allowed where the reference has none
  EXPECT_FALSE(f.regions[0].pass());
  EXPECT_EQ(f.regions[1].region, "small");
  EXPECT_EQ(f.regions[1].elements, 2);
  EXPECT_EQ(f.regions[1].errors, 1);
  EXPECT_EQ(f.regions[1].allowed, 2); // 2 x max(reference count, 1)
  EXPECT_TRUE(f.regions[1].pass());
  EXPECT_EQ(f.regions[2].region, "cancellation");
  EXPECT_EQ(f.regions[2].elements, 2);
  EXPECT_EQ(f.regions[2].errors, 1);
  EXPECT_EQ(f.regions[2].allowed, 2);
  EXPECT_EQ(f.mismatches, 3);
  EXPECT_EQ(f.log_error_ratio, 12.0);
  EXPECT_NE(f.message.find("phase 2: normal region 1 error (reference 0, allowed 0)"),
            std::string::npos)
      << f.message;
  // MARE is element 6: 2^-16 / (2^-10 + 1e-7).
  EXPECT_DOUBLE_EQ(f.bound.max_error, p2(-16) / (p2(-10) + 1e-7));
}

TEST_F(Gate, AReferenceErrorAllowsTwiceItsCount) {
  ref.set(1, 1.0 + p2(-9));
  const auto f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  ASSERT_EQ(f.regions.size(), 3u);
  EXPECT_EQ(f.regions[0].reference_errors, 1);
  EXPECT_EQ(f.regions[0].allowed, 2);
  EXPECT_DOUBLE_EQ(f.log_error_ratio, std::log10(0.5));
  EXPECT_NE(f.message.find("phase 2 passes: errors normal 1, small 1, cancellation 1"),
            std::string::npos)
      << f.message;
}

TEST_F(Gate, ThreeSmallValueErrorsAgainstNoneFail) {
  golden = tensor(DType::f64, {p2(-16), p2(-16), p2(-16), p2(-16)});
  ref = tensor(DType::f32, {p2(-16), p2(-16), p2(-16), p2(-16)});
  // Errors of 2^-22 put MARE near 0.0156, above 10T, so phase 2 runs; both are small-value
  // errors (above 2^-30), and two are allowed against a reference with none.
  cand = tensor(DType::f32, {p2(-16) + p2(-22), p2(-16) + p2(-22), p2(-16), p2(-16)});
  auto f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  ASSERT_EQ(f.regions.size(), 3u);
  EXPECT_EQ(f.regions[1].errors, 2);
  EXPECT_EQ(f.log_error_ratio, 0.0);
  cand.set(2, p2(-16) + p2(-29));
  f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  ASSERT_EQ(f.regions.size(), 3u);
  EXPECT_EQ(f.regions[1].errors, 3);
  EXPECT_DOUBLE_EQ(f.log_error_ratio, std::log10(1.5));
}

TEST_F(Gate, AnOutputAboveTheCancellationBoundaryIsJudgedAsNormal) {
  // Element 7: g = 2^-10 but the candidate gives 2^-7, above the cancellation boundary 2^-8,
  // so it leaves the cancellation region and errs in the normal one (rel about 7).
  cand.set(7, p2(-7));
  const auto f = judge(spec, cand, &golden, &ref);
  ASSERT_EQ(f.regions.size(), 3u);
  EXPECT_EQ(f.regions[0].elements, 5);
  EXPECT_EQ(f.regions[0].errors, 2);
  EXPECT_EQ(f.regions[2].elements, 1);
  EXPECT_EQ(f.regions[2].errors, 1);
}

TEST_F(Gate, NeedsAReference) {
  EXPECT_THROW(judge(spec, cand, &golden, nullptr), SpecError);
}

TEST(Regions, HollowSoftmaxZerosPassBf16AndF16ButFailF32) {
  // numerics.md: the CANN gate accepts zeros for the tiny softmax in bf16 and fp16 (every
  // element is small-value and |0 - g| < 2^-16); fp32 rejects.
  const std::int64_t n = 512;
  for (DType t : {DType::bf16, DType::f16, DType::f32}) {
    HostTensor golden(DType::f64, {n}), ref(t, {n});
    for (std::int64_t i = 0; i < n; ++i) {
      const double v = 1.48e-6 + 2.54e-6 * static_cast<double>(i % 97) / 96.0;
      golden.set(i, v);
      ref.set(i, v);
    }
    const HostTensor zeros(t, {n});
    const auto f = judge(output(t, regions()), zeros, &golden, &ref);
    ASSERT_EQ(f.regions.size(), 3u) << dtype_name(t);
    EXPECT_EQ(f.regions[1].elements, n) << dtype_name(t);
    if (t == DType::f32) {
      EXPECT_EQ(f.reason, Reason::mismatch);
      EXPECT_EQ(f.regions[1].errors, n);
    } else {
      EXPECT_EQ(f.reason, Reason::none) << dtype_name(t);
      EXPECT_EQ(f.regions[1].errors, 0);
    }
    // relative rejects zeros at every precision.
    EXPECT_EQ(judge(output(t, relative()), zeros, &golden, &ref).reason, Reason::mismatch)
        << dtype_name(t);
  }
}

// ------------------------------------------------------------------------------------ metrics

TEST(Metric, RelL2) {
  const auto golden = tensor(DType::f64, {3.0, 4.0});
  const auto cand = tensor(DType::f32, {3.0, 4.5});
  auto f = judge(output(DType::f32, metric("rel_l2", 0.1)), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_DOUBLE_EQ(f.bound.max_error, 0.1);
  EXPECT_EQ(f.bound.policy, "rel_l2(0.1)");
  EXPECT_EQ(f.message, "rel_l2 0.1 <= 0.1");
  f = judge(output(DType::f32, metric("rel_l2", 0.0999)), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.message, "rel_l2 0.1 above 0.0999");
  // A zero golden: only an exact zero passes.
  const auto zero = tensor(DType::f64, {0.0, 0.0});
  EXPECT_EQ(judge(output(DType::f32, metric("rel_l2", 0.5)), tensor(DType::f32, {0.0, 0.0}), &zero,
                  nullptr)
                .reason,
            Reason::none);
  EXPECT_EQ(judge(output(DType::f32, metric("rel_l2", 0.5)), tensor(DType::f32, {0.0, 1e-30}),
                  &zero, nullptr)
                .reason,
            Reason::mismatch);
}

TEST(Metric, Cosine) {
  const auto golden = tensor(DType::f64, {1.0, 2.0, -3.0});
  auto f = judge(output(DType::f32, metric("cosine", 0.999999)),
                 tensor(DType::f32, {2.0, 4.0, -6.0}), &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_DOUBLE_EQ(f.bound.max_error, 1.0);
  const auto g2 = tensor(DType::f64, {1.0, 0.0});
  f = judge(output(DType::f32, metric("cosine", 0.5)), tensor(DType::f32, {0.0, 1.0}), &g2,
            nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.bound.max_error, 0.0);
  // A zero output against a non-zero golden points nowhere: cosine 0.
  f = judge(output(DType::f32, metric("cosine", 0.5)), tensor(DType::f32, {0.0, 0.0}), &g2,
            nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
}

TEST(Metric, TopkAgreementAlongTheLastAxis) {
  const auto golden = tensor(DType::f64, {4, 4},
                             {1, 4, 3, 2, /**/ 5, 1, 2, 6, /**/ 0, 1, 2, 3,
                              /**/ 9, 1, 8, 0});
  // Row 0 identical; row 1 swaps the top set ({0, 3} -> {2, 3}); row 2 reorders inside it
  // (agrees: sets, not order); row 3 keeps the top element but not the second ({0, 2} ->
  // {0, 1}).
  const auto cand = tensor(DType::f32, {4, 4},
                           {1, 4, 3, 2, /**/ 5, 1, 7, 6, /**/ 0, 1, 3, 2,
                            /**/ 9, 8, 1, 0});
  auto f = judge(output(DType::f32, metric("topk", 0.5, 2)), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_error, 0.5);
  EXPECT_EQ(f.bound.policy, "topk(2, 0.5)");
  EXPECT_EQ(f.log_error_ratio, 0.0);
  f = judge(output(DType::f32, metric("topk", 0.6, 2)), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.message, "top-2 agreement 0.5 (2 of 4 rows) below 0.6");
  // Top-1 agrees in rows 0 and 3 only.
  f = judge(output(DType::f32, metric("topk", 0.5, 1)), cand, &golden, nullptr);
  EXPECT_EQ(f.bound.max_error, 0.5);
  EXPECT_THROW(judge(output(DType::f32, metric("topk", 0.7, 5)), cand, &golden, nullptr),
               SpecError);
  EXPECT_THROW(judge(output(DType::f32, metric("topk", 0.7, 0)), cand, &golden, nullptr),
               SpecError);
}

TEST(Metric, TopkTiesGoToTheLowerIndexAndExcusedRowsAreLeftOut) {
  // Golden row 0 ties at 2: top-1 is index 0. Row 1 has a NaN in the golden (exempt): no
  // defined top-k, so the row is not counted.
  const auto golden = tensor(DType::f64, {2, 3}, {2, 2, 1, /**/ kNaN, 1, 2});
  const auto cand = tensor(DType::f32, {2, 3}, {2, 2, 1, /**/ 5, 1, 2});
  auto f = judge(output(DType::f32, metric("topk", 1.0, 1)), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.message, "top-1 agreement 1 (1 of 1 rows) >= 1 (1 element excused by the NaN rule)");
  EXPECT_EQ(f.excused, 1);
}

TEST(Metric, TheApproximateTierNeedsAMetric) {
  const auto golden = tensor(DType::f64, {1.0});
  const auto ref = tensor(DType::f32, {1.0});
  EXPECT_THROW(
      judge(output(DType::f32, relative()), ref, &golden, &ref, {.tier = Tier::approximate}),
      SpecError);
  EXPECT_EQ(judge(output(DType::f32, metric("cosine", 0.9)), ref, &golden, &ref,
                  {.tier = Tier::approximate})
                .reason,
            Reason::none);
  EXPECT_THROW(judge(output(DType::f32, metric("psnr", 30)), ref, &golden, &ref), SpecError);
}

TEST(Metric, NonFiniteRulesStillComeFirst) {
  const auto golden = tensor(DType::f64, {1.0, 2.0});
  const auto cand = tensor(DType::f32, {kNaN, 2.0});
  EXPECT_EQ(judge(output(DType::f32, metric("cosine", 0.0)), cand, &golden, nullptr).reason,
            Reason::nonfinite);
}

// ------------------------------------------------------------------------------------ integers

TEST(Integer, ExactAgainstTheReference) {
  const auto ref = tensor(DType::i32, {1, 2, 3});
  auto spec = output(DType::i32, relative()); // the float policy does not apply
  auto f = judge(spec, tensor(DType::i32, {1, 2, 3}), nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.policy, "exact (integer)");
  f = judge(spec, tensor(DType::i32, {1, 3, 3}), nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  ASSERT_FALSE(f.first.empty());
  EXPECT_EQ(f.first[0].error, 1.0);
  EXPECT_EQ(f.message, "1 of 3 elements (33.3%) beyond the bound; worst at [1]: 3 vs 2");
}

TEST(Integer, OffByOneTies) {
  const auto ref = tensor(DType::i32, {1, 2, 3});
  auto spec = output(DType::i32, relative());
  spec.ties = "off_by_one";
  auto f = judge(spec, tensor(DType::i32, {0, 3, 3}), nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.log_error_ratio, 0.0);
  f = judge(spec, tensor(DType::i32, {1, 4, 3}), nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  ASSERT_FALSE(f.first.empty());
  EXPECT_EQ(f.first[0].allowed, 1.0);
  spec.ties = "nearest";
  EXPECT_THROW(judge(spec, ref, nullptr, &ref), SpecError);
}

TEST(Integer, I64BeyondTwoToThe53IsComparedExactly) {
  HostTensor ref(DType::i64, {1}), cand(DType::i64, {1});
  ref.data<std::int64_t>()[0] = (std::int64_t{1} << 60) + 1;
  cand.data<std::int64_t>()[0] = std::int64_t{1} << 60;
  const auto f = judge(output(DType::i64, exact()), cand, nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  ASSERT_FALSE(f.first.empty());
  EXPECT_EQ(f.first[0].error, 1.0);
}

TEST(Integer, AgainstTheRoundedGoldenWithoutAReference) {
  const auto golden = tensor(DType::f64, {2.6, -1.4, kNaN});
  auto f = judge(output(DType::i32, exact()), tensor(DType::i32, {3, -1, 7}), &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.expected, "golden");
  EXPECT_EQ(f.excused, 1);
  f = judge(output(DType::i32, exact()), tensor(DType::i32, {3, -1, 7}), &golden, nullptr,
            {.nan = NanRule::propagate});
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_THROW(judge(output(DType::i32, exact()), tensor(DType::i32, {3, -1, 7}), nullptr, nullptr),
               SpecError);
}

TEST(Integer, StatisticsUseOneAsTheUnit) {
  const auto ref = tensor(DType::i16, {10, 0, 5, 5});
  auto spec = output(DType::i16, exact());
  const auto f = judge(spec, tensor(DType::i16, {12, 1, 5, 5}), nullptr, &ref);
  EXPECT_EQ(f.stats.abs.max, 2.0);
  EXPECT_EQ(f.stats.rel.max, 1.0); // 1 / max(|0|, 1)
  EXPECT_EQ(f.stats.rel.p99, 1.0);
  EXPECT_EQ(f.stats.rel.p50, 0.0);
  EXPECT_EQ(f.stats.ulp.max, 2.0);
  ASSERT_TRUE(f.worst.has_value());
  EXPECT_EQ(f.worst->flat, 0);
}

TEST(Integer, IntegerOutputsOfAnApproximateProblemNeedNoMetric) {
  const auto ref = tensor(DType::i64, {4, 2});
  const auto f =
      judge(output(DType::i64, relative()), ref, nullptr, &ref, {.tier = Tier::approximate});
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.message, "2 elements equal to the reference");
}

TEST(Integer, Bool) {
  const auto ref = tensor(DType::boolean, {1, 0});
  EXPECT_EQ(
      judge(output(DType::boolean, exact()), tensor(DType::boolean, {1, 0}), nullptr, &ref).reason,
      Reason::none);
  EXPECT_EQ(
      judge(output(DType::boolean, exact()), tensor(DType::boolean, {1, 1}), nullptr, &ref).reason,
      Reason::mismatch);
}

} // namespace
} // namespace kj
