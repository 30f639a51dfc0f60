// relative(k) (docs/design.md "Comparison"): max and rms error against the golden, bounded by
// k times the same-precision reference's own error, floored at one ulp of the output dtype at
// the golden's scale; over the whole tensor and over every slice along the output's axis.
#include <gtest/gtest.h>

#include "unit/compare/helpers.hpp"

namespace kj {
namespace {

using namespace kj::test;

const double u = p2(-23); // one f32 ulp in [1, 2)

TEST(Relative, DefaultK) {
  EXPECT_EQ(default_relative_k(DType::f32), 16.0);
  EXPECT_EQ(default_relative_k(DType::f64), 16.0);
  EXPECT_EQ(default_relative_k(DType::f16), 4.0);
  EXPECT_EQ(default_relative_k(DType::bf16), 4.0);
  EXPECT_EQ(default_relative_k(DType::fp8e4m3), 4.0);
}

// Golden and reference all 1.5: the reference has no error, so both bounds are k x the floor,
// one f32 ulp at 1.5 = 2^-23: 16 x 2^-23 = 2^-19.
struct Flat : ::testing::Test {
  HostTensor golden = filled(DType::f64, {16}, 1.5);
  HostTensor ref = filled(DType::f32, {16}, 1.5);
  OutputSpec spec = output(DType::f32, relative());
};

TEST_F(Flat, AnErrorExactlyAtTheBoundPasses) {
  auto cand = filled(DType::f32, {16}, 1.5);
  cand.set(0, 1.5 + p2(-19)); // 16 ulps
  const auto f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_bound, p2(-19));
  EXPECT_EQ(f.bound.rms_bound, p2(-19));
  EXPECT_EQ(f.bound.max_error, p2(-19));
  EXPECT_EQ(f.bound.rms_error, p2(-21)); // sqrt(2^-38 / 16)
  EXPECT_EQ(f.bound.policy, "relative(16)");
  EXPECT_EQ(f.bound.expected, "golden");
  EXPECT_EQ(f.log_error_ratio, 0.0);
  EXPECT_EQ(f.mismatches, 0);
}

TEST_F(Flat, TheNextRepresentableValueAboveFails) {
  auto cand = filled(DType::f32, {16}, 1.5);
  cand.set(3, 1.5 + p2(-19) + u);
  const auto f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 1);
  EXPECT_DOUBLE_EQ(f.mismatch_fraction, 1.0 / 16);
  ASSERT_EQ(f.first.size(), 1u);
  EXPECT_EQ(f.first[0].flat, 3);
  EXPECT_EQ(f.first[0].index, (std::vector<std::int64_t>{3}));
  EXPECT_EQ(f.first[0].error, 17 * u); // the bound is 16 ulps
  EXPECT_EQ(f.first[0].allowed, p2(-19));
  EXPECT_EQ(f.first[0].expected, 1.5);
  EXPECT_DOUBLE_EQ(f.log_error_ratio, std::log10(17.0 / 16.0));
  EXPECT_EQ(f.message, "1 of 16 elements (6.2%) beyond the bound; worst at [3]: 1.500002 vs 1.5");
}

TEST_F(Flat, BelowTheBoundBySignAlsoCounts) {
  auto cand = filled(DType::f32, {16}, 1.5);
  cand.set(0, 1.5 - p2(-19));
  EXPECT_EQ(judge(spec, cand, &golden, &ref).reason, Reason::none);
  cand.set(0, 1.5 - p2(-19) - u);
  EXPECT_EQ(judge(spec, cand, &golden, &ref).reason, Reason::mismatch);
}

TEST_F(Flat, TheSourceSaysWhereTheBoundCameFrom) {
  const auto f = judge(spec, ref, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.source,
            "k=16 (f32 default) x max(max|ref-golden|=0, floor 1 ulp f32 at max|golden|=1.5: "
            "1.19e-07); rms: k x max(rms|ref-golden|=0, floor 1 ulp f32 at rms(golden)=1.5: "
            "1.19e-07)");
  EXPECT_EQ(f.log_error_ratio, -12.0); // no error at all: the clamp
  EXPECT_EQ(f.message, "16 elements within relative(16): max error 0 of 1.91e-06, rms 0 of "
                       "1.91e-06");
}

