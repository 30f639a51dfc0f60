// The strong oracle's sanity rule on hand-made observations (where the forced-fail mutant, every
// output NaN, can show; that kill_reason then kills it) and the pool's witnesses replaying.
#include <gtest/gtest.h>

#include <filesystem>

#include "judge/host/host_backend.hpp"
#include "kjudge/judge.hpp"
#include "mutate/campaign_internal.hpp"

namespace kj::mutate::detail {
namespace {

namespace fs = std::filesystem;

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

// A mutation campaign's witnesses outside the check's plan (the KernelBench-style seeds, the
// mean offset, all-negative values) replay with --case, one case each, on the kept inputs.
TEST(Witnesses, EveryOneReplaysWithCase) {
  const Problem p = load_problem(fs::path(KJ_SOURCE_DIR) / "problems/relu");
  const Candidate c = load_candidate(fs::path(KJ_SOURCE_DIR) / "problems/relu/solutions/basic.cu", p);
  CaseOptions small;
  small.include_hidden = false;
  std::string budget;
  const CasePlan plan = judge::host_case_plan(p, small, budget);
  const std::vector<Case> witnesses = witness_cases(p, plan, 5);
  std::vector<std::string> labels;
  for (const Case& w : witnesses) labels.push_back(w.id.substr(9));
  EXPECT_EQ(labels, (std::vector<std::string>{"host0:0:id", "host0:1:id", "host0:2:id",
                                              "host0:3:id", "host0:4:id", "host0:0:x+10",
                                              "host0:0:x-8"}));
  // The pool: the default cases, then the witnesses they lack; a witness the problem adopted
  // is a default case, held once.
  const ProblemPool pool = make_pool(p, builtin_checkers());
  EXPECT_EQ(pool.defaults, plan.cases.size());
  EXPECT_EQ(pool.cases[pool.defaults].id.substr(9), "host0:1:id");
  Problem adopted = p;
  adopted.adopted_cases = {AdoptedCase{0, "x", 1, witnesses[6].transform.offset, {}}};
  const ProblemPool with = make_pool(adopted, builtin_checkers());
  EXPECT_EQ(with.defaults, pool.defaults + 1);
  EXPECT_EQ(with.cases.size(), pool.cases.size());
  EXPECT_EQ(with.cases[with.defaults - 1].id.substr(9), "host0:0:x-8");
  for (const Case& w : {witnesses[4], witnesses[6]}) {
    CheckOptions o;
    o.backend = Backend::host;
    o.self_exe = KJ_KJUDGE_EXE;
    o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
    o.cache_dir = fs::temp_directory_path() / "kjudge_witness_test_cache";
    o.only_case = w.id;
    const Verdict v = check(p, c, o);
    EXPECT_EQ(v.outcome, Outcome::pass) << w.id << ": " << v.message;
    ASSERT_EQ(v.cases.size(), 1u) << w.id;
    EXPECT_EQ(v.cases[0].case_id, w.id);
  }
}

} // namespace
} // namespace kj::mutate::detail
