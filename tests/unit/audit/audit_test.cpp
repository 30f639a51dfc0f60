// The audit on the host backend, reason by reason: a deliberately hollow problem (zeros pass),
// one whose reference fails its own tolerance (unjudgeable), one whose tolerance cannot tell
// bf16 inputs from f32 (downgrade undetectable), a bundled one that is OK with what makes it OK
// (every trivial candidate fails, a special-value case the reference cannot compute is
// excused), the other checkers' policies, and the ceiling per dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "kjudge/audit.hpp"
#include "kjudge/compare.hpp"

namespace kj::audit {
namespace {

namespace fs = std::filesystem;

std::vector<ProblemAudit> audit_of(const std::string& folder,
                                   std::vector<std::string> policies = {"kjudge"},
                                   bool ladder = false) {
  AuditOptions o;
  o.ladder = ladder;
  o.problems = {folder};
  o.checkers = mutate::resolve_checkers(policies);
  o.backend = "host";
  o.self_exe = KJ_KJUDGE_EXE;
  return run_audit(o);
}

std::string bundled(const char* name) { return std::string(KJ_SOURCE_DIR) + "/problems/" + name; }
std::string fixture(const char* name) { return std::string(KJ_CASES_DIR) + "/audit/" + name; }

const TrivialResult& trivial(const PolicyAudit& p, const std::string& name) {
  const auto it = std::find_if(p.trivial.begin(), p.trivial.end(),
                               [&](const TrivialResult& t) { return t.name == name; });
  if (it == p.trivial.end()) throw std::runtime_error("no trivial candidate " + name);
  return *it;
}

const DowngradeResult& downgrade(const PolicyAudit& p, const std::string& format,
                                 bool arithmetic = false) {
  const auto it = std::find_if(p.downgrades.begin(), p.downgrades.end(), [&](const DowngradeResult& d) {
    return d.format == format && d.arithmetic == arithmetic;
  });
  if (it == p.downgrades.end()) throw std::runtime_error("no downgrade " + format);
  return *it;
}

TEST(AuditCeiling, HalfTheDigitsOfEachDtype) {
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::f32), std::exp2(-11.5));
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::f16), std::exp2(-5.0));
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::bf16), std::exp2(-3.5));
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::f64), std::exp2(-26.0));
}

// Golden {3, -4, 1e39, NaN} in f32: 1e39 overflows f32 and NaN is no value, so only 3 and -4
// count: errors {0.5, 0} over max |g| = 4 and rms(g) = sqrt(12.5); an Inf value is an
// infinite error; a golden with nothing countable has no figure.
TEST(AuditCeiling, ErrorOverGoldenScaleCountsWhatTheDtypeHolds) {
  HostTensor g(DType::f64, Shape{4}), v(DType::f32, Shape{4});
  const double golden[] = {3, -4, 1e39, std::nan("")}, values[] = {3.5, -4, 0, 7};
  for (int i = 0; i < 4; ++i) {
    g.set(i, golden[i]);
    v.set(i, values[i]);
  }
  const auto e = error_over_golden_scale(DType::f32, g, v);
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->max, 0.125);
  EXPECT_DOUBLE_EQ(e->rms, std::sqrt(0.125) / std::sqrt(12.5));
  v.set(1, INFINITY);
  EXPECT_EQ(error_over_golden_scale(DType::f32, g, v)->max, INFINITY);
  HostTensor none(DType::f64, Shape{1}), one(DType::f32, Shape{1});
  none.set(0, 1e39);
  EXPECT_FALSE(error_over_golden_scale(DType::f32, none, one));
}

