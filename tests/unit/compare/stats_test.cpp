// What every finding reports whatever the policy: exact percentiles, the first mismatches with
// their multi-dimensional index, the worst element, the one-line message, log_error_ratio, and
// the spec errors for tensors that do not fit the output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "unit/compare/helpers.hpp"

namespace kj {
namespace {

using namespace kj::test;

const double u = p2(-23);

std::vector<double> shuffled_range(int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 1.0);
  std::mt19937 rng(7);
  std::shuffle(v.begin(), v.end(), rng);
  return v;
}

TEST(Percentiles, KnownData) {
  // Rank ceil(q*n) - 1 of the sorted values.
  auto p = exact_percentiles(shuffled_range(100));
  EXPECT_EQ(p.p50, 50.0);
  EXPECT_EQ(p.p99, 99.0);
  EXPECT_EQ(p.p999, 100.0);
  EXPECT_EQ(p.max, 100.0);
  p = exact_percentiles(shuffled_range(1000));
  EXPECT_EQ(p.p50, 500.0);
  EXPECT_EQ(p.p99, 990.0);
  EXPECT_EQ(p.p999, 999.0); // rank ceil(999) - 1 = 998
  EXPECT_EQ(p.max, 1000.0);
  p = exact_percentiles(shuffled_range(3));
  EXPECT_EQ(p.p50, 2.0);
  EXPECT_EQ(p.p99, 3.0);
  EXPECT_EQ(p.max, 3.0);
}

TEST(Percentiles, LargeInputsMatchSorting) {
  // Above a few thousand values the selection is by radix; it must give the sorted ranks for
  // spread values, heavy ties, negatives, Inf and NaN (counted as +Inf).
  std::mt19937_64 rng(3);
  std::normal_distribution<double> d;
  for (int kind = 0; kind < 4; ++kind) {
    std::vector<double> v(100003);
    for (double& x : v) {
      const double g = d(rng);
      x = kind == 0 ? std::fabs(g) * 1e-3
          : kind == 1 ? (g > 1.5 ? std::fabs(g) : 0.0)
          : kind == 2 ? std::ldexp(1.0 + std::floor(g * 2) / 16, static_cast<int>(g * 4))
                      : g;
    }
    if (kind == 3) v[17] = std::numeric_limits<double>::quiet_NaN(), v[99] = -HUGE_VAL;
    std::vector<double> sorted = v;
    for (double& x : sorted)
      if (std::isnan(x)) x = HUGE_VAL;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = v.size();
    const Percentiles p = exact_percentiles(v);
    EXPECT_EQ(p.p50, sorted[(n * 50 + 99) / 100 - 1]) << kind;
    EXPECT_EQ(p.p99, sorted[(n * 99 + 99) / 100 - 1]) << kind;
    EXPECT_EQ(p.p999, sorted[(n * 999 + 999) / 1000 - 1]) << kind;
    EXPECT_EQ(p.max, sorted.back()) << kind;
  }
}

TEST(Percentiles, EdgeCases) {
  auto p = exact_percentiles({});
  EXPECT_EQ(p.p50, 0.0);
  EXPECT_EQ(p.max, 0.0);
  p = exact_percentiles({4.5});
  EXPECT_EQ(p.p50, 4.5);
  EXPECT_EQ(p.p99, 4.5);
  EXPECT_EQ(p.p999, 4.5);
  EXPECT_EQ(p.max, 4.5);
  // A NaN ranks as the largest value.
  p = exact_percentiles({1.0, kNaN, 2.0});
  EXPECT_EQ(p.p50, 2.0);
  EXPECT_EQ(p.max, kInf);
}

TEST(Stats, AbsRelAndUlpPercentiles) {
  // Against a reference of 1.0 (ulp 2^-23): errors 0, 1, 2, 3 ulps.
  const auto ref = filled(DType::f32, {4}, 1.0);
  const auto cand = tensor(DType::f32, {1.0, 1.0 + u, 1.0 + 2 * u, 1.0 + 3 * u});
  const auto f = judge(output(DType::f32, allclose(0.0, 1.0)), cand, nullptr, &ref);
  EXPECT_EQ(f.stats.abs.p50, u);
  EXPECT_EQ(f.stats.abs.p99, 3 * u);
  EXPECT_EQ(f.stats.abs.max, 3 * u);
  EXPECT_EQ(f.stats.rel.p50, u);
  EXPECT_EQ(f.stats.rel.max, 3 * u);
  EXPECT_EQ(f.stats.ulp.p50, 1.0);
  EXPECT_EQ(f.stats.ulp.max, 3.0);
  EXPECT_EQ(f.bound.max_error, 3 * u);
  EXPECT_DOUBLE_EQ(f.bound.rms_error, std::sqrt(14.0 / 4) * u);
  ASSERT_TRUE(f.worst.has_value());
  EXPECT_EQ(f.worst->flat, 3);
  EXPECT_EQ(f.worst->error, 3 * u);
}

TEST(Stats, BinnedPercentilesAreTheirBinsLowerEdgesAndExactOnesOnRequest) {
  // Errors of 1.0, 1.03, 1.05 ... 1.5 (x 2^-20) against a reference of 0: the binned p50 is the
  // lower edge of the bin holding the rank (16 bins an octave: 1.0 to 1.0625 share one), the
  // exact one the value itself; max is exact either way.
  std::vector<double> errors;
  for (int k = 0; k < 100; ++k)
    errors.push_back(p2(-20) * (1.0 + 0.005 * k));
  const auto ref = filled(DType::f64, {100}, 0.0);
  const auto cand = tensor(DType::f64, errors);
  const OutputSpec spec = output(DType::f64, allclose(0.0, 1.0));
  CompareInputs in;
  in.spec = &spec;
  in.actual = &cand;
  in.reference = &ref;
  const OutputFinding binned = compare_output(in);
  EXPECT_TRUE(binned.stats.binned);
  const double rank50 = errors[49]; // rank ceil(0.5 * 100) - 1
  EXPECT_LE(binned.stats.abs.p50, rank50);
  EXPECT_GT(binned.stats.abs.p50, rank50 * (1 - 1.0 / 16));
  EXPECT_EQ(binned.stats.abs.p50, p2(-20) * (1.0 + 3.0 / 16)); // the bin [1 3/16, 1 4/16)
  EXPECT_EQ(binned.stats.abs.max, errors.back());
  in.exact_percentiles = true;
  const OutputFinding exact = compare_output(in);
  EXPECT_FALSE(exact.stats.binned);
  EXPECT_EQ(exact.stats.abs.p50, rank50);
  EXPECT_EQ(exact.stats.abs.p99, errors[98]);
  EXPECT_EQ(exact.stats.abs.max, errors.back());
  // The verdict does not depend on how the percentiles are taken.
  EXPECT_EQ(exact.message, binned.message);
  EXPECT_EQ(exact.log_error_ratio, binned.log_error_ratio);
}

TEST(Stats, PercentilesOfPassingOutputsOnlyWhenAskedAndOfFailingOnesAlways) {
  // The judge's verdict pass leaves the histograms out (CompareRules::statistics = false): a
  // passing output has no percentiles, a failing one gets them from a second pass, the same
  // values as the pass that kept the histograms from the start; nothing else changes.
  std::vector<double> g, pass_c, fail_c;
  for (int k = 0; k < 4000; ++k) {
    g.push_back(1.0 + k * 0.25);
    pass_c.push_back(g.back() * (1 + (k % 2) * u)); // one ulp at most: within every bound
    fail_c.push_back(k == 1234 ? g.back() * 2 : pass_c.back());
  }
  const auto golden = tensor(DType::f64, g);
  const auto reference = tensor(DType::f32, g);
  for (const PolicySpec& policy : {relative(), allclose(std::nullopt, std::nullopt),
                                   ratio(1e-3, 0.0)}) {
    const OutputSpec spec = output(DType::f32, policy);
    for (const auto* values : {&pass_c, &fail_c}) {
      const auto cand = tensor(DType::f32, *values);
      CompareInputs in;
      in.spec = &spec;
      in.actual = &cand;
      in.golden = &golden;
      in.reference = &reference;
      const OutputFinding with = compare_output(in);
      in.statistics = false;
      const OutputFinding without = compare_output(in);
      const bool fails = values == &fail_c;
      SCOPED_TRACE(std::string(policy_kind_name(policy.kind)) + (fails ? " failing" : " passing"));
      EXPECT_EQ(with.pass(), !fails);
      EXPECT_TRUE(with.stats.made);
      EXPECT_EQ(without.stats.made, fails);
      EXPECT_EQ(without.message, with.message);
      EXPECT_EQ(without.log_error_ratio, with.log_error_ratio);
      EXPECT_EQ(without.bound.max_error, with.bound.max_error);
      EXPECT_EQ(without.bound.rms_error, with.bound.rms_error);
      if (fails) {
        EXPECT_EQ(without.stats.abs.p50, with.stats.abs.p50);
        EXPECT_EQ(without.stats.rel.p99, with.stats.rel.p99);
        EXPECT_EQ(without.stats.ulp.p999, with.stats.ulp.p999);
        EXPECT_EQ(without.stats.abs.max, with.stats.abs.max);
        EXPECT_EQ(with.stats.abs.max, g[1234]); // 2g - g
      }
      in.exact_percentiles = true; // asks for percentiles too
      EXPECT_TRUE(compare_output(in).stats.made);
    }
  }
}

TEST(Stats, RelativeErrorNeverInfinite) {
  // f64 output, golden 0: e / ulp(0) = 1 / 4.9e-324 overflows; it saturates.
  const auto golden = tensor(DType::f64, {0.0});
  const auto f = judge(output(DType::f64, allclose(0.0, 2.0, Expected::golden)),
                       tensor(DType::f64, {1.0}), &golden, nullptr);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.stats.rel.max, std::numeric_limits<double>::max());
  EXPECT_EQ(f.stats.ulp.max, std::numeric_limits<double>::max());
}

