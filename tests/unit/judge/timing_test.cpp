// The GPU bench's rules that need no GPU: the noise of a median (the loop's stopping rule), the
// samples dropped as throttled, the impossible_speed line, and the mandatory bytes of the floor.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "judge/cuda/timing_loop.hpp"
#include "kjudge/cases.hpp"

namespace {

using namespace kj;
using namespace kj::judge;

TEST(Timing, MedianNoiseIsTheMediansStandardErrorOverTheMedian) {
  // Quartiles 9.5 and 10.5 of 16 samples around 10: sigma = 1/1.349, se = 1.2533 sigma / 4.
  std::vector<double> samples;
  for (int k = 0; k < 16; ++k)
    samples.push_back(9 + 2.0 * k / 15);
  const SampleStats s = sample_stats(samples);
  const double expected = 1.2533 * ((s.q3 - s.q1) / 1.349) / 4 / s.median;
  EXPECT_NEAR(median_noise(s), expected, 1e-12);
  // Four times the samples, half the noise.
  std::vector<double> more;
  for (int k = 0; k < 64; ++k)
    more.push_back(9 + 2.0 * k / 63);
  EXPECT_NEAR(median_noise(sample_stats(more)) / median_noise(s), 0.5, 0.02);
  // Identical samples: no noise; too few samples or a zero median: never converged.
  EXPECT_EQ(median_noise(sample_stats({2, 2, 2, 2})), 0);
  EXPECT_EQ(median_noise(sample_stats({1, 2, 3})), std::numeric_limits<double>::infinity());
  EXPECT_EQ(median_noise(sample_stats({0, 0, 0, 0})), std::numeric_limits<double>::infinity());
}

TEST(Timing, RoundsUnderThreeQuartersOfTheRatedClockAreDropped) {
  // Three rounds of two samples on a device rated 1980 MHz: round 1 ran at 1400 MHz (71%):
  // dropped; round 2's 1490 MHz is 75.3%: kept.
  const std::vector<double> candidate = {1, 2, 30, 40, 5, 6};
  const std::vector<double> reference = {10, 20, 300, 400, 50, 60};
  const std::vector<int> round_of = {0, 0, 1, 1, 2, 2};
  const std::vector<double> clocks = {1980, 1400, 1490};
  const std::vector<double> baseline = {7, 8, 70, 80, 9, 10};
  const std::vector<double> against = {3, 4, 33, 44, 7, 8}; // an --against kernel's
  const KeptSamples kept =
      drop_throttled(candidate, reference, baseline, against, round_of, clocks, 1980);
  EXPECT_EQ(kept.throttled, 2);
  EXPECT_EQ(kept.candidate_ms, (std::vector<double>{1, 2, 5, 6}));
  EXPECT_EQ(kept.reference_ms, (std::vector<double>{10, 20, 50, 60}));
  EXPECT_EQ(kept.baseline_ms, (std::vector<double>{7, 8, 9, 10}));
  EXPECT_EQ(kept.against_ms, (std::vector<double>{3, 4, 7, 8}));
  EXPECT_EQ(kept.clock_mhz, (std::vector<double>{1980, 1980, 1490, 1490}));
  // A device that does not give its rated clock: the fastest seen stands in (1490 is 75.3% of
  // 1980 there too), and a probe faster than the rating drops nothing with it.
  EXPECT_EQ(drop_throttled(candidate, reference, {}, {}, round_of, clocks, 0).throttled, 2);
  EXPECT_EQ(
      drop_throttled(candidate, reference, {}, {}, round_of, {3000, 1980, 1980}, 1980).throttled,
      0);
  // A round whose probe failed (0 MHz) is dropped, never kept by a NaN comparison.
  const KeptSamples unknown = drop_throttled({1, 2}, {1, 2}, {}, {}, {0, 1}, {1980, 0}, 1980);
  EXPECT_TRUE(unknown.baseline_ms.empty()); // no timed baseline: none kept
  EXPECT_TRUE(unknown.against_ms.empty());  // no --against kernel: none kept
  EXPECT_EQ(unknown.throttled, 1);
}

TEST(Timing, ImpossibleSpeedIsUnderNinetyPercentOfTheFloor) {
  EXPECT_TRUE(impossible_speed(0.0899, 0.1));
  EXPECT_FALSE(impossible_speed(0.0901, 0.1));
  EXPECT_FALSE(impossible_speed(0.5, 0.1));
  EXPECT_FALSE(impossible_speed(0.001, 0)); // no floor measured: nothing to say
}

TEST(Timing, TheFloorReadsEachInputOnceAndWritesEachOutputOnce) {
  Problem p = load_problem(std::filesystem::path(KJ_SOURCE_DIR) / "problems" / "vector_add");
  const Case c = enumerate_cases(p).cases.front(); // public0: N = 16777216
  const CaseData data = case_frame(p, c);
  EXPECT_EQ(floor_bytes(p, data), 16777216.0 * 12); // x, y read, z written, 4 bytes each
  p.floor_bytes = Expr::parse("N * 8", {});
  EXPECT_EQ(floor_bytes(p, data), 16777216.0 * 8);
}

} // namespace

namespace {

TEST(Timing, TheFlopUnitIsTheFastestTheLeastPreciseFloatInputAdmits) {
  Problem p = load_problem(std::filesystem::path(KJ_SOURCE_DIR) / "problems" / "matmul");
  std::optional<FlopUnit> unit = flop_unit(p); // f32 A and B: TF32 tensor cores
  ASSERT_TRUE(unit);
  EXPECT_EQ(unit->operand, DType::f32);
  EXPECT_TRUE(unit->tf32);
  p.inputs[1].dtype = DType::bf16; // the least precise input sets the unit
  unit = flop_unit(p);
  ASSERT_TRUE(unit);
  EXPECT_EQ(unit->operand, DType::bf16);
  EXPECT_FALSE(unit->tf32);
  for (InputSpec& in : p.inputs)
    in.dtype = DType::f64;
  EXPECT_EQ(flop_unit(p)->operand, DType::f64);
  for (InputSpec& in : p.inputs)
    in.dtype = DType::i32; // no float input: no unit, so no FLOP floor
  EXPECT_FALSE(flop_unit(p));
}

} // namespace