TEST(Audit, ZerosPassingATolerancePastTheSignalIsHollow) {
  const auto audits = audit_of(fixture("hollow_softmax"));
  ASSERT_EQ(audits.size(), 1u);
  const PolicyAudit& p = audits[0].policies.at(0);
  EXPECT_EQ(p.status, (std::vector<Status>{Status::hollow, Status::downgrade_undetectable}));
  EXPECT_FALSE(audits[0].ok());
  const TrivialResult& zeros = trivial(p, "zeros");
  EXPECT_EQ(zeros.output, "y");
  EXPECT_TRUE(zeros.passes());
  EXPECT_LE(zeros.margin, 0);
  EXPECT_GE(zeros.passed, 1);
  EXPECT_LT(zeros.passed, zeros.cases); // not where C is small (C = 1: every output is 1)
  EXPECT_TRUE(trivial(p, "golden mean").passes());
  EXPECT_FALSE(trivial(p, "ones").passes());
  EXPECT_FALSE(trivial(p, "noise 10x bound").passes());
  EXPECT_FALSE(trivial(p, "copy of x").passes());
  // Outputs of about 1/4096 against an allowance of about 1e-2.
  EXPECT_LT(p.signal_over_bound.at("y"), 0.05);
  EXPECT_TRUE(p.reference_faults.empty());
}

TEST(Audit, AReferenceFailingItsOwnToleranceIsUnjudgeable) {
  const auto audits = audit_of(fixture("unjudgeable_sum"));
  const PolicyAudit& p = audits[0].policies.at(0);
  EXPECT_EQ(p.status, (std::vector<Status>{Status::unjudgeable}));
  ASSERT_FALSE(p.reference_faults.empty());
  const ReferenceFault& f = p.reference_faults.front();
  EXPECT_FALSE(f.special);
  EXPECT_EQ(f.output, "y");
  EXPECT_GT(f.mismatches, 0);
  EXPECT_GE(f.first_index, 0);
  EXPECT_LT(f.max_over_scale, f.ceiling); // well inside the ceiling: its own bound fails it
  EXPECT_NE(f.why.find("beyond its own bound"), std::string::npos) << f.why;
  // Its trivial candidates still fail: one ulp more than allowed in 1% of the elements too.
  for (const TrivialResult& t : p.trivial) EXPECT_FALSE(t.passes()) << t.name;
  EXPECT_GT(trivial(p, "1% of elements off by 2 ulp").cases, 0);
}

TEST(Audit, ABundledProblemIsOkAndItsUncomputableSpecialCaseExcused) {
  const auto audits = audit_of(bundled("cross_entropy"));
  const PolicyAudit& p = audits[0].policies.at(0);
  EXPECT_EQ(p.policy, "kjudge");
  EXPECT_EQ(p.status, (std::vector<Status>{Status::ok}));
  EXPECT_TRUE(audits[0].ok());
  for (const TrivialResult& t : p.trivial) EXPECT_FALSE(t.passes()) << t.name;
  // The f32 reference overflows on the dtype_max logits, where the f64 golden does not.
  ASSERT_EQ(p.excused_cases.size(), 1u);
  EXPECT_NE(p.excused_cases[0].find(":logits:dtype_max"), std::string::npos) << p.excused_cases[0];
  ASSERT_EQ(p.reference_faults.size(), 1u);
  EXPECT_TRUE(p.reference_faults[0].special);
  EXPECT_TRUE(std::isinf(p.reference_faults[0].max_over_scale));
}

TEST(Audit, OtherPoliciesAreJudgedOnTheirOwnDraw) {
  const auto audits = audit_of(bundled("cross_entropy"), {"kjudge", "kernelbench-v0", "torch-defaults"});
  const auto& ps = audits[0].policies;
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[1].policy, "kernelbench-v0");
  EXPECT_EQ(ps[1].cases, 5);
  EXPECT_EQ(ps[2].cases, 1);
  EXPECT_EQ(ps[0].status, (std::vector<Status>{Status::ok}));
  EXPECT_EQ(ps[2].status, (std::vector<Status>{Status::ok}));
  // 1e-2 lets a kernel read its logits as bf16 (or tf32) through; torch's f32 defaults do not.
  EXPECT_EQ(ps[1].status, (std::vector<Status>{Status::downgrade_undetectable}));
  EXPECT_TRUE(downgrade(ps[1], "bf16").undetectable());
  for (const DowngradeResult& d : ps[2].downgrades) EXPECT_FALSE(d.undetectable()) << d.format;
  // A long f32 sum is off the f64 golden by more than torch's f32 defaults allow.
  const auto sums = audit_of(bundled("reduce_sum"), {"kjudge", "torch-defaults"});
  EXPECT_EQ(sums[0].policies[0].status, (std::vector<Status>{Status::ok}));
  EXPECT_EQ(sums[0].policies[1].status, (std::vector<Status>{Status::unjudgeable}));
}