TEST(Stats, MessageNamesCountFractionAndWorstIndex) {
  HostTensor ref(DType::f32, {64, 64});
  for (std::int64_t i = 0; i < ref.numel(); ++i)
    ref.set(i, 1.0);
  ref.set(2 * 64 + 17, 1.25);
  auto cand = ref;
  cand.set(0 * 64 + 5, 1.02);
  cand.set(2 * 64 + 17, 1.5); // the worst: 0.25 off
  cand.set(40 * 64 + 1, 0.98);
  const auto f = judge(output(DType::f32, allclose(0.0, 0.01)), cand, nullptr, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.count, 4096);
  EXPECT_EQ(f.mismatches, 3);
  EXPECT_DOUBLE_EQ(f.mismatch_fraction, 3.0 / 4096);
  EXPECT_EQ(f.message,
            "3 of 4096 elements (0.073%) beyond the bound; worst at [2, 17]: 1.5 vs 1.25");
  ASSERT_EQ(f.first.size(), 3u);
  EXPECT_EQ(f.first[0].index, (std::vector<std::int64_t>{0, 5}));
  EXPECT_EQ(f.first[1].index, (std::vector<std::int64_t>{2, 17}));
  EXPECT_EQ(f.first[2].index, (std::vector<std::int64_t>{40, 1}));
  EXPECT_EQ(f.first[1].value, 1.5);
  EXPECT_EQ(f.first[1].expected, 1.25);
  EXPECT_EQ(f.first[1].error, 0.25);
  EXPECT_EQ(f.first[1].allowed, 0.01);
  ASSERT_TRUE(f.worst.has_value());
  EXPECT_EQ(f.worst->flat, 2 * 64 + 17);
  EXPECT_DOUBLE_EQ(f.log_error_ratio, std::log10(25.0));
}

