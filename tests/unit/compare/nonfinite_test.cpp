// The non-finite rules that run before every policy (docs/design.md "Comparison"): against the
// golden rounded to the output dtype, ±Inf must match in position and sign, a non-finite value
// where the rounded golden is finite fails as `nonfinite`, NaN positions follow the problem's
// rule, and a NaN is never a wildcard.
#include <gtest/gtest.h>

#include "unit/compare/helpers.hpp"

namespace kj {
namespace {

using namespace kj::test;

// A loose allclose against the golden, so that only the non-finite rules can fail a case.
OutputSpec loose() {
  return output(DType::f32, allclose(0.0, 1e30, Expected::golden));
}

TEST(NonFinite, MatchingInfinitiesPassAndStayOutOfTheStatistics) {
  const auto golden = tensor(DType::f64, {kInf, 1.0, -kInf});
  const auto cand = tensor(DType::f32, {kInf, 1.0, -kInf});
  const auto f = judge(output(DType::f32, relative()), cand, &golden, &cand);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.mismatches, 0);
  EXPECT_EQ(f.count, 3);
  EXPECT_EQ(f.stats.abs.max, 0.0);
  EXPECT_EQ(f.bound.max_error, 0.0);
}

TEST(NonFinite, InfinityOfTheWrongSignFailsAsNonfinite) {
  const auto golden = tensor(DType::f64, {kInf, 1.0, -kInf});
  const auto cand = tensor(DType::f32, {-kInf, 1.0, -kInf});
  const auto f = judge(loose(), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  EXPECT_EQ(f.mismatches, 1);
  EXPECT_EQ(f.nonfinite, 1);
  ASSERT_EQ(f.first.size(), 1u);
  EXPECT_EQ(f.first[0].flat, 0);
  EXPECT_EQ(f.first[0].value, -kInf);
  EXPECT_EQ(f.first[0].expected, kInf);
  EXPECT_EQ(f.log_error_ratio, 12.0);
}

TEST(NonFinite, FiniteWhereTheGoldenIsInfiniteIsAMismatch) {
  const auto golden = tensor(DType::f64, {kInf, 1.0, -kInf});
  const auto cand = tensor(DType::f32, {3.0e38, 1.0, -kInf});
  const auto f = judge(loose(), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  EXPECT_EQ(f.nonfinite, 0);
  ASSERT_EQ(f.first.size(), 1u);
  EXPECT_EQ(f.first[0].flat, 0);
  EXPECT_TRUE(std::isnan(f.first[0].allowed));
  EXPECT_EQ(f.message,
            "1 finite value where the rounded golden is not finite; first at [0]: 3e+38 vs inf");
}

TEST(NonFinite, TheGoldenIsRoundedToTheOutputDtypeFirst) {
  // 1e39 is finite in f64 and overflows f32: the rounded golden is +Inf.
  const auto golden = tensor(DType::f64, {1e39, -1e39, 2.0});
  const auto inf_cand = tensor(DType::f32, {kInf, -kInf, 2.0});
  EXPECT_EQ(judge(loose(), inf_cand, &golden, nullptr).reason, Reason::none);
  const double fmax = static_cast<double>(std::numeric_limits<float>::max());
  const auto max_cand = tensor(DType::f32, {fmax, -kInf, 2.0});
  const auto f = judge(loose(), max_cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
}

TEST(NonFinite, NanWhereTheGoldenIsFiniteFailsUnderEveryRule) {
  const auto golden = tensor(DType::f64, {1.0, 2.0});
  const auto cand = tensor(DType::f32, {kNaN, 2.0});
  for (NanRule rule : {NanRule::exempt, NanRule::propagate, NanRule::ignore}) {
    const auto f = judge(loose(), cand, &golden, nullptr, {.nan = rule});
    EXPECT_EQ(f.reason, Reason::nonfinite) << nan_rule_name(rule);
    EXPECT_EQ(f.nonfinite, 1);
    EXPECT_EQ(f.excused, 0);
  }
}

TEST(NonFinite, IgnoreWithNanInTheInputsAcceptsACandidateNanAnywhere) {
  const auto golden = tensor(DType::f64, {1.0, 2.0, kInf});
  const auto cand = tensor(DType::f32, {kNaN, 2.0, kNaN});
  const auto f =
      judge(loose(), cand, &golden, nullptr, {.nan = NanRule::ignore, .nan_in_inputs = true});
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.excused, 2);
  EXPECT_EQ(f.mismatches, 0);
  // Only under `ignore`: `exempt` with a planted NaN still fails.
  const auto g =
      judge(loose(), cand, &golden, nullptr, {.nan = NanRule::exempt, .nan_in_inputs = true});
  EXPECT_EQ(g.reason, Reason::nonfinite);
  EXPECT_EQ(g.nonfinite, 2);
}

TEST(NonFinite, IgnoreExcusesNanButNeverInfinity) {
  const auto golden = tensor(DType::f64, {1.0, 2.0});
  const auto cand = tensor(DType::f32, {kInf, 2.0});
  const auto f =
      judge(loose(), cand, &golden, nullptr, {.nan = NanRule::ignore, .nan_in_inputs = true});
  EXPECT_EQ(f.reason, Reason::nonfinite);
}

TEST(NonFinite, ExemptLetsAnythingStandWhereTheGoldenIsNan) {
  const auto golden = tensor(DType::f64, {kNaN, kNaN, kNaN, 1.0});
  const auto cand = tensor(DType::f32, {5.0, kInf, kNaN, 1.0});
  for (NanRule rule : {NanRule::exempt, NanRule::ignore}) {
    const auto f = judge(loose(), cand, &golden, nullptr, {.nan = rule});
    EXPECT_EQ(f.reason, Reason::none) << nan_rule_name(rule);
    EXPECT_EQ(f.excused, 3);
    EXPECT_EQ(f.mismatches, 0);
    EXPECT_EQ(f.message, "4 elements within allclose(rtol=0, atol=1e+30) (3 elements excused by "
                         "the NaN rule)");
  }
}

TEST(NonFinite, PropagateDemandsNanExactlyWhereTheGoldenIsNan) {
  const auto golden = tensor(DType::f64, {kNaN, 1.0});
  const auto ok = tensor(DType::f32, {kNaN, 1.0});
  EXPECT_EQ(judge(loose(), ok, &golden, nullptr, {.nan = NanRule::propagate}).reason, Reason::none);
  const auto finite = tensor(DType::f32, {5.0, 1.0});
  const auto f = judge(loose(), finite, &golden, nullptr, {.nan = NanRule::propagate});
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  const auto inf = tensor(DType::f32, {kInf, 1.0});
  EXPECT_EQ(judge(loose(), inf, &golden, nullptr, {.nan = NanRule::propagate}).reason,
            Reason::nonfinite);
}

TEST(NonFinite, NanIsNeverAWildcardInTheExpectedTensor) {
  // The pygpubench exploit: NaN in the tensor compared against must not match anything. Here
  // the reference (what allclose compares against) holds a NaN the golden does not.
  const auto golden = tensor(DType::f64, {1.0, 2.0});
  const auto ref = tensor(DType::f32, {kNaN, 2.0});
  const auto finite = tensor(DType::f32, {1.0, 2.0});
  const auto spec = output(DType::f32, allclose(1e-3, 1e-3, Expected::reference));
  auto f = judge(spec, finite, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  // Copying the NaN does not help either.
  const auto copy = tensor(DType::f32, {kNaN, 2.0});
  f = judge(spec, copy, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  // Nor under exact.
  EXPECT_EQ(judge(output(DType::f32, exact()), finite, &golden, &ref).reason, Reason::mismatch);
}

TEST(NonFinite, OverflowsOfThePrecisionAreExcusedOnlyInExtremeInputCases) {
  // A row sum of dtype-max inputs: the golden (f64) is finite, the f32 reference overflows to
  // Inf (element 0) or turns it into NaN (element 1), and so does the candidate.
  const auto golden = tensor(DType::f64, {10.5, 2e38, 3.0});
  const auto ref = tensor(DType::f32, {kNaN, kInf, 3.0});
  const auto cand = tensor(DType::f32, {kNaN, kNaN, 3.0});
  const auto spec = output(DType::f32, relative());
  CompareInputs in;
  in.spec = &spec;
  in.actual = &cand;
  in.golden = &golden;
  in.reference = &ref;
  in.extreme_in_inputs = true;
  OutputFinding f = compare_output(in);
  EXPECT_EQ(f.reason, Reason::none) << f.message;
  EXPECT_EQ(f.overflows_excused, 2);
  EXPECT_NE(f.message.find("precision overflows"), std::string::npos) << f.message;
  // A golden that rounds to -Inf: an f32 sum in some order overflows to +Inf first, or meets
  // both Infs and gives NaN; either is the same overflow. A finite value there is not.
  const auto golden_inf = tensor(DType::f64, {-1e39, -1e39, -1e39, -1e39});
  const auto ref_inf = tensor(DType::f32, {kInf, -kInf, -kInf, -kInf});
  const auto cand_inf = tensor(DType::f32, {kInf, kNaN, -kInf, 1.0});
  in.golden = &golden_inf;
  in.reference = &ref_inf;
  in.actual = &cand_inf;
  f = compare_output(in);
  EXPECT_EQ(f.reason, Reason::mismatch) << f.message; // element 3: finite where -Inf is due
  EXPECT_EQ(f.overflows_excused, 2);
  EXPECT_EQ(f.nonfinite, 0);
  EXPECT_EQ(f.mismatches, 1);
  // An Inf input passed through (relu(+Inf)) is no overflow: its sign is still judged.
  const auto golden_passed = tensor(DType::f64, {kInf, kInf});
  const auto ref_passed = tensor(DType::f32, {kInf, kInf});
  const auto cand_passed = tensor(DType::f32, {-kInf, kNaN});
  in.golden = &golden_passed;
  in.reference = &ref_passed;
  in.actual = &cand_passed;
  f = compare_output(in);
  EXPECT_EQ(f.reason, Reason::nonfinite) << f.message;
  EXPECT_EQ(f.nonfinite, 2);
  EXPECT_EQ(f.overflows_excused, 0);
  in.golden = &golden;
  in.reference = &ref;
  // Where the reference stays finite the rule does not reach: a NaN there still fails.
  const auto worse = tensor(DType::f32, {kNaN, kNaN, kNaN});
  in.actual = &worse;
  f = compare_output(in);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  EXPECT_EQ(f.nonfinite, 1);
  // Outside a dtype-max or infinity case a non-finite reference excuses nothing.
  in.actual = &cand;
  in.extreme_in_inputs = false;
  f = compare_output(in);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  EXPECT_EQ(f.nonfinite, 2);
  EXPECT_EQ(f.overflows_excused, 0);
}

TEST(NonFinite, NonfiniteTakesPrecedenceOverMismatch) {
  const auto golden = tensor(DType::f64, {1.0, 1.0, 1.0, 1.0});
  const auto cand = tensor(DType::f32, {2.0, kNaN, 1.0, 3.0});
  const auto f =
      judge(output(DType::f32, allclose(0.0, 0.5, Expected::golden)), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  EXPECT_EQ(f.mismatches, 3);
  EXPECT_EQ(f.nonfinite, 1);
  ASSERT_EQ(f.first.size(), 3u);
  EXPECT_EQ(f.first[0].flat, 0);
  EXPECT_EQ(f.first[1].flat, 1);
  EXPECT_EQ(f.first[2].flat, 3);
  EXPECT_EQ(f.message,
            "1 non-finite value where the rounded golden does not allow it; first at [1]: found "
            "nan, expected 1 (the golden rounded to f32); 2 of 4 elements (50.0%) beyond the "
            "bound; worst at [3]: 3 vs 1");
  // The worst element is the non-finite one.
  ASSERT_TRUE(f.worst.has_value());
  EXPECT_EQ(f.worst->flat, 1);
}

// A NaN where the golden is 0 names its element, what was found and what was expected there; the
// bound's floor at max|golden| = 0 is said to be the smallest subnormal, not a bare "1 ulp".
TEST(NonFinite, ANanWhereTheGoldenIsZeroSaysWhereWhatAndWhatWasExpected) {
  const auto golden = tensor(DType::f64, {0.0, 0.0, 0.0, 0.0});
  const auto cand = tensor(DType::f32, {0.0, 0.0, 0.0, kNaN});
  const auto ref = tensor(DType::f32, {0.0, 0.0, 0.0, 0.0});
  const auto f = judge(output(DType::f32, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  EXPECT_EQ(f.message, "1 non-finite value where the rounded golden does not allow it; first at "
                       "[3]: found nan, expected 0 (the golden rounded to f32)");
  EXPECT_EQ(f.bound.source,
            "k=16 (f32 default) x max(max|ref-golden|=0, floor 1 ulp f32 at max|golden|=0, its "
            "smallest subnormal: 1.4e-45); rms: k x max(rms|ref-golden|=0, floor 1 ulp f32 at "
            "rms(golden)=0, its smallest subnormal: 1.4e-45)");
  // Without a golden (exact against the reference) the reference is what was expected.
  const auto g = judge(output(DType::f32, exact()), cand, nullptr, &ref);
  EXPECT_EQ(g.message, "1 non-finite value where the rounded golden does not allow it; first at "
                       "[3]: found nan, expected 0 (the reference)");
}

// When every element is non-finite the policy judged none: the bound names no golden magnitude
// (it would read max|golden|=0 for a golden of 1 and 2).
TEST(NonFinite, WhenNoElementIsJudgedTheBoundSaysSoInsteadOfAZeroGolden) {
  const auto golden = tensor(DType::f64, {1.0, 2.0});
  const auto ref = tensor(DType::f32, {1.0, 2.0});
  const auto cand = tensor(DType::f32, {kNaN, kInf});
  const auto f = judge(output(DType::f32, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  EXPECT_EQ(f.message, "2 non-finite values where the rounded golden does not allow them; first "
                       "at [0]: found nan, expected 1 (the golden rounded to f32)");
  EXPECT_EQ(f.bound.source,
            "k=16 (f32 default) x max(|ref-golden|, floor 1 ulp f32 at |golden|) over the finite "
            "elements: none of the 2 elements was judged (non-finite, or excused by the NaN rule)");
  // The ratio policy's path words the same finding the same way.
  const auto r = judge(output(DType::f32, ratio(0.5, 0.1)), cand, &golden, &ref);
  EXPECT_EQ(r.reason, Reason::nonfinite);
  EXPECT_EQ(r.message.substr(0, r.message.find(';', r.message.find("first at"))),
            "2 non-finite values where the rounded golden does not allow them; first at [0]: "
            "found nan, expected 1 (the golden rounded to f32)");
}

TEST(NonFinite, ExcusedElementsLeaveTheStatistics) {
  const auto golden = tensor(DType::f64, {kNaN, 1.0, 2.0});
  const auto ref = tensor(DType::f32, {kNaN, 1.0, 2.0});
  const auto cand = tensor(DType::f32, {1e30, 1.0, 2.0});
  const auto f = judge(output(DType::f32, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.excused, 1);
  EXPECT_EQ(f.stats.abs.max, 0.0);
  EXPECT_EQ(f.bound.max_error, 0.0);
  // The floor comes from the judged elements only: 1 ulp f32 at max|golden| = 2.
  EXPECT_EQ(f.bound.max_bound, 16 * p2(-22));
}

TEST(NonFinite, WithoutAGoldenTheReferenceStandsIn) {
  const auto ref = tensor(DType::f32, {kInf, 1.0});
  const auto cand = tensor(DType::f32, {-kInf, 1.0});
  const auto f = judge(output(DType::f32, exact()), cand, nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::nonfinite);
  const auto same = tensor(DType::f32, {kInf, 1.0});
  EXPECT_EQ(judge(output(DType::f32, exact()), same, nullptr, &ref).reason, Reason::none);
}

TEST(NonFinite, Fp8E4m3SaturatesInsteadOfOverflowing) {
  // e4m3 has no Inf: the rounded golden of 1e6 is its max (448), so a saturated 448 is right.
  const auto golden = tensor(DType::f64, {1e6, 1.0});
  const auto cand = tensor(DType::fp8e4m3, {1e6, 1.0});
  EXPECT_EQ(cand.get(0), 448.0);
  const auto f = judge(output(DType::fp8e4m3, ulp(0)), cand, &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
}

} // namespace
} // namespace kj