TEST(Audit, ATolerancePastBf16sRoundingCannotTellItFromF32) {
  const auto audits = audit_of(fixture("bf16_blind"));
  const PolicyAudit& p = audits[0].policies.at(0);
  EXPECT_EQ(p.status, (std::vector<Status>{Status::downgrade_undetectable})); // never hollow
  for (const TrivialResult& t : p.trivial) EXPECT_FALSE(t.passes()) << t.name;
  // Inputs, then arithmetic: relu computes nothing a rounded type changes, so both pass alike.
  ASSERT_EQ(p.downgrades.size(), 6u);
  EXPECT_EQ(p.downgrades[3].label(), "tf32 arithmetic");
  for (const bool arithmetic : {false, true})
    for (const char* f : {"tf32", "bf16"}) {
      const DowngradeResult& d = downgrade(p, f, arithmetic);
      EXPECT_TRUE(d.undetectable()) << d.label();
      EXPECT_EQ(d.passed, d.cases) << d.label();
      EXPECT_LE(d.margin, 0) << d.label();
    }
  // f16 has the mantissa of tf32 but not the range: FLT_MAX saturates at 65504.
  const DowngradeResult& f16 = downgrade(p, "f16");
  EXPECT_EQ(f16.passed, f16.cases - 1);
  EXPECT_NE(f16.closest_case.find(":x:dtype_max"), std::string::npos) << f16.closest_case;
  EXPECT_TRUE(audits[0].notes.empty());
  // The bundled relu judges the same kernel by relative(16) against the golden: rejected.
  const auto relu = audit_of(bundled("relu"), {"kjudge", "kernelbench-v0"});
  EXPECT_EQ(relu[0].policies[0].status, (std::vector<Status>{Status::ok}));
  for (const DowngradeResult& d : relu[0].policies[0].downgrades) {
    EXPECT_FALSE(d.undetectable()) << d.format;
    EXPECT_GT(d.margin, 0) << d.format;
  }
  EXPECT_TRUE(downgrade(relu[0].policies[1], "bf16").undetectable());
  // bf16's relative rounding is the same at every magnitude: no input exposes it to allclose;
  // f16 saturates, and kjudge's dtype-max case shows it.
  EXPECT_EQ(downgrade(relu[0].policies[1], "bf16").exposed_by, "");
  EXPECT_EQ(downgrade(relu[0].policies[1], "bf16").searched, 38);
  EXPECT_EQ(downgrade(relu[0].policies[1], "f16").exposed_recipe, "special:dtype_max");
}

// Summing in bf16 stalls where the sum's ulp passes its addends: a tolerance that lets bf16
// inputs through still rejects it, and so the arithmetic downgrade is its own line. (Golden
// mean passes on x+10, where every row sums to about 45056 +- 64: hollow too.)
TEST(Audit, ArithmeticInANarrowFormatIsADowngradeOfItsOwn) {
  const auto audits = audit_of(fixture("bf16_sum"));
  const PolicyAudit& p = audits[0].policies.at(0);
  EXPECT_EQ(p.status, (std::vector<Status>{Status::hollow, Status::downgrade_undetectable}));
  EXPECT_TRUE(downgrade(p, "bf16").undetectable());
  for (const char* f : {"tf32", "bf16", "f16"}) {
    const DowngradeResult& d = downgrade(p, f, true);
    EXPECT_FALSE(d.undetectable()) << f;
    EXPECT_EQ(d.cases, 1) << f; // caught on the first case: run no further
    EXPECT_GT(d.margin, 0) << f;
  }
  EXPECT_GT(downgrade(p, "bf16", true).margin, 1.5); // 8 bits against tf32's 11
}