TEST(Relative, RmsBoundFailsWhileEveryElementIsWithinTheMaxBound) {
  // The reference is off by 16 ulps at one element: max|ref-g| = 16u, rms|ref-g| = 4u. With
  // k = 1: max bound 16u, rms bound 4u.
  const auto golden = filled(DType::f64, {16}, 1.5);
  auto ref = filled(DType::f32, {16}, 1.5);
  ref.set(0, 1.5 + 16 * u);
  const auto spec = output(DType::f32, relative(1.0));
  const auto at = filled(DType::f32, {16}, 1.5 + 4 * u);
  auto f = judge(spec, at, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_bound, 16 * u);
  EXPECT_EQ(f.bound.rms_bound, 4 * u);
  EXPECT_EQ(f.bound.rms_error, 4 * u);
  EXPECT_EQ(f.bound.source.substr(0, 12), "k=1 (given) ");

  const auto above = filled(DType::f32, {16}, 1.5 + 5 * u);
  f = judge(spec, above, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 0); // no element beyond the max bound
  EXPECT_EQ(f.bound.rms_error, 5 * u);
  EXPECT_DOUBLE_EQ(f.log_error_ratio, std::log10(1.25));
  EXPECT_EQ(f.message, "rms error 5.96e-07 beyond the bound 4.77e-07 (max error 5.96e-07 within "
                       "1.91e-06)");
}

TEST(Relative, TheReferenceErrorSetsTheBoundAboveTheFloor) {
  const auto golden = filled(DType::f64, {8}, 1.5);
  auto ref = filled(DType::f32, {8}, 1.5);
  ref.set(5, 1.5 - 3 * u);
  const auto spec = output(DType::f32, relative());
  auto cand = filled(DType::f32, {8}, 1.5);
  cand.set(2, 1.5 + 48 * u);
  auto f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.bound.max_bound, 48 * u);
  EXPECT_EQ(f.reason, Reason::none);
  cand.set(2, 1.5 + 49 * u);
  f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
}