TEST(Stats, AtMostTenFirstMismatchesInFlatOrder) {
  HostTensor ref(DType::f32, {3, 2, 4});
  auto cand = ref;
  for (std::int64_t i = 1; i < 24; i += 2)
    cand.set(i, 1.0); // 12 mismatches
  const auto f = judge(output(DType::f32, exact()), cand, nullptr, &ref);
  EXPECT_EQ(f.mismatches, 12);
  ASSERT_EQ(f.first.size(), 10u);
  for (std::size_t j = 0; j < 10; ++j)
    EXPECT_EQ(f.first[j].flat, static_cast<std::int64_t>(2 * j + 1));
  EXPECT_EQ(f.first[0].index, (std::vector<std::int64_t>{0, 0, 1}));
  EXPECT_EQ(f.first[9].index, (std::vector<std::int64_t>{2, 0, 3})); // flat 19
}

TEST(Stats, LogErrorRatioIsZeroAtTheBoundAndClamped) {
  const auto ref = tensor(DType::f32, {1.0});
  auto f = judge(output(DType::f32, allclose(0.0, 0.5)), tensor(DType::f32, {1.5}), nullptr, &ref);
  EXPECT_EQ(f.log_error_ratio, 0.0);
  EXPECT_TRUE(f.pass());
  f = judge(output(DType::f32, allclose(0.0, 0.5)), tensor(DType::f32, {1.0}), nullptr, &ref);
  EXPECT_EQ(f.log_error_ratio, -12.0);
  f = judge(output(DType::f32, allclose(0.0, 0.5)), tensor(DType::f32, {1.05}), nullptr, &ref);
  EXPECT_NEAR(f.log_error_ratio, std::log10(0.05 / 0.5), 1e-6);
  f = judge(output(DType::f32, allclose(0.0, 0.0)), tensor(DType::f32, {1.5}), nullptr, &ref);
  EXPECT_EQ(f.log_error_ratio, 12.0); // an error where none is allowed
  EXPECT_FALSE(f.pass());
}

