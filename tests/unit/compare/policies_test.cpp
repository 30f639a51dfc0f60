// The elementwise policies at their boundaries: allclose (torch's rule and defaults), ulp(n),
// exact (NaN payloads canonicalised, the signed-zero rule) and ratio(threshold, max_fraction).
// An error exactly at the bound passes; the next representable value above fails.
#include <gtest/gtest.h>

#include "unit/compare/helpers.hpp"

namespace kj {
namespace {

using namespace kj::test;

const double u = p2(-23); // one f32 ulp in [1, 2)

// ----------------------------------------------------------------------------------- allclose

TEST(Allclose, TorchDefaults) {
  EXPECT_EQ(torch_default_tolerances(DType::f16), (std::pair{1e-3, 1e-5}));
  EXPECT_EQ(torch_default_tolerances(DType::bf16), (std::pair{1.6e-2, 1e-5}));
  EXPECT_EQ(torch_default_tolerances(DType::f32), (std::pair{1.3e-6, 1e-5}));
  EXPECT_EQ(torch_default_tolerances(DType::f64), (std::pair{1e-7, 1e-7}));
  EXPECT_EQ(torch_default_tolerances(DType::i32), (std::pair{0.0, 0.0}));
  EXPECT_EQ(torch_default_tolerances(DType::boolean), (std::pair{0.0, 0.0}));
  // kjudge's fp8 choice: one ulp of the format, atol one subnormal step.
  EXPECT_EQ(torch_default_tolerances(DType::fp8e4m3), (std::pair{0.125, p2(-9)}));
  EXPECT_EQ(torch_default_tolerances(DType::fp8e5m2), (std::pair{0.25, p2(-16)}));
}

TEST(Allclose, AtolBoundary) {
  const auto ref = tensor(DType::f32, {1.0, 1.0});
  const auto spec = output(DType::f32, allclose(0.0, p2(-10)));
  auto cand = tensor(DType::f32, {1.0 + p2(-10), 1.0});
  auto f = judge(spec, cand, &ref, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.log_error_ratio, 0.0);
  cand.set(0, 1.0 + p2(-10) + u);
  f = judge(spec, cand, &ref, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  ASSERT_EQ(f.first.size(), 1u);
  EXPECT_EQ(f.first[0].allowed, p2(-10));
  EXPECT_EQ(f.first[0].error, p2(-10) + u);
}

TEST(Allclose, RtolBoundary) {
  // allowed = rtol * |e| = 2^-8 * 2 = 2^-7; the next f32 above 2 + 2^-7 is 2^-22 further.
  const auto ref = tensor(DType::f32, {2.0, -2.0});
  const auto spec = output(DType::f32, allclose(p2(-8), 0.0));
  auto cand = tensor(DType::f32, {2.0 + p2(-7), -2.0 - p2(-7)});
  EXPECT_EQ(judge(spec, cand, &ref, &ref).reason, Reason::none);
  cand.set(1, -2.0 - p2(-7) - p2(-22));
  const auto f = judge(spec, cand, &ref, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  ASSERT_FALSE(f.first.empty());
  EXPECT_EQ(f.first[0].flat, 1);
}

TEST(Allclose, DefaultsApplyPerDtypeAndAreReported) {
  const auto ref = tensor(DType::f32, {1.0});
  const auto spec = output(DType::f32, allclose(std::nullopt, std::nullopt));
  const auto f = judge(spec, ref, nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.policy, "allclose(rtol=1.3e-06, atol=1e-05)");
  EXPECT_EQ(f.bound.expected, "reference");
  EXPECT_EQ(f.bound.source, "rtol and atol: torch.testing default for f32; |c - e| <= atol + "
                            "rtol*|e| elementwise");
  EXPECT_TRUE(std::isnan(f.bound.max_bound));
  // 1 + 1.3e-6 + 1e-5 = 1.0000113 allowed; 1 + 95u = 1.00001132 is beyond, 1 + 94u within.
  const auto in = tensor(DType::f32, {1.0 + 94 * u});
  EXPECT_EQ(judge(spec, in, nullptr, &ref).reason, Reason::none);
  const auto out = tensor(DType::f32, {1.0 + 95 * u});
  EXPECT_EQ(judge(spec, out, nullptr, &ref).reason, Reason::mismatch);
}

TEST(Allclose, ComparesAgainstTheReferenceByDefaultOrTheRoundedGolden) {
  const auto golden = tensor(DType::f64, {1.0 + 0.25 * u}); // rounds to 1.0 in f32
  const auto ref = tensor(DType::f32, {1.25});
  const auto cand = tensor(DType::f32, {1.25});
  EXPECT_EQ(judge(output(DType::f32, allclose(0.0, 0.0, Expected::reference)), cand, &golden, &ref)
                .reason,
            Reason::none);
  EXPECT_EQ(
      judge(output(DType::f32, allclose(0.0, 0.0, Expected::golden)), cand, &golden, &ref).reason,
      Reason::mismatch);
  // Against the golden, "golden" means rounded to the output dtype: 1.0 matches exactly.
  const auto one = tensor(DType::f32, {1.0});
  const auto f =
      judge(output(DType::f32, allclose(0.0, 0.0, Expected::golden)), one, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.expected, "golden");
  // expected = "reference" without one is a spec error.
  EXPECT_THROW(judge(output(DType::f32, allclose(0.0, 0.0)), one, &golden, nullptr), SpecError);
}

TEST(Allclose, OnlyOneToleranceGivenTakesTheOtherFromTheDefaults) {
  const auto ref = tensor(DType::f16, {1.0});
  const auto f = judge(output(DType::f16, allclose(0.5, std::nullopt)), ref, nullptr, &ref);
  EXPECT_EQ(f.bound.policy, "allclose(rtol=0.5, atol=1e-05)");
  EXPECT_EQ(f.bound.source, "rtol as given, atol: torch.testing default for f16; |c - e| <= atol "
                            "+ rtol*|e| elementwise");
}

TEST(Allclose, Fp8DefaultAllowsOneUlpOfTheFormat) {
  // e4m3 at 1.0: ulp 0.125, so 1.125 passes and 1.25 fails.
  const auto ref = tensor(DType::fp8e4m3, {1.0});
  const auto spec = output(DType::fp8e4m3, allclose(std::nullopt, std::nullopt));
  EXPECT_EQ(judge(spec, tensor(DType::fp8e4m3, {1.125}), nullptr, &ref).reason, Reason::none);
  EXPECT_EQ(judge(spec, tensor(DType::fp8e4m3, {1.25}), nullptr, &ref).reason, Reason::mismatch);
  EXPECT_EQ(judge(spec, ref, nullptr, &ref).bound.source.substr(0, 34),
            "rtol and atol: kjudge's fp8e4m3 de");
}

TEST(Allclose, HollowToleranceZerosPassAllcloseButFailRelative) {
  // numerics.md: KernelBench's softmax outputs lie in [1.48e-6, 4.02e-6] and atol is 1e-2, so
  // an all-zeros kernel passes; relative scales with the signal and rejects it.
  const std::int64_t n = 1000;
  HostTensor golden(DType::f64, {n}), ref(DType::f32, {n});
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = 1.48e-6 + 2.54e-6 * static_cast<double>(i % 101) / 100.0;
    golden.set(i, v);
    ref.set(i, v);
  }
  const HostTensor zeros(DType::f32, {n});
  const auto kb = judge(output(DType::f32, allclose(1e-2, 1e-2)), zeros, &golden, &ref);
  EXPECT_EQ(kb.reason, Reason::none);
  const auto rel = judge(output(DType::f32, relative()), zeros, &golden, &ref);
  EXPECT_EQ(rel.reason, Reason::mismatch);
  EXPECT_EQ(rel.mismatches, n);
  EXPECT_DOUBLE_EQ(rel.mismatch_fraction, 1.0);
  EXPECT_EQ(rel.stats.rel.p50, 1.0); // every element 100% off
  EXPECT_GT(rel.log_error_ratio, 3.0);
}

// ---------------------------------------------------------------------------------------- ulp

TEST(Ulp, Boundary) {
  const auto golden = tensor(DType::f64, {1.0});
  const auto spec = output(DType::f32, ulp(2));
  auto f = judge(spec, tensor(DType::f32, {1.0 + 2 * u}), &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_error, 2.0);
  EXPECT_EQ(f.bound.max_bound, 2.0);
  EXPECT_EQ(f.log_error_ratio, 0.0);
  f = judge(spec, tensor(DType::f32, {1.0 + 3 * u}), &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  ASSERT_FALSE(f.first.empty());
  EXPECT_EQ(f.first[0].error, 3.0);
  EXPECT_EQ(f.first[0].allowed, 2.0);
  EXPECT_EQ(f.bound.policy, "ulp(2)");
}

TEST(Ulp, CountsRepresentableValuesAcrossABinade) {
  // Below 1 the spacing halves: 1 - 2 x 2^-24 is two values away.
  const auto golden = tensor(DType::f64, {1.0});
  const auto spec = output(DType::f32, ulp(2));
  EXPECT_EQ(judge(spec, tensor(DType::f32, {1.0 - 2 * p2(-24)}), &golden, nullptr).reason,
            Reason::none);
  EXPECT_EQ(judge(spec, tensor(DType::f32, {1.0 - 3 * p2(-24)}), &golden, nullptr).reason,
            Reason::mismatch);
}

TEST(Ulp, SignedZerosAreOneValueAndSubnormalsCountAcrossZero) {
  const auto zero = tensor(DType::f64, {0.0});
  EXPECT_EQ(judge(output(DType::f32, ulp(0)), tensor(DType::f32, {-0.0}), &zero, nullptr).reason,
            Reason::none);
  const auto tiny = tensor(DType::f64, {p2(-149)});
  const auto neg = tensor(DType::f32, {-p2(-149)});
  EXPECT_EQ(judge(output(DType::f32, ulp(1)), neg, &tiny, nullptr).reason, Reason::mismatch);
  const auto f = judge(output(DType::f32, ulp(2)), neg, &tiny, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_error, 2.0);
}

TEST(Ulp, AgainstTheGoldenRoundedToTheOutputDtype) {
  // 1 + 0.4u rounds to 1 in f32: the correctly rounded answer is 0 ulps away.
  const auto golden = tensor(DType::f64, {1.0 + 0.4 * u});
  EXPECT_EQ(judge(output(DType::f32, ulp(0)), tensor(DType::f32, {1.0}), &golden, nullptr).reason,
            Reason::none);
  // bf16: 1 + 2^-7 is one bf16 ulp above 1.
  const auto g16 = tensor(DType::f64, {1.0});
  EXPECT_EQ(judge(output(DType::bf16, ulp(0)), tensor(DType::bf16, {1.0 + p2(-7)}), &g16, nullptr)
                .bound.max_error,
            1.0);
}

// -------------------------------------------------------------------------------------- exact

TEST(Exact, BitIdenticalPassesAndOneUlpFails) {
  const auto ref = tensor(DType::f32, {1.0, 2.0, -3.5});
  const auto spec = output(DType::f32, exact());
  auto f = judge(spec, ref, nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.log_error_ratio, -12.0);
  EXPECT_EQ(f.bound.policy, "exact");
  auto cand = ref;
  cand.set(2, -3.5 - 2 * u);
  f = judge(spec, cand, nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  ASSERT_FALSE(f.first.empty());
  EXPECT_EQ(f.first[0].error, 2 * u);
  EXPECT_EQ(f.first[0].allowed, 0.0);
  EXPECT_EQ(f.log_error_ratio, 12.0);
}

TEST(Exact, SignedZeroEqualUnlessStrict) {
  const auto ref = tensor(DType::f32, {0.0, 1.0});
  const auto cand = tensor(DType::f32, {-0.0, 1.0});
  const auto spec = output(DType::f32, exact());
  EXPECT_EQ(judge(spec, cand, nullptr, &ref).reason, Reason::none);
  const auto f = judge(spec, cand, nullptr, &ref, {.signed_zero_strict = true});
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  ASSERT_FALSE(f.first.empty());
  EXPECT_EQ(f.first[0].error, 0.0);
  EXPECT_TRUE(std::signbit(f.first[0].value));
  EXPECT_EQ(f.bound.policy, "exact(signed_zero = \"strict\")");
  EXPECT_EQ(f.message, "1 of 2 elements (50.0%) beyond the bound; worst at [0]: -0 vs 0");
}

TEST(Exact, NanPayloadsAreCanonicalised) {
  HostTensor ref(DType::f32, {2}), cand(DType::f32, {2});
  set_f32_bits(ref, 0, 0x7fc00001u);  // quiet NaN with a payload
  set_f32_bits(cand, 0, 0xffa00000u); // negative NaN, another payload
  ref.set(1, 1.0);
  cand.set(1, 1.0);
  const auto spec = output(DType::f32, exact());
  for (NanRule rule : {NanRule::propagate, NanRule::exempt}) {
    const auto f = judge(spec, cand, nullptr, &ref, {.nan = rule, .signed_zero_strict = true});
    EXPECT_EQ(f.reason, Reason::none) << nan_rule_name(rule);
  }
  const auto golden = tensor(DType::f64, {kNaN, 1.0});
  EXPECT_EQ(judge(spec, cand, &golden, &ref, {.nan = NanRule::propagate}).reason, Reason::none);
}

TEST(Exact, TheExactTierOverridesTheNamedPolicy) {
  // relative would accept 1 + u against a golden of 1 + u; the exact tier wants the reference.
  const auto golden = tensor(DType::f64, {1.0 + u});
  const auto ref = tensor(DType::f32, {1.0});
  const auto cand = tensor(DType::f32, {1.0 + u});
  const auto spec = output(DType::f32, relative());
  EXPECT_EQ(judge(spec, cand, &golden, &ref).reason, Reason::none);
  const auto f = judge(spec, cand, &golden, &ref, {.tier = Tier::exact});
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.bound.policy, "exact");
  EXPECT_EQ(f.bound.expected, "reference");
}

TEST(Exact, AgainstTheRoundedGolden) {
  const auto golden = tensor(DType::f64, {0.1, 1.0 / 3.0});
  const auto cand = tensor(DType::f32, {0.1, 1.0 / 3.0}); // both rounded by set()
  EXPECT_EQ(judge(output(DType::f32, exact(Expected::golden)), cand, &golden, nullptr).reason,
            Reason::none);
}

// -------------------------------------------------------------------------------------- ratio

TEST(Ratio, ThresholdIsInclusiveAndTheFractionBoundary) {
  // Eight elements of 1.0; threshold 2^-10; at most a quarter (2) may exceed it.
  const auto golden = filled(DType::f64, {8}, 1.0);
  const auto spec = output(DType::f32, ratio(p2(-10), 0.25));
  auto cand = filled(DType::f32, {8}, 1.0);
  cand.set(0, 1.0 + p2(-10));
  cand.set(1, 1.0 - p2(-10));
  auto f = judge(spec, cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.mismatches, 0); // exactly at the threshold is not above it

  cand.set(0, 1.0 + p2(-9));
  cand.set(1, 1.0 + p2(-9));
  f = judge(spec, cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none); // 2 of 8 = 0.25, not above 0.25
  EXPECT_EQ(f.mismatches, 2);
  EXPECT_EQ(f.first.size(), 2u);
  EXPECT_EQ(f.log_error_ratio, -12.0); // the third largest error is 0
  EXPECT_EQ(f.message, "2 of 8 elements (25.0%) have relative error above 0.0009765625, within "
                       "the 2 allowed");

  cand.set(2, 1.0 + p2(-9));
  f = judge(spec, cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 3);
  EXPECT_DOUBLE_EQ(f.log_error_ratio, std::log10(2.0));
  EXPECT_EQ(f.bound.max_error, p2(-9));
  EXPECT_EQ(f.bound.max_bound, p2(-10));
  EXPECT_EQ(f.message, "3 of 8 elements (37.5%) have relative error above 0.0009765625, at most 2 "
                       "allowed; worst at [0]: 1.0019531 vs 1 (relative error 0.00195)");
}

TEST(Ratio, OneUlpAboveTheThresholdCounts) {
  const auto golden = filled(DType::f64, {2}, 1.0);
  const auto spec = output(DType::f32, ratio(p2(-10), 0.0));
  EXPECT_EQ(judge(spec, tensor(DType::f32, {1.0 + p2(-10), 1.0}), &golden, nullptr).reason,
            Reason::none);
  EXPECT_EQ(judge(spec, tensor(DType::f32, {1.0 + p2(-10) + u, 1.0}), &golden, nullptr).reason,
            Reason::mismatch);
}

TEST(Ratio, ZeroExpectedUsesTheUlpFloor) {
  // e = 0: rel = |c| / ulp(0) = 1 for the smallest subnormal; 0 where c == e.
  const auto golden = filled(DType::f64, {2}, 0.0);
  const auto spec = output(DType::f32, ratio(0.5, 0.0));
  auto f = judge(spec, tensor(DType::f32, {0.0, 0.0}), &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_error, 0.0);
  f = judge(spec, tensor(DType::f32, {p2(-149), 0.0}), &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.bound.max_error, 1.0);
}

TEST(Ratio, BadArgumentsAreSpecErrors) {
  const auto golden = filled(DType::f64, {2}, 1.0);
  const auto cand = filled(DType::f32, {2}, 1.0);
  EXPECT_THROW(judge(output(DType::f32, ratio(-1.0, 0.1)), cand, &golden, nullptr), SpecError);
  EXPECT_THROW(judge(output(DType::f32, ratio(0.1, 1.5)), cand, &golden, nullptr), SpecError);
  EXPECT_THROW(judge(output(DType::f32, allclose(-1.0, 0.0)), cand, &golden, &cand), SpecError);
  EXPECT_THROW(judge(output(DType::f32, ulp(-1.0)), cand, &golden, nullptr), SpecError);
}

} // namespace
} // namespace kj