TEST(Relative, ExplicitKAndHalfPrecisionDefaults) {
  // f16 at 1.5: ulp 2^-10; default k = 4 -> bound 2^-8.
  const auto golden = filled(DType::f64, {4}, 1.5);
  const auto ref = filled(DType::f16, {4}, 1.5);
  auto cand = filled(DType::f16, {4}, 1.5);
  cand.set(0, 1.5 + p2(-8));
  auto f = judge(output(DType::f16, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_bound, p2(-8));
  EXPECT_EQ(f.bound.policy, "relative(4)");
  cand.set(0, 1.5 + p2(-8) + p2(-10));
  EXPECT_EQ(judge(output(DType::f16, relative()), cand, &golden, &ref).reason, Reason::mismatch);
  // k = 8 admits it.
  f = judge(output(DType::f16, relative(8.0)), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_bound, p2(-7));
}

TEST(Relative, ZerosInTheGoldenUseTheSmallestSubnormalAsFloor) {
  const auto golden = filled(DType::f64, {4}, 0.0);
  const auto ref = filled(DType::f32, {4}, 0.0);
  const auto spec = output(DType::f32, relative());
  const double s = p2(-149);
  auto cand = filled(DType::f32, {4}, 0.0);
  auto f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.stats.rel.max, 0.0); // 0/0 is 0 where c == g
  EXPECT_EQ(f.bound.max_bound, 16 * s);
  cand.set(1, 16 * s);
  f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  // rel error = e / max(|g|, ulp(g)) = 16 s / s; ulp error the same; never inf.
  EXPECT_EQ(f.stats.rel.max, 16.0);
  EXPECT_EQ(f.stats.ulp.max, 16.0);
  cand.set(1, 17 * s);
  f = judge(spec, cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  // Signed zero is no error.
  auto neg = filled(DType::f32, {4}, -0.0);
  EXPECT_EQ(judge(spec, neg, &golden, &ref).reason, Reason::none);
}

TEST(Relative, FlushToZeroOfSubnormalsFails) {
  // The golden is a subnormal in f32 (2^-140, exact); a kernel under --use_fast_math flushes
  // it to 0. relative's floor is one subnormal step, so FTZ fails; allclose's atol hides it.
  const auto golden = filled(DType::f64, {4}, p2(-140));
  const auto ref = filled(DType::f32, {4}, p2(-140));
  const auto ftz = filled(DType::f32, {4}, 0.0);
  const auto f = judge(output(DType::f32, relative()), ftz, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.mismatches, 4);
  EXPECT_EQ(f.bound.max_bound, 16 * p2(-149));
  EXPECT_EQ(f.stats.ulp.max, 512.0); // 2^-140 / 2^-149
  EXPECT_EQ(
      judge(output(DType::f32, allclose(std::nullopt, std::nullopt)), ftz, &golden, &ref).reason,
      Reason::none);
}

// Rows 0-2 hold values near 1024, row 3 values near 1e-3; the candidate zeroes row 3. Over the
// whole tensor the floor is one ulp at 1031 (2^-13), so the bound 16 x 2^-13 = 2^-9 covers the
// missing row's largest value (1.875 x 2^-10); slice by slice it does not.
struct Rows : ::testing::Test {
  HostTensor golden{DType::f64, {4, 8}};
  HostTensor ref{DType::f32, {4, 8}};
  HostTensor cand{DType::f32, {4, 8}};
  void SetUp() override {
    for (std::int64_t r = 0; r < 4; ++r)
      for (std::int64_t j = 0; j < 8; ++j) {
        const double v =
            r < 3 ? 1024.0 + static_cast<double>(j) : p2(-10) * (1.0 + static_cast<double>(j) / 8);
        golden.set(r * 8 + j, v);
        ref.set(r * 8 + j, v);
        cand.set(r * 8 + j, r < 3 ? v : 0.0);
      }
  }
};

TEST_F(Rows, TheWholeTensorTestMissesAZeroedLowMagnitudeRow) {
  const auto f = judge(output(DType::f32, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.bound.max_bound, p2(-9));
  EXPECT_EQ(f.bound.max_error, p2(-10) * 1.875);
}

TEST_F(Rows, TheSliceTestCatchesIt) {
  const auto f = judge(output(DType::f32, relative(), 0), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.failed_slice_count, 1);
  ASSERT_EQ(f.failed_slices.size(), 1u);
  EXPECT_EQ(f.failed_slices[0].slice, 3);
  EXPECT_EQ(f.failed_slices[0].max_error, p2(-10) * 1.875);
  EXPECT_EQ(f.failed_slices[0].max_bound, 16 * p2(-33)); // 1 ulp f32 at 1.875 x 2^-10
  EXPECT_EQ(f.mismatches, 8);
  ASSERT_EQ(f.first.size(), 8u);
  EXPECT_EQ(f.first[0].index, (std::vector<std::int64_t>{3, 0}));
  EXPECT_EQ(f.first[7].index, (std::vector<std::int64_t>{3, 7}));
  EXPECT_EQ(f.first[0].allowed, 16 * p2(-33));
  // The whole-tensor bound is still what the bound report shows.
  EXPECT_EQ(f.bound.max_bound, p2(-9));
  EXPECT_NE(f.message.find("1 of 4 slices along axis 0 fails; worst slice 3"), std::string::npos)
      << f.message;
  EXPECT_GT(f.log_error_ratio, 0.0);
}

TEST_F(Rows, SlicingAlongTheOtherAxisDoesNotIsolateTheRow) {
  // Every column holds three values near 1024: its floor hides the zeroed entry.
  const auto f = judge(output(DType::f32, relative(), 1), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.failed_slice_count, 0);
}

TEST_F(Rows, TheCorrectOutputPassesEverySlice) {
  const auto f = judge(output(DType::f32, relative(), 0), ref, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.message, "32 elements within relative(16): max error 0 of 0.00195, rms 0 of "
                       "0.000977, and in each of 4 slices along axis 0");
}

TEST(Relative, ManyFailingSlicesReportTheTenWorst) {
  HostTensor golden(DType::f64, {12, 2}), ref(DType::f32, {12, 2}), cand(DType::f32, {12, 2});
  for (std::int64_t i = 0; i < 24; ++i) {
    golden.set(i, 1.5);
    ref.set(i, 1.5);
    // Row r is off by (r + 17) ulps in its first column: every row fails, row 11 worst.
    cand.set(i, i % 2 == 0 ? 1.5 + static_cast<double>(i / 2 + 17) * u : 1.5);
  }
  const auto f = judge(output(DType::f32, relative(), 0), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.failed_slice_count, 12);
  ASSERT_EQ(f.failed_slices.size(), 10u);
  EXPECT_EQ(f.failed_slices[0].slice, 11);
  EXPECT_EQ(f.failed_slices[9].slice, 2);
  EXPECT_EQ(f.first.size(), 10u);
  ASSERT_TRUE(f.worst.has_value());
  EXPECT_EQ(f.worst->flat, 22);
}

TEST(Relative, ANonFiniteReferenceDoesNotOpenTheBound) {
  const auto golden = filled(DType::f64, {4}, 1.5);
  auto ref = filled(DType::f32, {4}, 1.5);
  ref.set(0, kInf);
  const auto cand = filled(DType::f32, {4}, 2.5);
  const auto f = judge(output(DType::f32, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.bound.max_bound, 16 * u);
  EXPECT_NE(f.bound.source.find("1 reference value non-finite where the golden is finite"),
            std::string::npos)
      << f.bound.source;
}

TEST(Relative, NeedsAReferenceAndAGolden) {
  const auto golden = filled(DType::f64, {4}, 1.5);
  const auto ref = filled(DType::f32, {4}, 1.5);
  const auto spec = output(DType::f32, relative());
  EXPECT_THROW(judge(spec, ref, &golden, nullptr), SpecError);
  EXPECT_THROW(judge(spec, ref, nullptr, &ref), SpecError);
  try {
    judge(spec, ref, &golden, nullptr);
  } catch (const SpecError& e) {
    EXPECT_EQ(e.bare_message(),
              "output 'y': relative needs the same-precision reference, which is missing");
  }
}

TEST(Relative, SliceAxisOutOfRangeIsASpecError) {
  const auto golden = filled(DType::f64, {2, 2}, 1.5);
  const auto ref = filled(DType::f32, {2, 2}, 1.5);
  EXPECT_THROW(judge(output(DType::f32, relative(), 2), ref, &golden, &ref), SpecError);
  EXPECT_THROW(judge(output(DType::f32, relative(), -1), ref, &golden, &ref), SpecError);
}

TEST(Relative, NegativeKIsASpecError) {
  const auto golden = filled(DType::f64, {2}, 1.5);
  const auto ref = filled(DType::f32, {2}, 1.5);
  EXPECT_THROW(judge(output(DType::f32, relative(-1.0)), ref, &golden, &ref), SpecError);
}

TEST(Relative, F64OutputsWithExtremeErrorsKeepTheRmsFinite) {
  // Squares of 1e300 overflow a double; the sums are kept wider.
  const auto golden = tensor(DType::f64, {1e300, -1e300});
  const auto ref = tensor(DType::f64, {1e300, -1e300});
  const auto cand = tensor(DType::f64, {-1e300, 1e300});
  const auto f = judge(output(DType::f64, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.bound.rms_error, 2e300);
  EXPECT_EQ(f.bound.max_error, 2e300);
}

} // namespace
} // namespace kj
