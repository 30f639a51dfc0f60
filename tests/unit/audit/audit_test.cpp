// The audit on the host backend, reason by reason: a deliberately hollow problem (zeros pass),
// one whose reference fails its own tolerance (unjudgeable), a bundled one that is OK with
// what makes it OK (every trivial candidate fails, a special-value case the reference cannot
// compute is excused), the other checkers' policies, and the ceiling per dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "kjudge/audit.hpp"

namespace kj::audit {
namespace {

namespace fs = std::filesystem;

std::vector<ProblemAudit> audit_of(const std::string& folder, std::vector<std::string> policies = {"kjudge"}) {
  AuditOptions o;
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

TEST(AuditCeiling, HalfTheDigitsOfEachDtype) {
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::f32), std::exp2(-11.5));
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::f16), std::exp2(-5.0));
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::bf16), std::exp2(-3.5));
  EXPECT_DOUBLE_EQ(reference_ceiling(DType::f64), std::exp2(-26.0));
}

TEST(Audit, ZerosPassingATolerancePastTheSignalIsHollow) {
  const auto audits = audit_of(fixture("hollow_softmax"));
  ASSERT_EQ(audits.size(), 1u);
  const PolicyAudit& p = audits[0].policies.at(0);
  EXPECT_EQ(p.status, (std::vector<Status>{Status::hollow}));
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
  for (const PolicyAudit& p : ps) EXPECT_EQ(p.status, (std::vector<Status>{Status::ok})) << p.policy;
  // A long f32 sum is off the f64 golden by more than torch's f32 defaults allow.
  const auto sums = audit_of(bundled("reduce_sum"), {"kjudge", "torch-defaults"});
  EXPECT_EQ(sums[0].policies[0].status, (std::vector<Status>{Status::ok}));
  EXPECT_EQ(sums[0].policies[1].status, (std::vector<Status>{Status::unjudgeable}));
}

TEST(Audit, TheJsonHoldsEveryFinding) {
  const auto audits = audit_of(fixture("hollow_softmax"));
  const nlohmann::json j = nlohmann::json::parse(audit_json(audits));
  EXPECT_EQ(j["schema_version"], 1);
  const auto& p = j["problems"][0];
  EXPECT_EQ(p["problem"], "hollow_softmax");
  EXPECT_EQ(p["backend"], "host");
  EXPECT_EQ(p["ok"], false);
  EXPECT_EQ(p["policies"][0]["status"], nlohmann::json::array({"hollow"}));
  EXPECT_EQ(p["policies"][0]["trivial"][0]["name"], "zeros");
  EXPECT_EQ(p["policies"][0]["trivial"][0]["passes"], true);
  const std::string table = audit_console(audits);
  EXPECT_NE(table.find("hollow: 'zeros' passes y on "), std::string::npos) << table;
}

} // namespace
} // namespace kj::audit
