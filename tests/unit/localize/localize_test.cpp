// kjudge localize: the stage format's errors (problem and candidate), the split at a cut, and
// the decomposition of problems/mlp_chain's candidates on the host backend, culprit and ratios
// pinned.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/expr.hpp"
#include "kjudge/localize.hpp"

namespace kj::localize {
namespace {

namespace fs = std::filesystem;
const fs::path kChain = fs::path(KJ_SOURCE_DIR) / "problems" / "mlp_chain";

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// mlp_chain's problem.toml with `from` replaced by `to`, parsed; the error's text, or "".
std::string problem_error(const std::string& from, const std::string& to) {
  std::string text = read(kChain / "problem.toml");
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    parse_problem_text(text, kChain, "problem.toml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

std::string candidate_error(const Problem& p, const std::string& from, const std::string& to) {
  std::string text = read(kChain / "solutions" / "staged.cu");
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  try {
    const Candidate c = parse_candidate(text, "staged.cu", p);
    if (auto why = unsplittable(p, c)) return *why;
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(StageFormat, ProblemErrorsNameTheField) {
  EXPECT_TRUE(has(problem_error("name = \"h\"\ndtype = \"bf16\"", "name = \"h\"\ndtype = \"f32\""),
                  "stage 'h' is f32, but the reference's T is bf16"));
  EXPECT_TRUE(has(problem_error("args = [\"x\", \"w1\", \"h\", \"M\", \"H\", \"K\"]\nstage = \"h\"",
                                "args = [\"x\", \"w1\", \"h\", \"M\", \"H\", \"K\"]"),
                  "stage 'h': no reference launch completes it"));
  EXPECT_TRUE(has(problem_error("stage = \"h\"\n", "stage = \"g\"\n"), "no stage 'g'"));
  EXPECT_TRUE(has(problem_error("args = [\"h\", \"w2\", \"y\", \"M\", \"N\", \"H\"]",
                                "args = [\"h\", \"w2\", \"y\", \"M\", \"N\", \"H\"]\nstage = \"h\""),
                  "completed by an earlier launch already"));
  EXPECT_TRUE(has(problem_error("args = [\"h\", \"w2\", \"y\", \"M\", \"N\", \"H\"]",
                                "args = [\"x\", \"w2\", \"y\", \"M\", \"N\", \"H\"]"),
                  "no later launch reads stage 'h'"));
  EXPECT_EQ(problem_error("# A two-matmul", "# A two-matmul"), "");
}

TEST(StageFormat, CandidateErrorsNameTheField) {
  const Problem p = load_problem(kChain);
  EXPECT_TRUE(has(candidate_error(p, "stage = \"h\"\n\n[[launch]]", "stage = \"g\"\n\n[[launch]]"),
                  "no stage 'g' in problem 'mlp_chain'"));
  EXPECT_TRUE(has(candidate_error(p, "dtype = \"bf16\"", "dtype = \"f32\""),
                  "scratch 'hbuf' is f32, but stage 'h' is bf16"));
  EXPECT_TRUE(has(candidate_error(p, "stage = \"h\"\n\n[[launch]]", "\n[[launch]]"),
                  "no scratch buffer holds stage 'h'"));
  // The stage's launch gone: the candidate exposes the buffer but no launch completes it.
  EXPECT_TRUE(has(candidate_error(p, "args = [\"x\", \"w1\", \"hbuf\", \"M\", \"H\", \"K\"]\nstage = \"h\"",
                                  "args = [\"x\", \"w1\", \"hbuf\", \"M\", \"H\", \"K\"]"),
                  "does not say which launch completes stage 'h'"));
  // Fused: the second launch reads x, not the stage's buffer.
  EXPECT_TRUE(has(candidate_error(p, "args = [\"hbuf\", \"w2\", \"y\",", "args = [\"x\", \"w2\", \"y\","),
                  "stage 'h' is produced and consumed inside launch[0]"));
  EXPECT_EQ(candidate_error(p, "// problems/mlp_chain", "// problems/mlp_chain"), "");
}

TEST(StageSplit, TheCutMakesTwoOrdinaryProblems) {
  const Problem p = load_problem(kChain);
  const Candidate c = load_candidate(kChain / "solutions" / "staged.cu", p);
  const Problem whole = with_stages_as_outputs(p);
  ASSERT_EQ(whole.outputs.size(), 2u);
  EXPECT_EQ(whole.outputs[1].name, "h");
  EXPECT_TRUE(whole.stages.empty());
  const Problem after = after_cut(p, 0);
  ASSERT_EQ(after.inputs.size(), 4u);
  EXPECT_EQ(after.inputs[3].name, "h");
  ASSERT_EQ(after.reference.launches.size(), 1u);
  EXPECT_EQ(after.reference.launches[0].args[0], "h");
  const Candidate tail = after_cut(p, c, 0);
  ASSERT_EQ(tail.source.launches.size(), 1u);
  EXPECT_EQ(tail.source.launches[0].args[0], "h"); // hbuf renamed to the stage's input
  EXPECT_TRUE(tail.scratch.empty());
  EXPECT_EQ(with_stages_as_outputs(p, c).source.launches[0].args[2], "h");
}

Localization localized(const std::string& candidate) {
  const Problem p = load_problem(kChain);
  LocalizeOptions o;
  o.check.backend = Backend::host;
  o.check.self_exe = KJ_KJUDGE_EXE;
  o.check.cache_dir = fs::temp_directory_path() / "kjudge-localize-test-cache";
  o.max_cases = 2;
  return localize(p, load_candidate(kChain / candidate, p), o);
}

TEST(Localize, TheBaselineControlNamesWhatMovedUpstreamOfTheFix) {
  const Problem p = load_problem(kChain);
  LocalizeOptions o;
  o.check.backend = Backend::host;
  o.check.self_exe = KJ_KJUDGE_EXE;
  o.check.cache_dir = fs::temp_directory_path() / "kjudge-localize-test-cache";
  o.max_cases = 1;
  // The output's launches fixed: h did not move, the control holds.
  o.baseline = load_candidate(kChain / "traps" / "y_bf16_accumulate.cu", p);
  Localization l = localize(p, load_candidate(kChain / "solutions" / "staged.cu", p), o);
  EXPECT_EQ(l.fixed_stage, "y");
  ASSERT_EQ(l.leaves.size(), 2u);
  EXPECT_EQ(l.leaves[0].tensor, "h");
  EXPECT_EQ(l.leaves[0].differing, 0);
  EXPECT_TRUE(l.leaves[0].must_not_move);
  EXPECT_GT(l.leaves[1].differing, 0);
  EXPECT_TRUE(l.moved_leaves.empty());
  // Said to fix y, the change moved h as well: the control fails and names it.
  o.baseline = load_candidate(kChain / "traps" / "h_bf16_accumulate.cu", p);
  o.fixed_stage = "y";
  l = localize(p, load_candidate(kChain / "solutions" / "staged.cu", p), o);
  EXPECT_EQ(l.moved_leaves, std::vector<std::string>{"h"});
  EXPECT_EQ(localization_json(l)["baseline_control"]["holds"], false);
}

TEST(Localize, EachTrapsErrorIsFoundWhereItWasMade) {
  const Localization right = localized("solutions/staged.cu");
  EXPECT_EQ(right.harness.outcome, Outcome::pass);
  EXPECT_EQ(right.culprit, "none");
  ASSERT_EQ(right.cuts.size(), 1u);
  // The reference's own algorithm: every term equals the reference's.
  for (const Term& t : right.cuts[0].terms) EXPECT_EQ(t.kernel.p999, t.reference.p999) << t.name;

  const Localization upstream = localized("traps/h_bf16_accumulate.cu");
  EXPECT_EQ(upstream.harness.outcome, Outcome::fail);
  EXPECT_EQ(upstream.culprit, "stage:h");
  EXPECT_GT(upstream.factor, 3);
  const Term& own = upstream.cuts[0].terms[1];
  EXPECT_EQ(own.name, "own");
  EXPECT_EQ(own.kernel.p999, own.reference.p999); // the second matmul is the reference's

  const Localization downstream = localized("traps/y_bf16_accumulate.cu");
  EXPECT_EQ(downstream.culprit, "stage:y");
  EXPECT_GT(downstream.factor, 3);
  const Term& inherited = downstream.cuts[0].terms[0];
  EXPECT_EQ(inherited.kernel.p999, inherited.reference.p999);
  EXPECT_EQ(localization_json(downstream)["culprit"], "stage:y");
  EXPECT_TRUE(has(localization_text(downstream), "culprit: stage:y"));
}

} // namespace
} // namespace kj::localize

namespace kj::localize {
namespace {

TEST(WhatIf, RepresentationsRoundAndSplit) {
  const Representation bf16 = parse_representation("bf16", {});
  EXPECT_EQ(represented(bf16, 1.0 + 1.0 / 1024), 1.0); // 8 significant bits
  const Representation two = parse_representation("bf16x2", {});
  EXPECT_EQ(two.terms, 2);
  EXPECT_EQ(represented(two, 1.0 + 1.0 / 1024), 1.0 + 1.0 / 1024); // the residual holds it
  EXPECT_THROW(parse_representation("i32", {}), SpecError);
  EXPECT_THROW(parse_representation("bf16x9", {}), SpecError);
}

TEST(WhatIf, TheBundledSchemesPassOrFailByTheProblemsGate) {
  const Problem p = load_problem(kChain);
  const std::vector<Scheme> schemes = load_schemes(kChain / "schemes.toml", p);
  ASSERT_EQ(schemes.size(), 6u);
  WhatIfOptions o;
  o.check.self_exe = KJ_KJUDGE_EXE;
  o.check.cache_dir = fs::temp_directory_path() / "kjudge-localize-test-cache";
  o.max_cases = 6;
  const WhatIf w = whatif(p, schemes, o);
  ASSERT_FALSE(w.shape_sets.empty());
  std::map<std::string, bool> all_pass;
  for (const WhatIfRow& r : w.rows) {
    auto [it, fresh] = all_pass.emplace(r.scheme, true);
    it->second = it->second && r.passed == r.cases;
  }
  EXPECT_TRUE(all_pass["bf16 (the problem's)"]);
  EXPECT_TRUE(all_pass["f32"]);
  EXPECT_TRUE(all_pass["bf16 + bf16 residual"]);
  EXPECT_TRUE(all_pass["f16"]);
  EXPECT_FALSE(all_pass["fp8e4m3"]);
  EXPECT_TRUE(has(whatif_text(w), "fp8e4m3"));
}

TEST(WhatIf, SchemeFileErrorsNameTheKey) {
  const Problem p = load_problem(kChain);
  const fs::path file = fs::temp_directory_path() / "kjudge-schemes-bad.toml";
  std::ofstream(file) << "[[scheme]]\nname = \"x\"\nq = \"bf16\"\n";
  try {
    load_schemes(file, p);
    ADD_FAILURE() << "accepted a key that names no stage";
  } catch (const SpecError& e) {
    EXPECT_TRUE(has(e.what(), "'q' is no stage of problem 'mlp_chain'")) << e.what();
  }
  std::ofstream(file) << "[[scheme]]\nname = \"x\"\n";
  try {
    load_schemes(file, p);
    ADD_FAILURE() << "accepted a scheme without stage h";
  } catch (const SpecError& e) {
    EXPECT_TRUE(has(e.what(), "does not say how stage 'h' is stored")) << e.what();
  }
}

} // namespace
} // namespace kj::localize

namespace kj::localize {
namespace {

TEST(RealExpr, TheScoreDialect) {
  const Expr e = Expr::parse_real("sum(new_pass * (1 - old_pass) * (0.3 + 0.5 * s)) / N * 100", {});
  const std::vector<Expr::RealEnv> cases = {{{"old_pass", 0}, {"new_pass", 1}, {"s", 2}},
                                            {{"old_pass", 1}, {"new_pass", 1}, {"s", 4}}};
  EXPECT_DOUBLE_EQ(e.eval_real({{"N", 2}}, cases), (0.3 + 1.0) / 2 * 100);
  EXPECT_DOUBLE_EQ(Expr::parse_real("1e-3 * 2.5 + max(1, 2)", {}).eval_real({}), 2.0025);
  // A case's name outside sum(), sum() within sum(), and the integer language kept apart.
  EXPECT_THROW(Expr::parse_real("s + 1", {}).eval_real({}, cases), ExprError);
  EXPECT_THROW(Expr::parse_real("sum(sum(s))", {}).eval_real({}, cases), ExprError);
  EXPECT_THROW(Expr::parse_real("ceil_div(4, 2)", {}), ExprError);
  EXPECT_THROW(Expr::parse("sum(R)", {}), ExprError);
  EXPECT_THROW(Expr::parse("0.5", {}), ExprError);
  EXPECT_THROW(Expr::parse_real("2", {}).eval({}), ExprError);
}

TEST(Price, AFixThatMakesCasesPassIsWorthBuilding) {
  const Problem p = load_problem(kChain);
  ASSERT_TRUE(p.score);
  CheckOptions o;
  o.backend = Backend::host;
  o.self_exe = KJ_KJUDGE_EXE;
  o.cache_dir = fs::temp_directory_path() / "kjudge-localize-test-cache";
  const Pricing priced = price(p, load_candidate(kChain / "traps" / "y_bf16_accumulate.cu", p),
                               load_candidate(kChain / "solutions" / "staged.cu", p), o, 2);
  EXPECT_EQ(priced.new_verdict.outcome, Outcome::pass);
  EXPECT_GT(priced.newly_passing, 0);
  EXPECT_EQ(priced.newly_failing, 0);
  EXPECT_GT(priced.gain, 0);
  EXPECT_EQ(priced.build, priced.gain > priced.cost);
  EXPECT_TRUE(has(pricing_text(priced), "gain = sum(new_pass"));
  EXPECT_EQ(pricing_json(priced)["newly_passing"], priced.newly_passing);
}

TEST(Price, AProblemWithoutAFormulaIsNamed) {
  const Problem p = load_problem(fs::path(KJ_SOURCE_DIR) / "problems" / "rms_chain");
  const Candidate c =
      load_candidate(fs::path(KJ_SOURCE_DIR) / "problems/rms_chain/solutions/three_launches.cu", p);
  CheckOptions o;
  o.backend = Backend::host;
  o.self_exe = KJ_KJUDGE_EXE;
  try {
    price(p, c, c, o, 1);
    ADD_FAILURE() << "priced without a formula";
  } catch (const SpecError& e) {
    EXPECT_TRUE(has(e.what(), "has no [score] formula")) << e.what();
  }
}

} // namespace
} // namespace kj::localize