// A problem asking for Kahan's compensation declares the plain sum a downgrade: relative,
// bounded by Kahan's own error, rejects it on the first case; allclose(1e-2) passes it on all.
TEST(Audit, ADeclaredDowngradeRunsAsACandidateAndMustFail) {
  const auto audits = audit_of(fixture("kahan_sum"), {"kjudge", "kernelbench-v0"});
  const auto& ps = audits[0].policies;
  EXPECT_EQ(ps[0].status, (std::vector<Status>{Status::ok}));
  ASSERT_EQ(ps[0].downgrades.size(), 7u);
  const DowngradeResult& caught = ps[0].downgrades.back();
  EXPECT_TRUE(caught.declared);
  EXPECT_EQ(caught.label(), "downgrades/naive.cu");
  EXPECT_EQ(caught.cases, 1);
  EXPECT_EQ(caught.passed, 0);
  EXPECT_GT(caught.margin, 0);
  const DowngradeResult& missed = ps[1].downgrades.back();
  EXPECT_TRUE(missed.declared);
  EXPECT_TRUE(missed.undetectable());
  EXPECT_EQ(missed.cases, 5);
  EXPECT_LT(missed.margin, -2);
  EXPECT_NE(audit_console(audits).find("the declared downgrades/naive.cu passes all 5 cases"),
            std::string::npos)
      << audit_console(audits);
  // No input kjudge makes exposes the plain sum to allclose(1e-2): the tolerance must tighten.
  // The arithmetic downgrades it misses, an offset or a magnitude exposes.
  EXPECT_EQ(missed.exposed_by, "");
  EXPECT_EQ(missed.searched, 23);
  EXPECT_EQ(downgrade(ps[1], "bf16", true).exposed_recipe, "ladder:mean offset x+100");
  EXPECT_EQ(downgrade(ps[1], "bf16", true).exposed_by, "fb5e85da:public0:0:x+100");
  EXPECT_EQ(downgrade(ps[1], "f16", true).exposed_recipe, "public:offset+10s");
  EXPECT_EQ(downgrade(ps[1], "f16").exposed_recipe, "ladder:magnitude x*1e+08");
  const std::string console = audit_console(audits);
  EXPECT_NE(console.find("    exposed by none of 23 other inputs kjudge makes: only a tighter "
                         "tolerance tells it apart\n"),
            std::string::npos)
      << console;
  EXPECT_NE(console.find("    would be exposed by ladder:mean offset x+100 (fb5e85da:public0:0:x+100)\n"),
            std::string::npos)
      << console;
  const auto json = nlohmann::json::parse(audit_json(audits));
  const auto& arithmetic_bf16 = json["problems"][0]["policies"][1]["downgrades"][4];
  EXPECT_EQ(arithmetic_bf16["exposed_by"]["recipe"], "ladder:mean offset x+100");
  EXPECT_EQ(json["problems"][0]["policies"][1]["downgrades"][6]["exposed_by"], nullptr);
  EXPECT_EQ(json["problems"][0]["policies"][1]["downgrades"][6]["exposure_searched"], 23);
  // The problem's own policy catches them all: nothing is searched.
  for (const DowngradeResult& d : ps[0].downgrades) EXPECT_EQ(d.searched, 0) << d.label();
}

// A declared downgrade must exist beside problem.toml.
TEST(Audit, ADeclaredDowngradeThatIsNoFileIsASpecError) {
  const fs::path dir = fs::temp_directory_path() / "kjudge-audit-declared";
  fs::remove_all(dir);
  fs::copy(fixture("kahan_sum"), dir, fs::copy_options::recursive);
  fs::remove(dir / "downgrades/naive.cu");
  try {
    load_problem(dir);
    FAIL() << "loaded";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("downgrades: no such file 'downgrades/naive.cu'"),
              std::string::npos)
        << e.what();
  }
}

TEST(Audit, OnlyFormatsBelowTheProblemsPrecisionAndOnlyWhereTheyChangeAnInput) {
  // gelu is f16: bf16 is the only narrower format, and only an f32 reference is built in
  // rounded types.
  const auto gelu = audit_of(bundled("gelu"));
  ASSERT_EQ(gelu[0].policies[0].downgrades.size(), 1u);
  EXPECT_EQ(gelu[0].policies[0].downgrades[0].label(), "bf16 inputs");
  EXPECT_EQ(gelu[0].notes, (std::vector<std::string>{
                               "no arithmetic downgrades: only an f32 reference is built in "
                               "rounded types"}));
  // histogram's inputs are integers: nothing to round, no downgrade.
  const auto histogram = audit_of(bundled("histogram"));
  EXPECT_TRUE(histogram[0].policies[0].downgrades.empty());
  EXPECT_EQ(histogram[0].policies[0].status, (std::vector<Status>{Status::ok}));
}

