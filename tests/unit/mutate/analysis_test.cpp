// The analysis of a finished mutation campaign (src/mutate/analysis.cpp), value for value on
// small hand-made campaigns: the bootstrap interval at its edges and in between (and that it is
// the same every run), the escape rates per category with what must stay out of them (mutants
// nothing killed, control mutants, missing verdicts), the controls' false rejections, and the
// greedy set cover: its picks and tie rule, the per-problem suites, random suites' bounds, and
// the held-out figures, including NaN where they cannot be scored.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/mutate.hpp"

namespace kj::mutate {
namespace {

MutantResult result(const std::string& id, const std::string& problem, Category category, Status status,
                    std::map<std::string, bool> accepted = {}, std::vector<std::size_t> killed_on = {}) {
  MutantResult r;
  r.mutant.id = id;
  r.mutant.op = "AR-AOR";
  r.mutant.category = category;
  r.mutant.file = problem + "/solutions/basic.cu";
  r.problem = problem;
  r.status = status;
  r.accepted = std::move(accepted);
  r.killed_on = std::move(killed_on);
  if (!r.killed_on.empty()) r.witness = r.killed_on.front();
  return r;
}

PoolInput input(const std::string& problem, const std::string& case_id, const std::string& recipe) {
  return PoolInput{problem, case_id, recipe};
}

std::vector<bool> outcomes(int hits, int total) {
  std::vector<bool> v(static_cast<std::size_t>(total), false);
  for (int i = 0; i < hits; ++i) v[static_cast<std::size_t>(i)] = true;
  return v;
}

// ---- status_name ----

TEST(AnalysisStatusName, NamesEveryStatus) {
  EXPECT_EQ(status_name(Status::killed), "killed");
  EXPECT_EQ(status_name(Status::not_killable), "not_killable");
  EXPECT_EQ(status_name(Status::compile_error), "compile_error");
  EXPECT_EQ(status_name(Status::equivalent), "equivalent");
  EXPECT_EQ(status_name(Status::duplicate), "duplicate");
  EXPECT_EQ(status_name(Status::not_run), "not_run");
}

// ---- bootstrap_rate ----

TEST(AnalysisBootstrap, NothingToRateIsAllZero) {
  const Rate r = bootstrap_rate({});
  EXPECT_EQ(r.hits, 0);
  EXPECT_EQ(r.total, 0);
  EXPECT_EQ(r.rate, 0);
  EXPECT_EQ(r.low, 0);
  EXPECT_EQ(r.high, 0);
}

TEST(AnalysisBootstrap, NoneOfTenIsZeroWithAZeroInterval) {
  const Rate r = bootstrap_rate(outcomes(0, 10));
  EXPECT_EQ(r.hits, 0);
  EXPECT_EQ(r.total, 10);
  EXPECT_EQ(r.rate, 0);
  EXPECT_EQ(r.low, 0);
  EXPECT_EQ(r.high, 0);
}

TEST(AnalysisBootstrap, TenOfTenIsOneWithAOneInterval) {
  const Rate r = bootstrap_rate(outcomes(10, 10));
  EXPECT_EQ(r.hits, 10);
  EXPECT_EQ(r.rate, 1);
  EXPECT_EQ(r.low, 1);
  EXPECT_EQ(r.high, 1);
}

TEST(AnalysisBootstrap, ThreeOfTenHasAnIntervalAroundPointThree) {
  const Rate r = bootstrap_rate(outcomes(3, 10));
  EXPECT_EQ(r.hits, 3);
  EXPECT_EQ(r.total, 10);
  EXPECT_DOUBLE_EQ(r.rate, 0.3);
  EXPECT_LT(r.low, 0.3);
  EXPECT_GT(r.high, 0.3);
  EXPECT_GE(r.low, 0);
  EXPECT_LE(r.high, 1);
  // The fixed seed pins the interval itself (resampled rates are tenths, so the 2.5% and
  // 97.5% quantiles land on tenths): a change here changes every published report.
  EXPECT_DOUBLE_EQ(r.low, 0.1);
  EXPECT_DOUBLE_EQ(r.high, 0.6);
}

TEST(AnalysisBootstrap, IsTheSameEveryRunAndFollowsTheSeed) {
  const Rate a = bootstrap_rate(outcomes(7, 23));
  const Rate b = bootstrap_rate(outcomes(7, 23));
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  // The order of the outcomes does not matter to the rate; the seed can move the interval only
  // a little with 2000 resamples.
  std::vector<bool> shuffled = outcomes(7, 23);
  shuffled[0] = false;
  shuffled[22] = true;
  const Rate c = bootstrap_rate(shuffled, 2000, 99);
  EXPECT_EQ(c.rate, a.rate);
  EXPECT_NEAR(c.low, a.low, 0.1);
  EXPECT_NEAR(c.high, a.high, 0.1);
}

TEST(AnalysisBootstrap, NoResamplesGiveTheRateAsItsOwnInterval) {
  const Rate r = bootstrap_rate(outcomes(1, 4), 0);
  EXPECT_DOUBLE_EQ(r.rate, 0.25);
  EXPECT_DOUBLE_EQ(r.low, 0.25);
  EXPECT_DOUBLE_EQ(r.high, 0.25);
}

// ---- escape_rates ----

Campaign escape_campaign() {
  Campaign c;
  c.checkers = {"kjudge", "kernelbench"};
  c.pool = {input("p", "c0", "public:id")};
  auto both = [](bool kj, bool kb) { return std::map<std::string, bool>{{"kjudge", kj}, {"kernelbench", kb}}; };
  c.mutants = {
      result("a1", "p", Category::arithmetic, Status::killed, both(true, true), {0}),
      result("a2", "p", Category::arithmetic, Status::killed, both(false, true), {0}),
      result("a3", "p", Category::arithmetic, Status::killed, both(false, false), {0}),
      result("p1", "p", Category::precision, Status::killed, both(false, true), {0}),
      result("p2", "p", Category::precision, Status::killed, both(false, true), {0}),
      // kernelbench has no verdict on this one: it is scored for kjudge only.
      result("b1", "p", Category::boundary, Status::killed, {{"kjudge", true}}, {0}),
      // Never scored: nothing killed it, it did not compile, it is a control.
      result("n1", "p", Category::arithmetic, Status::not_killable, both(true, true)),
      result("e1", "p", Category::indexing, Status::compile_error, both(true, true)),
      result("q1", "p", Category::semantic, Status::equivalent, both(true, true)),
      result("k1", "p", Category::control, Status::killed, both(true, true), {0}),
  };
  c.controls = {
      {"p", "ctrl-a", both(true, true), ""},
      {"p", "ctrl-b", both(true, false), ""},
      {"p", "basic.cu", {{"kjudge", true}}, ""},
  };
  return c;
}

TEST(AnalysisEscapeRates, CountsOnlyKilledScoredMutantsWithAVerdict) {
  const std::vector<EscapeRates> rates = escape_rates(escape_campaign());
  ASSERT_EQ(rates.size(), 2u);
  const EscapeRates& kj = rates[0];
  const EscapeRates& kb = rates[1];
  EXPECT_EQ(kj.checker, "kjudge");
  EXPECT_EQ(kb.checker, "kernelbench");

  EXPECT_EQ(kj.overall.hits, 2);
  EXPECT_EQ(kj.overall.total, 6);
  EXPECT_EQ(kb.overall.hits, 4);
  EXPECT_EQ(kb.overall.total, 5);
  EXPECT_DOUBLE_EQ(kb.overall.rate, 0.8);

  ASSERT_EQ(kj.by_category.size(), 6u);
  EXPECT_EQ(kj.by_category.count(Category::control), 0u);
  EXPECT_EQ(kj.by_category.at(Category::arithmetic).hits, 1);
  EXPECT_EQ(kj.by_category.at(Category::arithmetic).total, 3);
  EXPECT_EQ(kj.by_category.at(Category::precision).hits, 0);
  EXPECT_EQ(kj.by_category.at(Category::precision).total, 2);
  EXPECT_EQ(kj.by_category.at(Category::boundary).hits, 1);
  EXPECT_EQ(kj.by_category.at(Category::boundary).total, 1);
  EXPECT_EQ(kb.by_category.at(Category::arithmetic).hits, 2);
  EXPECT_EQ(kb.by_category.at(Category::precision).hits, 2);
  EXPECT_EQ(kb.by_category.at(Category::precision).total, 2);
  EXPECT_EQ(kb.by_category.at(Category::boundary).total, 0);
  // A category without killed mutants is all zero, interval included.
  const Rate& none = kj.by_category.at(Category::synchronization);
  EXPECT_EQ(none.total, 0);
  EXPECT_EQ(none.rate, 0);
  EXPECT_EQ(none.low, 0);
  EXPECT_EQ(none.high, 0);
}

TEST(AnalysisEscapeRates, FalseRejectionsAreControlsTheCheckerRejected) {
  const std::vector<EscapeRates> rates = escape_rates(escape_campaign());
  EXPECT_EQ(rates[0].false_rejections, 0);
  EXPECT_EQ(rates[0].controls, 3);
  EXPECT_EQ(rates[1].false_rejections, 1);
  EXPECT_EQ(rates[1].controls, 2); // no verdict on basic.cu
}

TEST(AnalysisEscapeRates, OneEntryPerCheckerInTheOrderGiven) {
  Campaign c;
  c.checkers = {"b", "a", "c"};
  const auto rates = escape_rates(c);
  ASSERT_EQ(rates.size(), 3u);
  EXPECT_EQ(rates[0].checker, "b");
  EXPECT_EQ(rates[1].checker, "a");
  EXPECT_EQ(rates[2].checker, "c");
  EXPECT_EQ(rates[2].overall.total, 0);
}

// ---- set_cover ----

// One problem, four inputs: input 0 covers {m0}, 1 {m0, m1}, 2 {m2, m3}, 3 {m3, m4}. Inputs 1,
// 2 and 3 tie at two mutants for the first pick.
Campaign one_problem_campaign() {
  Campaign c;
  c.checkers = {"kjudge"};
  c.pool = {input("p", "c0", "public:id"), input("p", "c1", "perturbed:id"),
            input("p", "c2", "public:x*-1"), input("p", "c3", "public:x*-1")};
  c.mutants = {
      result("m0", "p", Category::arithmetic, Status::killed, {}, {0, 1}),
      result("m1", "p", Category::indexing, Status::killed, {}, {1}),
      result("m2", "p", Category::boundary, Status::killed, {}, {2}),
      result("m3", "p", Category::precision, Status::killed, {}, {2, 3}),
      result("m4", "p", Category::semantic, Status::killed, {}, {3}),
      // Outside the universe: not killed, and a control (input 0 would otherwise win).
      result("n0", "p", Category::arithmetic, Status::not_killable),
      result("k0", "p", Category::control, Status::killed, {}, {0}),
      result("k1", "p", Category::control, Status::killed, {}, {0}),
      result("k2", "p", Category::control, Status::killed, {}, {0}),
  };
  return c;
}

TEST(AnalysisSetCover, GreedyTakesTheLargestGainLowestIndexOnTies) {
  const CoverCurve cover = set_cover(one_problem_campaign());
  EXPECT_EQ(cover.chosen, (std::vector<std::size_t>{1, 2, 3}));
  ASSERT_EQ(cover.detection.size(), 3u);
  EXPECT_DOUBLE_EQ(cover.detection[0], 0.4);
  EXPECT_DOUBLE_EQ(cover.detection[1], 0.8);
  EXPECT_DOUBLE_EQ(cover.detection[2], 1.0);
}

TEST(AnalysisSetCover, GreedyPerProblemAtEachSuiteSize) {
  const CoverCurve cover = set_cover(one_problem_campaign());
  EXPECT_DOUBLE_EQ(cover.greedy_at.at(1), 0.4);
  EXPECT_DOUBLE_EQ(cover.greedy_at.at(2), 0.8);
  EXPECT_DOUBLE_EQ(cover.greedy_at.at(3), 1.0);
  EXPECT_DOUBLE_EQ(cover.greedy_at.at(5), 1.0);
}

TEST(AnalysisSetCover, RandomSuitesStayWithinWhatTheirSizeCanReach) {
  const CoverCurve cover = set_cover(one_problem_campaign());
  ASSERT_EQ(cover.random_at.size(), 4u);
  // One input catches one or two of five mutants (mean 0.35); three catch four or five; five
  // per problem take the whole pool.
  EXPECT_GE(cover.random_at.at(1), 0.2);
  EXPECT_LE(cover.random_at.at(1), 0.4);
  EXPECT_NEAR(cover.random_at.at(1), 0.35, 0.03);
  EXPECT_GE(cover.random_at.at(3), 0.8);
  EXPECT_LE(cover.random_at.at(3), 1.0);
  EXPECT_DOUBLE_EQ(cover.random_at.at(5), 1.0);
  for (const int k : {1, 2, 3, 5}) EXPECT_LE(cover.random_at.at(k), cover.greedy_at.at(k) + 1e-12);
  // Fixed seed: the same campaign gives the same means.
  EXPECT_EQ(set_cover(one_problem_campaign()).random_at, cover.random_at);
}

TEST(AnalysisSetCover, RecipeCoverAndHeldOutRecipesWithOneProblem) {
  const CoverCurve cover = set_cover(one_problem_campaign());
  // public:x*-1 (inputs 2 and 3) covers m2, m3, m4; perturbed:id then adds m0, m1.
  EXPECT_EQ(cover.chosen_recipes, (std::vector<std::string>{"public:x*-1", "perturbed:id"}));
  for (const int k : {1, 2, 3, 5}) EXPECT_TRUE(std::isnan(cover.held_out_recipes_at.at(k))) << k;
}

// Two problems: p (inputs 0, 1; recipes A, B) and q (inputs 2, 3; recipes A, B).
// p: a1 {0}, a2 {1}, a3 {0}; q: b1 {3}, b2 {2, 3}.
Campaign two_problem_campaign() {
  Campaign c;
  c.checkers = {"kjudge"};
  c.pool = {input("p", "p0", "A"), input("p", "p1", "B"), input("q", "q0", "A"), input("q", "q1", "B")};
  c.mutants = {
      result("a1", "p", Category::arithmetic, Status::killed, {}, {0}),
      result("a2", "p", Category::arithmetic, Status::killed, {}, {1}),
      result("a3", "p", Category::arithmetic, Status::killed, {}, {0}),
      result("b1", "q", Category::boundary, Status::killed, {}, {3}),
      result("b2", "q", Category::boundary, Status::killed, {}, {2, 3}),
  };
  return c;
}

TEST(AnalysisSetCover, TwoProblemsGreedyAndPerProblemSuites) {
  const CoverCurve cover = set_cover(two_problem_campaign());
  // Inputs 0 and 3 tie at two: 0 first, then 3, then 1.
  EXPECT_EQ(cover.chosen, (std::vector<std::size_t>{0, 3, 1}));
  ASSERT_EQ(cover.detection.size(), 3u);
  EXPECT_DOUBLE_EQ(cover.detection[0], 0.4);
  EXPECT_DOUBLE_EQ(cover.detection[1], 0.8);
  EXPECT_DOUBLE_EQ(cover.detection[2], 1.0);
  // One per problem: input 0 for p (a1, a3) and input 3 for q (b1, b2).
  EXPECT_DOUBLE_EQ(cover.greedy_at.at(1), 0.8);
  EXPECT_DOUBLE_EQ(cover.greedy_at.at(2), 1.0);
  // Two per problem is the whole pool, drawn at random or not.
  EXPECT_DOUBLE_EQ(cover.random_at.at(2), 1.0);
}

TEST(AnalysisSetCover, HeldOutMutantsChooseOnOneHalfAndScoreOnTheOther) {
  const CoverCurve cover = set_cover(two_problem_campaign());
  // p: halves by sorted id: A = {a1, a3}, B = {a2}; input 0 covers all of A and misses a2, and
  // nothing more helps A. q: A = {b1}, B = {b2}; input 3 catches b2. One of two held out.
  for (const int k : {1, 2, 3, 5}) EXPECT_DOUBLE_EQ(cover.held_out_mutants_at.at(k), 0.5) << k;
}

TEST(AnalysisSetCover, HeldOutRecipesChooseOnHalfTheProblems) {
  const CoverCurve cover = set_cover(two_problem_campaign());
  // Chosen on p: A (a1, a3) then B (a2). Scored on q: A catches b2 of {b1, b2}; A and B both.
  EXPECT_DOUBLE_EQ(cover.held_out_recipes_at.at(1), 0.5);
  EXPECT_DOUBLE_EQ(cover.held_out_recipes_at.at(2), 1.0);
  EXPECT_DOUBLE_EQ(cover.held_out_recipes_at.at(5), 1.0);
  // Over both problems A and B tie at three: A appears first in the pool.
  EXPECT_EQ(cover.chosen_recipes, (std::vector<std::string>{"A", "B"}));
}

TEST(AnalysisSetCover, HeldOutMutantsAreNaNWhenNoHalfIsLeftToScore) {
  Campaign c;
  c.pool = {input("p", "p0", "A")};
  c.mutants = {result("a1", "p", Category::arithmetic, Status::killed, {}, {0})};
  const CoverCurve cover = set_cover(c);
  EXPECT_TRUE(std::isnan(cover.held_out_mutants_at.at(1)));
  EXPECT_TRUE(std::isnan(cover.held_out_recipes_at.at(1)));
  EXPECT_DOUBLE_EQ(cover.greedy_at.at(1), 1.0);
}

TEST(AnalysisSetCover, AnEmptyCampaignCoversNothing) {
  const CoverCurve cover = set_cover(Campaign{});
  EXPECT_TRUE(cover.chosen.empty());
  EXPECT_TRUE(cover.detection.empty());
  EXPECT_TRUE(cover.chosen_recipes.empty());
  for (const int k : {1, 2, 3, 5}) {
    EXPECT_EQ(cover.greedy_at.at(k), 0);
    EXPECT_EQ(cover.random_at.at(k), 0);
    EXPECT_TRUE(std::isnan(cover.held_out_mutants_at.at(k)));
    EXPECT_TRUE(std::isnan(cover.held_out_recipes_at.at(k)));
  }
}

TEST(AnalysisSetCover, IgnoresKillMatrixEntriesOutsideThePool) {
  Campaign c = one_problem_campaign();
  c.mutants[1].killed_on.push_back(99);
  const CoverCurve cover = set_cover(c);
  EXPECT_EQ(cover.chosen, (std::vector<std::size_t>{1, 2, 3}));
}

// ---- cases_to_adopt ----

// p: inputs 0 (default), 1 (default), 2 (seed 3), 3 (x-8.5); m0 on {0, 2}, m1 on {2, 3},
// m2 on {3}, m3 on {1}. q: input 4 (default) catches its only mutant.
Campaign adoption_campaign() {
  Campaign c;
  c.checkers = {"kjudge"};
  auto def = [](std::string problem, std::string id) {
    PoolInput in = input(problem, id, "public:id");
    in.default_case = true;
    return in;
  };
  auto extra = [](std::string id, std::string recipe, AdoptedCase a) {
    PoolInput in = input("p", id, recipe);
    in.adoptable = a;
    return in;
  };
  c.pool = {def("p", "p0"), def("p", "p1"), extra("h:s:3:id", "public:id", {3, "", 1, 0, {}}),
            extra("h:s:0:x-8.5", "public:offset-8s", {0, "x", 1, -8.5, {}}), def("q", "q0")};
  c.mutants = {
      result("m0", "p", Category::arithmetic, Status::killed, {}, {0, 2}),
      result("m1", "p", Category::boundary, Status::killed, {}, {2, 3}),
      result("m2", "p", Category::semantic, Status::killed, {}, {3}),
      result("m3", "p", Category::indexing, Status::killed, {}, {1}),
      result("n0", "q", Category::indexing, Status::killed, {}, {4}),
  };
  return c;
}

TEST(AnalysisCasesToAdopt, CoversWhatNoDefaultCaseExposesGreedily) {
  const std::vector<CasesToAdopt> all = cases_to_adopt(adoption_campaign());
  ASSERT_EQ(all.size(), 2u);
  const CasesToAdopt& p = all[0];
  EXPECT_EQ(p.problem, "p");
  EXPECT_EQ(p.killed, 4u);
  EXPECT_EQ(p.missed, 2u); // m1, m2; m0 a default case already exposes
  // Input 3 adds m1 and m2; input 2 (m0 is not missed, m1 is taken) adds nothing.
  EXPECT_EQ(p.picks, (std::vector<std::size_t>{3}));
  ASSERT_EQ(p.gains.size(), 1u);
  EXPECT_EQ(p.gains[0], (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(all[1].problem, "q");
  EXPECT_EQ(all[1].missed, 0u);
  EXPECT_TRUE(all[1].picks.empty());
  EXPECT_EQ(adopted_cases_toml(adoption_campaign(), all[1]), "");
}

TEST(AnalysisCasesToAdopt, AnInputNoCaseCanMakeIsNeverPicked) {
  Campaign c = adoption_campaign();
  c.pool[3].adoptable.reset(); // a special-value input, say
  const std::vector<CasesToAdopt> all = cases_to_adopt(c);
  EXPECT_EQ(all[0].missed, 2u);
  EXPECT_EQ(all[0].picks, (std::vector<std::size_t>{2})); // m1 only; m2 stays missed
  EXPECT_EQ(all[0].gains[0], (std::vector<std::size_t>{1}));
}

TEST(AnalysisCasesToAdopt, TheTomlIsCaseTablesAProblemLoads) {
  const Campaign c = adoption_campaign();
  const std::string text = adopted_cases_toml(c, cases_to_adopt(c)[0]);
  EXPECT_EQ(text,
            "# kjudge mutate --emit-cases: 2 of the 4 mutants of p the campaign killed pass every "
            "default\n# case; these cases expose 2 of them. Append to the problem's "
            "problem.toml.\n"
            "\n# h:s:0:x-8.5 (public:offset-8s): exposes m1, m2\n"
            "[[case]]\ninput = 'x'\noffset = -8.5\nscale = 1.0\nseed = 0\n");
  // Appended to a problem that has an input x, it loads as one adopted case.
  const std::filesystem::path relu = std::filesystem::path(KJ_SOURCE_DIR) / "problems/relu";
  std::ifstream f(relu / "problem.toml");
  std::stringstream toml;
  toml << f.rdbuf() << '\n' << text;
  const Problem p = parse_problem_text(toml.str(), relu, "relu/problem.toml");
  ASSERT_EQ(p.adopted_cases.size(), 1u);
  EXPECT_EQ(p.adopted_cases[0].input, "x");
  EXPECT_EQ(p.adopted_cases[0].offset, -8.5);
}

} // namespace
} // namespace kj::mutate