TEST(Stats, EmptyOutputPasses) {
  const HostTensor ref(DType::f32, {0, 4});
  const HostTensor golden(DType::f64, {0, 4});
  const auto f = judge(output(DType::f32, relative(), 0), ref, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::none);
  EXPECT_EQ(f.count, 0);
  EXPECT_FALSE(f.worst.has_value());
  EXPECT_EQ(f.mismatch_fraction, 0.0);
}

TEST(Stats, ScalarOutput) {
  const HostTensor golden = tensor(DType::f64, Shape{}, {2.0});
  const HostTensor ref = tensor(DType::f32, Shape{}, {2.0});
  const HostTensor cand = tensor(DType::f32, Shape{}, {3.0});
  const auto f = judge(output(DType::f32, relative()), cand, &golden, &ref);
  EXPECT_EQ(f.reason, Reason::mismatch);
  EXPECT_EQ(f.message, "1 of 1 elements (100.0%) beyond the bound; worst at []: 3 vs 2");
}

TEST(SpecErrors, TensorsThatDoNotFitTheOutput) {
  const auto spec = output(DType::f32, relative());
  const auto golden = filled(DType::f64, {4}, 1.0);
  const auto ref = filled(DType::f32, {4}, 1.0);
  const auto short_ref = filled(DType::f32, {3}, 1.0);
  const auto f16_cand = filled(DType::f16, {4}, 1.0);
  const auto wide_golden = filled(DType::f64, {2, 2}, 1.0);
  EXPECT_THROW(judge(spec, f16_cand, &golden, &ref), SpecError);
  EXPECT_THROW(judge(spec, ref, &golden, &short_ref), SpecError);
  EXPECT_THROW(judge(spec, ref, &wide_golden, &ref), SpecError);
  const auto f16_ref = filled(DType::f16, {4}, 1.0);
  EXPECT_THROW(judge(spec, ref, &golden, &f16_ref), SpecError);
  CompareInputs in;
  in.spec = &spec;
  in.golden = &golden;
  in.reference = &ref;
  EXPECT_THROW(compare_output(in), SpecError); // no candidate tensor
  try {
    judge(spec, ref, &golden, &short_ref);
  } catch (const SpecError& e) {
    EXPECT_EQ(e.bare_message(),
              "output 'y': the reference has shape [3] but the candidate output has [4]");
  }
  // A float output with nothing to compare against.
  EXPECT_THROW(judge(output(DType::f32, exact()), ref, nullptr, nullptr), SpecError);
  // No spec at all is kjudge's own bug.
  CompareInputs none;
  EXPECT_THROW(compare_output(none), InternalError);
}

} // namespace
} // namespace kj
