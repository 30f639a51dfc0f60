// The strong oracle's sanity rule on hand-made observations: where the forced-fail mutant (every
// output NaN) can show, and that kill_reason then kills it.
#include <gtest/gtest.h>

#include "mutate/campaign_internal.hpp"

namespace kj::mutate::detail {
namespace {

Observation seen(std::vector<std::int64_t> bad, std::vector<double> error) {
  Observation ob;
  ob.bad = std::move(bad);
  ob.error = std::move(error);
  return ob;
}

TEST(ForcedFail, ShowsWhereItAddsNonFiniteElementsOrMovesAnInteger) {
  // 8 finite golden elements over two runs: the solution has none non-finite, the forced 16.
  EXPECT_TRUE(forced_fail_shows(seen({0}, {1e-6}), seen({16}, {0})));
  // The solution overflows on every element whose golden is finite (an f32 loss of huge
  // logits): NaN adds nothing there, and nothing could kill it.
  EXPECT_FALSE(forced_fail_shows(seen({16}, {0}), seen({16}, {0})));
  // Every golden element NaN: neither counts anything.
  EXPECT_FALSE(forced_fail_shows(seen({0}, {0}), seen({0}, {0})));
  // An integer output off by one.
  EXPECT_TRUE(forced_fail_shows(seen({0}, {0}), seen({0}, {1})));
  // Two outputs: the second shows it.
  EXPECT_TRUE(forced_fail_shows(seen({4, 0}, {0, 0}), seen({4, 6}, {0, 0})));
}

TEST(ForcedFail, IsKilledOnAnInputWhereItShows) {
  Problem p;
  p.outputs.push_back({});
  p.outputs.back().name = "y";
  Baseline b;
  b.widen(seen({0}, {1e-6}));
  const auto why = kill_reason(seen({16}, {0}), b, p);
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "nonfinite: 16 elements of 'y' where the golden is finite");
  // A baseline the solution overflowed in cannot kill it (so the sanity rule must not ask).
  Baseline wide;
  wide.widen(seen({16}, {0}));
  EXPECT_FALSE(kill_reason(seen({16}, {0}), wide, p));
}

} // namespace
} // namespace kj::mutate::detail