// The ladder on layernorm's reference order and, posing as a correct variant, its one-pass
// variance trap: E[x^2] - E[x]^2 cancels on the mean offset x+10, the default cases' own rung,
// so the ceiling is crossed there; the two-pass solution passes every rung.
TEST(Audit, ALadderFailingAtTheDefaultCasesOwnRungIsACeilingCrossed) {
  const fs::path dir = fs::temp_directory_path() / "kjudge-audit-ladder";
  fs::remove_all(dir);
  fs::create_directories(dir / "solutions");
  const fs::path src = bundled("layernorm");
  fs::copy_file(src / "reference.cu", dir / "reference.cu");
  fs::copy_file(src / "solutions/basic.cu", dir / "solutions/basic.cu");
  fs::copy_file(src / "traps/one_pass_variance.cu", dir / "solutions/one_pass.cu");
  std::ifstream in(src / "problem.toml");
  std::stringstream text;
  for (std::string line; std::getline(in, line);)
    text << (line.rfind("host = ", 0) == 0 ? "host = [{ R = 40, C = 64 }]" : line) << '\n';
  std::ofstream(dir / "problem.toml") << text.str();

  AuditOptions o;
  o.problems = {dir.string()};
  o.checkers = mutate::resolve_checkers({"kjudge"});
  o.backend = "host";
  o.self_exe = KJ_KJUDGE_EXE;
  o.ladder = true;
  const std::vector<ProblemAudit> all = run_audit(o);
  const PolicyAudit& p = all.at(0).policies.at(0);
  EXPECT_NE(std::find(p.status.begin(), p.status.end(), Status::ceiling_crossed), p.status.end());
  EXPECT_EQ(p.ceiling.at("mean offset"), "x+10");
  EXPECT_EQ(p.ladder.size(), 2u * (4 + 4 + 3)); // two solutions, 11 rungs
  for (const LadderStep& s : p.ladder) {
    if (s.candidate == "solutions/basic.cu") {
      EXPECT_TRUE(s.pass) << s.family << " " << s.rung;
    } else if (s.rung == "x+10") {
      EXPECT_GT(s.margin, 0) << s.candidate;
    }
  }
  EXPECT_NE(audit_console(all).find("ladder mean offset: x+10 FAIL solutions/one_pass.cu"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(Audit, TheJsonHoldsEveryFinding) {
  const auto audits = audit_of(fixture("hollow_softmax"));
  const nlohmann::json j = nlohmann::json::parse(audit_json(audits));
  EXPECT_EQ(j["schema_version"], 1);
  const auto& p = j["problems"][0];
  EXPECT_EQ(p["problem"], "hollow_softmax");
  EXPECT_EQ(p["backend"], "host");
  EXPECT_EQ(p["ok"], false);
  EXPECT_EQ(p["policies"][0]["status"], nlohmann::json::array({"hollow", "downgrade undetectable"}));
  EXPECT_EQ(p["policies"][0]["downgrades"][1]["format"], "bf16");
  EXPECT_EQ(p["policies"][0]["downgrades"][1]["undetectable"], true);
  EXPECT_EQ(p["policies"][0]["trivial"][0]["name"], "zeros");
  EXPECT_EQ(p["policies"][0]["trivial"][0]["passes"], true);
  const std::string table = audit_console(audits);
  EXPECT_NE(table.find("hollow: 'zeros' passes y on "), std::string::npos) << table;
}

// ---- Tolerance cards ----

PolicySpec policy(const char* text) { return parse_policy(text, Location{}); }

TEST(Card, ALooserPolicyIsALargerBoundOrAnotherKind) {
  const DType f32 = DType::f32;
  EXPECT_FALSE(policy_looser(policy("relative"), policy("relative(16)"), f32)); // the default is 16
  EXPECT_TRUE(policy_looser(policy("relative(32)"), policy("relative"), f32));
  EXPECT_FALSE(policy_looser(policy("relative(8)"), policy("relative"), f32));
  EXPECT_TRUE(policy_looser(policy("allclose(1e-3, 1e-5)"), policy("allclose(1e-4, 1e-5)"), f32));
  EXPECT_TRUE(policy_looser(policy("allclose(1e-4, 1e-4)"), policy("allclose(1e-4, 1e-5)"), f32));
  EXPECT_FALSE(policy_looser(policy("allclose(1e-5, 1e-6)"), policy("allclose(1e-4, 1e-5)"), f32));
  EXPECT_TRUE(policy_looser(policy("allclose"), policy("allclose(1e-7, 1e-7)"), f32)); // torch's f32
  EXPECT_TRUE(policy_looser(policy("ulp(2)"), policy("ulp(1)"), f32));
  EXPECT_FALSE(policy_looser(policy("exact"), policy("exact"), f32));
  EXPECT_TRUE(policy_looser(policy("ulp(0)"), policy("exact"), f32)); // another kind
  EXPECT_TRUE(policy_looser(policy("relative"), policy("allclose(1e-4, 1e-5)"), f32));
  EXPECT_TRUE(policy_looser(policy("cosine(0.99)"), policy("cosine(0.999)"), f32));
  EXPECT_FALSE(policy_looser(policy("cosine(0.9999)"), policy("cosine(0.999)"), f32));
}

// A card written for a copy of softmax: the same policy passes, a tightened one passes, a loosened
// one is refused naming the output and both policies.
TEST(Card, ACheckRefusesAPolicyLooserThanItsCard) {
  const fs::path dir = fs::temp_directory_path() / "kjudge_card_test" / "softmax";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir.parent_path());
  fs::copy(bundled("softmax"), dir, fs::copy_options::recursive);
  const auto audits = audit_of(dir.string(), {"kjudge"}, true);
  const Problem p = load_problem(dir);
  const std::string card = card_toml(p, audits[0]);
  // The four solutions' errors (not their CTRL variants'), and the best of them on the card.
  ASSERT_EQ(audits[0].solution_errors.size(), 4u);
  for (const auto& e : audits[0].solution_errors) {
    EXPECT_EQ(e.output, "y");
    EXPECT_GT(e.rms_over_scale, 0) << e.candidate;
    EXPECT_LT(e.max_over_scale, reference_ceiling(DType::f32)) << e.candidate;
  }
  EXPECT_NE(card.find("best_solution = 'solutions/"), std::string::npos) << card;
  EXPECT_NE(card.find("best_solution_rms_over_scale = "), std::string::npos) << card;
  EXPECT_NE(card.find("[ceiling]"), std::string::npos) << card;
  EXPECT_NE(card.find("audit = 'OK'"), std::string::npos) << card;
  EXPECT_NE(card.find("policy = 'relative'"), std::string::npos) << card;
  EXPECT_NE(card.find("candidate = 'zeros'"), std::string::npos) << card;
  EXPECT_NE(card.find("candidate = 'bf16 inputs'"), std::string::npos) << card;
  { std::ofstream(dir / "card.toml") << card; }
  EXPECT_EQ(load_problem(dir).hash, p.hash); // the card is not part of the problem
  EXPECT_FALSE(card_refusal(load_problem(dir)));

  auto with_policy = [&](const std::string& text) {
    std::ifstream in(dir / "problem.toml");
    std::stringstream toml;
    toml << in.rdbuf();
    std::string t = toml.str();
    const auto at = t.find("policy = \"relative\"");
    EXPECT_NE(at, std::string::npos);
    t.replace(at, std::string("policy = \"relative\"").size(), "policy = \"" + text + "\"");
    return parse_problem_text(t, dir, (dir / "problem.toml").string());
  };
  EXPECT_FALSE(card_refusal(with_policy("relative(8)")));
  const auto why = card_refusal(with_policy("relative(64)"));
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("output 'y': the policy 'relative(64)' is looser than 'relative'"),
            std::string::npos)
      << *why;
  EXPECT_TRUE(card_refusal(with_policy("allclose(1e-2, 1e-2)")));

  { std::ofstream(dir / "card.toml") << "output = [ { name = 'y' } ]\n"; }
  EXPECT_THROW(card_refusal(load_problem(dir)), SpecError);
  fs::remove_all(dir.parent_path());
}

} // namespace
} // namespace kj::audit
