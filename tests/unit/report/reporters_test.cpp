// Tests of the reporters: what a person reads on the console (the key lines of PASS, FAIL and
// ERROR verdicts, redaction), what a program reads from JSON (every documented field with its
// type, non-finite numbers, redaction of hidden cases, KernelBench and reward fields), and that
// JUnit XML is well-formed whatever the messages contain. The verdicts are built by hand, so
// these tests pin the rendering, not the comparator.
#include <cctype>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kjudge/report.hpp"

namespace {

using namespace kj;

Manifest sample_manifest() {
  Manifest m;
  m.kjudge_version = "0.1.0";
  m.problem = "softmax";
  m.problem_hash = "1a2b3c4d00000000000000000000000000000000000000000000000000000000";
  m.candidate = "cand.cu";
  m.candidate_hash = "feedbeef";
  m.backend = "host";
  m.trust = "host";
  m.gpu = "NVIDIA H200";
  return m;
}

OutputFinding failing_output(const std::string& name = "y") {
  OutputFinding f;
  f.output = name;
  f.reason = Reason::mismatch;
  f.message = "3 of 4096 elements beyond the bound";
  f.count = 4096;
  f.mismatches = 3;
  f.mismatch_fraction = 3.0 / 4096.0;
  ElementReport e;
  e.flat = 4113;
  e.index = {1, 17};
  e.value = 1.5;
  e.expected = 1.25;
  e.error = 0.25;
  e.allowed = 1.9e-6;
  f.worst = e;
  f.first = {e, e, e};
  f.first[1].index = {2, 0};
  f.first[2].index = {3, 1};
  f.stats.abs = {1e-8, 3e-7, 1e-3, 0.25};
  f.stats.rel = {1e-8, 3e-7, 1e-3, 0.2};
  f.stats.ulp = {0, 3, 900, 2e6};
  f.bound.policy = "relative(16)";
  f.bound.expected = "golden";
  f.bound.source = "k=16 (f32 default) x max(max|ref-golden|=3.1e-7, floor=1.2e-7)";
  f.bound.max_bound = 4.96e-6;
  f.bound.rms_bound = 1e-6;
  f.bound.max_error = 0.25;
  f.bound.rms_error = 0.004;
  f.failed_slices = {{1, 0.25, 4.96e-6, 0.01, 1e-6}};
  f.failed_slice_count = 1;
  f.log_error_ratio = 4.7;
  f.nonfinite = 1;
  f.excused = 2;
  f.regions = {{"small", 40, 3, 1, 2}};
  return f;
}

OutputFinding passing_output(const std::string& name = "y", double ratio = -1.5) {
  OutputFinding f;
  f.output = name;
  f.count = 4096;
  f.bound.policy = "relative(16)";
  f.bound.expected = "golden";
  f.bound.max_bound = 4.96e-6;
  f.bound.rms_bound = 1e-6;
  f.log_error_ratio = ratio;
  return f;
}

CaseFinding passing_case(const std::string& id, const std::string& cls = "public") {
  CaseFinding c;
  c.case_id = id;
  c.case_class = cls;
  c.hidden = cls == "hidden";
  c.outputs = {passing_output()};
  return c;
}

// 4 cases: a passing public one, a failing public one, a failing hidden one, a passing one.
Verdict failing_verdict() {
  Verdict v;
  v.manifest = sample_manifest();
  v.cases.push_back(passing_case("1a2b3c4d:public0:0:id"));
  CaseFinding bad;
  bad.case_id = "1a2b3c4d:public0:1:id";
  bad.case_class = "public";
  bad.reason = Reason::mismatch;
  bad.message = "y: 3 of 4096 elements beyond the bound";
  bad.outputs = {failing_output("y"), passing_output("z")};
  v.cases.push_back(bad);
  CaseFinding hidden = bad;
  hidden.case_id = "1a2b3c4d:hidden0:0:id";
  hidden.case_class = "hidden";
  hidden.hidden = true;
  hidden.message = "y: 7 of 12297 elements beyond the bound (R=3, C=4099)";
  hidden.outputs[0].log_error_ratio = 6.5;
  v.cases.push_back(hidden);
  v.cases.push_back(passing_case("1a2b3c4d:public1:0:id"));
  v.outcome = Outcome::fail;
  v.reason = Reason::mismatch;
  v.message = bad.message;
  v.first_failing_case = bad.case_id;
  v.replay_command = "kjudge check problems/softmax cand.cu --case 1a2b3c4d:public0:1:id";
  v.cases_total = 4;
  v.cases_passed = 2;
  v.skips = {"SKIP(no GPU) red zones"};
  return v;
}

Verdict passing_verdict() {
  Verdict v;
  v.manifest = sample_manifest();
  for (int i = 0; i < 54; ++i)
    v.cases.push_back(passing_case("1a2b3c4d:public0:" + std::to_string(i) + ":id"));
  v.cases_total = 54;
  v.cases_passed = 54;
  v.skips = {"SKIP(leaves domain positive) public0 x*-1 on x"};
  return v;
}

Verdict error_verdict() {
  Verdict v;
  v.manifest = sample_manifest();
  v.outcome = Outcome::error;
  v.reason = Reason::spec_error;
  v.message = "problem.toml:3:1: tier: unknown tier \"fast\"";
  v.compiled = false;
  return v;
}

std::string console(const Verdict& v, ReportOptions o = {}) {
  std::ostringstream out;
  make_console_reporter(out, o)->report(v);
  return out.str();
}

std::string first_line(const std::string& s) {
  return s.substr(0, s.find('\n'));
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// A small XML well-formedness check: balanced tags, quoted attributes, and no raw '<' or '&'
// outside a known entity. Enough to catch escaping mistakes without an XML library.
std::string xml_problem(const std::string& doc) {
  std::vector<std::string> stack;
  auto entity_ok = [&](std::size_t i) {
    for (const char* e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#10;", "&#9;", "&#13;"})
      if (doc.compare(i, std::char_traits<char>::length(e), e) == 0) return true;
    return false;
  };
  std::size_t i = 0;
  if (doc.rfind("<?xml", 0) == 0) i = doc.find("?>") + 2;
  bool seen_root = false;
  while (i < doc.size()) {
    const char ch = doc[i];
    if (ch == '&') {
      if (!entity_ok(i)) return "bad entity at " + std::to_string(i);
      ++i;
    } else if (ch == '<') {
      const std::size_t end = doc.find('>', i);
      if (end == std::string::npos) return "unterminated tag";
      std::string tag = doc.substr(i + 1, end - i - 1);
      const bool closing = !tag.empty() && tag[0] == '/';
      const bool empty = !tag.empty() && tag.back() == '/';
      // Attribute values: quotes balanced, no '<' inside (find('>') above would stop at a
      // raw '>' in a value, which the escaping also forbids).
      std::size_t quotes = 0;
      for (std::size_t k = 0; k < tag.size(); ++k) {
        if (tag[k] == '"') ++quotes;
        if (tag[k] == '&' && !entity_ok(i + 1 + k)) return "bad entity in tag " + tag;
      }
      if (quotes % 2) return "unbalanced quotes in " + tag;
      std::string name = tag.substr(closing ? 1 : 0);
      name = name.substr(0, name.find_first_of(" /"));
      if (closing) {
        if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
        stack.pop_back();
      } else if (!empty) {
        if (stack.empty() && seen_root) return "second root element";
        seen_root = true;
        stack.push_back(name);
      }
      i = end + 1;
    } else {
      if (stack.empty() && !std::isspace(static_cast<unsigned char>(ch)))
        return "text outside the root";
      ++i;
    }
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (!seen_root) return "no root";
  return "";
}

// ---- console ----

TEST(Console, PassIsOneLinePlusSkips) {
  const std::string s = console(passing_verdict());
  EXPECT_EQ(first_line(s), "PASS softmax (54/54 cases)");
  EXPECT_TRUE(contains(s, "SKIP(leaves domain positive) public0 x*-1 on x"));
  EXPECT_FALSE(contains(s, "replay"));
}

// NaN where a number is expected (an unwritten element) has no error figure: the report says
// so instead of "max nan" and a table of zeros.
TEST(Console, NanWhereANumberIsExpectedIsExplainedNotTabulated) {
  Verdict v = failing_verdict();
  for (CaseFinding& c : v.cases)
    for (OutputFinding& y : c.outputs) {
      y.bound.max_error = std::nan("");
      y.bound.rms_error = std::nan("");
      y.stats = ErrorStats{};
    }
  const std::string s = console(v);
  EXPECT_TRUE(contains(s, "reached     no error figure: elements hold NaN where the expected "
                          "value is a number (never written, or computed as NaN)"))
      << s;
  EXPECT_FALSE(contains(s, "max nan")) << s;
  EXPECT_FALSE(contains(s, "p99.9")) << s;
}

// A verdict judged under --allow-loosen says so on the console and in JSON; one whose card
// agrees says nothing there and null.
TEST(Console, ALoosenedCardIsNamed) {
  Verdict v = passing_verdict();
  EXPECT_FALSE(contains(console(v), "LOOSENED"));
  EXPECT_TRUE(nlohmann::json::parse(to_json(v).dump())["loosened_card"].is_null());
  v.loosened_card = "output 'y': the policy 'relative(64)' is looser than 'relative'";
  EXPECT_TRUE(contains(console(v), "LOOSENED (--allow-loosen): output 'y': the policy "
                                   "'relative(64)' is looser than 'relative'\n"))
      << console(v);
  EXPECT_EQ(nlohmann::json::parse(to_json(v).dump())["loosened_card"], v.loosened_card);
}

TEST(Console, FailNamesTheCaseAndShowsTheEvidence) {
  const std::string s = console(failing_verdict());
  EXPECT_EQ(first_line(s), "FAIL(mismatch) softmax: case 1a2b3c4d:public0:1:id");
  for (const char* key : {"output y: FAIL(mismatch) 3 of 4096 elements beyond the bound",
                          "mismatches  3 of 4096 (0.0732%)",
                          "relative(16) against golden, max 4.96e-06, rms 1e-06",
                          "k=16 (f32 default)",
                          "reached     max 0.25, rms 0.004",
                          "worst       [1, 17] value 1.5 expected 1.25 error 0.25 allowed 1.9e-06",
                          "first       [1, 17]",
                          "[2, 0] value",
                          "p99.9",
                          "abs",
                          "rel",
                          "ulp",
                          "slices      1 failed",
                          "slice 1: max 0.25 (bound 4.96e-06)",
                          "output z: PASS",
                          "3 of 4096 (0.0732%), 1 non-finite; 2 excused",
                          "region      small: 3 of 40 elements beyond its bound, 2 allowed "
                          "(reference: 1) FAIL",
                          "replay: kjudge check problems/softmax cand.cu --case "
                          "1a2b3c4d:public0:1:id",
                          "2/4 cases passed",
                          "SKIP(no GPU) red zones"})
    EXPECT_TRUE(contains(s, key)) << "missing: " << key << "\n" << s;
  // The hidden failing case is shown after the first, in full unless redacted.
  EXPECT_TRUE(contains(s, "FAIL(mismatch) case 1a2b3c4d:hidden0:0:id"));
}

TEST(Console, ErrorWithoutCases) {
  const std::string s = console(error_verdict());
  EXPECT_EQ(first_line(s),
            "ERROR(spec_error) softmax: problem.toml:3:1: tier: unknown tier \"fast\"");
}

TEST(Console, RedactionHidesHiddenDetails) {
  Verdict v = failing_verdict();
  ReportOptions o;
  o.redact_hidden = true;
  std::string s = console(v, o);
  EXPECT_TRUE(contains(s, "FAIL(mismatch) a hidden case (details withheld)"));
  EXPECT_FALSE(contains(s, "hidden0")) << s;
  EXPECT_FALSE(contains(s, "4099")) << s;
  // A hidden case as the first failure: no id, no message, no replay.
  v.cases.erase(v.cases.begin() + 1);
  v.first_failing_case = "1a2b3c4d:hidden0:0:id";
  v.message = v.cases[1].message;
  v.replay_command = "kjudge check problems/softmax cand.cu --case 1a2b3c4d:hidden0:0:id";
  s = console(v, o);
  EXPECT_EQ(first_line(s), "FAIL(mismatch) softmax: a hidden case (details withheld)");
  EXPECT_FALSE(contains(s, "hidden0")) << s;
  EXPECT_FALSE(contains(s, "replay")) << s;
  EXPECT_FALSE(contains(s, "4099")) << s;
}

TEST(Console, ManyFailingCasesAreCounted) {
  Verdict v = failing_verdict();
  for (int i = 0; i < 5; ++i) {
    CaseFinding c = v.cases[1];
    c.case_id = "1a2b3c4d:public1:" + std::to_string(i) + ":id";
    v.cases.push_back(c);
  }
  ReportOptions o;
  o.max_cases_shown = 2;
  const std::string s = console(v, o);
  EXPECT_TRUE(contains(s, "... and 5 more failing cases")) << s;
}

TEST(Console, ColorOnlyWhenAsked) {
  EXPECT_FALSE(contains(console(failing_verdict()), "\x1b["));
  ReportOptions o;
  o.color = true;
  EXPECT_TRUE(contains(console(failing_verdict(), o), "\x1b[1;31mFAIL(mismatch)\x1b[0m"));
}

// ---- JSON ----

TEST(Json, NonFiniteNumbersAreStrings) {
  EXPECT_EQ(json_number(std::nan("")), "nan");
  EXPECT_EQ(json_number(HUGE_VAL), "inf");
  EXPECT_EQ(json_number(-HUGE_VAL), "-inf");
  EXPECT_EQ(json_number(1.5), 1.5);
  EXPECT_TRUE(std::isnan(number_from_json("nan")));
  EXPECT_EQ(number_from_json("inf"), HUGE_VAL);
  EXPECT_EQ(number_from_json("-inf"), -HUGE_VAL);
  EXPECT_EQ(number_from_json(2), 2.0);
  EXPECT_THROW(number_from_json("NaN"), SpecError);
  EXPECT_THROW(number_from_json(nullptr), SpecError);

  Verdict v = failing_verdict();
  v.cases[1].outputs[0].log_error_ratio = HUGE_VAL;
  v.cases[1].outputs[0].worst->allowed = std::nan("");
  v.cases[1].outputs[0].stats.ulp.max = -HUGE_VAL;
  v.cases[1].outputs[0].worst->value = std::nan("");
  const std::string text = to_json(v).dump();
  // nlohmann would write null for a raw NaN: every double must have gone through json_number.
  EXPECT_FALSE(contains(text, "null,\"expected\"")) << text;
  const auto j = nlohmann::json::parse(text);
  const auto& y = j["cases"][1]["outputs"][0];
  EXPECT_EQ(y["log_error_ratio"], "inf");
  EXPECT_EQ(y["worst"]["allowed"], "nan");
  EXPECT_EQ(y["worst"]["value"], "nan");
  EXPECT_EQ(y["stats"]["ulp"]["max"], "-inf");
  EXPECT_EQ(y["stats"]["percentiles"], "exact");
  EXPECT_EQ(j["log_error_ratio"]["y"], "inf");
}

TEST(Json, EveryTopLevelFieldWithItsType) {
  const Verdict v = failing_verdict();
  const auto j = nlohmann::json::parse(to_json(v).dump(2));
  EXPECT_EQ(j["schema_version"], kJsonSchemaVersion);
  EXPECT_EQ(j["manifest"]["problem"], "softmax");
  EXPECT_EQ(j["manifest"]["gpu"], "NVIDIA H200");
  for (const char* k : {"kjudge_version", "problem_hash", "candidate", "candidate_hash", "backend",
                        "trust", "nvrtc_version", "driver_version", "clocks", "case_budget"})
    EXPECT_TRUE(j["manifest"][k].is_string()) << k;
  EXPECT_EQ(j["outcome"], "FAIL");
  EXPECT_EQ(j["reason"], "mismatch");
  EXPECT_EQ(j["class"], "candidate");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_TRUE(j["message"].is_string());
  EXPECT_EQ(j["first_failing_case"], "1a2b3c4d:public0:1:id");
  EXPECT_EQ(j["first_failing_class"], "public");
  EXPECT_EQ(j["replay"], v.replay_command);
  EXPECT_EQ(j["cases_total"], 4);
  EXPECT_EQ(j["cases_passed"], 2);
  EXPECT_DOUBLE_EQ(j["fraction_passed"].get<double>(), 0.5);
  ASSERT_TRUE(j["cases"].is_array());
  EXPECT_EQ(j["cases"].size(), 4u);
  EXPECT_EQ(j["skips"], nlohmann::json::array({"SKIP(no GPU) red zones"}));
  // KernelBench's fields.
  EXPECT_EQ(j["compiled"], true);
  EXPECT_EQ(j["correctness"], false);
  EXPECT_TRUE(j["runtime"].is_null());
  EXPECT_TRUE(j["ref_runtime"].is_null());
  EXPECT_EQ(j["metadata"]["reason"], "mismatch");
  EXPECT_EQ(j["metadata"]["hardware"], "NVIDIA H200");
  EXPECT_TRUE(j["metadata"]["message"].is_string());
  // Reward-grade fields: the worst ratio over the cases, per output.
  EXPECT_DOUBLE_EQ(j["log_error_ratio"]["y"].get<double>(), 6.5);
  EXPECT_DOUBLE_EQ(j["log_error_ratio"]["z"].get<double>(), -1.5);
  EXPECT_EQ(j["reward"]["eligible"], true);
  EXPECT_EQ(j["reward"]["correct"], false);
  EXPECT_DOUBLE_EQ(j["reward"]["fraction_passed"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["reward"]["log_error_ratio"].get<double>(), 6.5);
  EXPECT_TRUE(j["reward"]["speedup"].is_null());
}

TEST(Json, CaseAndOutputFields) {
  const auto j = to_json(failing_verdict());
  const auto& c = j["cases"][1];
  EXPECT_EQ(c["id"], "1a2b3c4d:public0:1:id");
  EXPECT_EQ(c["class"], "public");
  EXPECT_EQ(c["hidden"], false);
  EXPECT_EQ(c["redacted"], false);
  EXPECT_EQ(c["outcome"], "FAIL");
  EXPECT_EQ(c["reason"], "mismatch");
  ASSERT_EQ(c["outputs"].size(), 2u);
  const auto& y = c["outputs"][0];
  EXPECT_EQ(y["output"], "y");
  EXPECT_EQ(y["outcome"], "FAIL");
  EXPECT_EQ(y["count"], 4096);
  EXPECT_EQ(y["mismatches"], 3);
  EXPECT_TRUE(y["mismatch_fraction"].is_number());
  EXPECT_EQ(y["worst"]["index"], nlohmann::json::array({1, 17}));
  EXPECT_EQ(y["worst"]["flat"], 4113);
  EXPECT_EQ(y["first"].size(), 3u);
  for (const char* m : {"abs", "rel", "ulp"})
    for (const char* p : {"p50", "p99", "p999", "max"})
      EXPECT_TRUE(y["stats"][m][p].is_number()) << m << "." << p;
  EXPECT_EQ(y["bound"]["policy"], "relative(16)");
  EXPECT_EQ(y["bound"]["expected"], "golden");
  EXPECT_TRUE(y["bound"]["source"].is_string());
  EXPECT_EQ(y["failed_slices"][0]["slice"], 1);
  EXPECT_EQ(y["failed_slice_count"], 1);
  EXPECT_EQ(y["nonfinite"], 1);
  EXPECT_EQ(y["excused"], 2);
  EXPECT_EQ(y["regions"][0]["region"], "small");
  EXPECT_EQ(y["regions"][0]["errors"], 3);
  EXPECT_EQ(y["regions"][0]["pass"], false);
  EXPECT_TRUE(c["outputs"][1]["worst"].is_null());
  EXPECT_EQ(c["outputs"][1]["outcome"], "PASS");
  EXPECT_EQ(c["outputs"][1]["reason"], "none");
}

TEST(Json, RedactionLeavesOnlyClassAndReason) {
  Verdict v = failing_verdict();
  ReportOptions o;
  o.redact_hidden = true;
  auto j = to_json(v, o);
  const auto& h = j["cases"][2];
  std::vector<std::string> keys;
  for (const auto& [k, value] : h.items())
    keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"class", "hidden", "outcome", "reason", "redacted"}));
  EXPECT_EQ(h["class"], "hidden");
  EXPECT_EQ(h["reason"], "mismatch");
  std::string text = j.dump();
  EXPECT_FALSE(contains(text, "hidden0")) << text;
  EXPECT_FALSE(contains(text, "4099")) << text;
  EXPECT_FALSE(contains(text, "12297")) << text;
  // Public cases are untouched.
  EXPECT_EQ(j["cases"][1]["id"], "1a2b3c4d:public0:1:id");

  // A hidden first failure: the verdict-level id, message and replay go too.
  v.cases.erase(v.cases.begin() + 1);
  v.first_failing_case = "1a2b3c4d:hidden0:0:id";
  v.message = v.cases[1].message;
  v.replay_command = "kjudge check x --case 1a2b3c4d:hidden0:0:id";
  j = to_json(v, o);
  text = j.dump();
  EXPECT_TRUE(j["first_failing_case"].is_null());
  EXPECT_EQ(j["first_failing_class"], "hidden");
  EXPECT_TRUE(j["replay"].is_null());
  EXPECT_FALSE(contains(text, "hidden0")) << text;
  EXPECT_FALSE(contains(text, "4099")) << text;
  // Without redaction everything is there.
  EXPECT_TRUE(contains(to_json(v).dump(), "4099"));
}

TEST(Json, ErrorIsNotEligibleForReward) {
  const auto j = to_json(error_verdict());
  EXPECT_EQ(j["outcome"], "ERROR");
  EXPECT_EQ(j["class"], "problem");
  EXPECT_EQ(j["exit_code"], 2);
  EXPECT_EQ(j["compiled"], false);
  EXPECT_EQ(j["correctness"], false);
  EXPECT_EQ(j["reward"]["eligible"], false);
  EXPECT_TRUE(j["first_failing_case"].is_null());
  EXPECT_TRUE(j["reward"]["log_error_ratio"].is_null());
  EXPECT_EQ(j["log_error_ratio"], nlohmann::json::object());
}

TEST(Json, PassAndRuntimes) {
  Verdict v = passing_verdict();
  v.runtime_ms = 0.5;
  v.ref_runtime_ms = 1.0;
  const auto j = to_json(v);
  EXPECT_EQ(j["outcome"], "PASS");
  EXPECT_EQ(j["reason"], "none");
  EXPECT_EQ(j["class"], "none");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["correctness"], true);
  EXPECT_DOUBLE_EQ(j["runtime"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["ref_runtime"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["reward"]["speedup"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["fraction_passed"].get<double>(), 1.0);
}

// A GPU bench's verdict: one timed case with the timing loop's figures, a recorded baseline,
// the plan's resources.
Verdict gpu_bench_verdict() {
  Verdict v = passing_verdict();
  v.timer = "cuda_events";
  CaseTiming t;
  t.candidate_ms = {0.5, 0.5, 0.5, 0.5};
  t.reference_ms = {1.0, 1.0, 1.0, 1.0};
  t.throttled = 8;
  t.sm_clock_mhz = 1980;
  t.converged = true;
  t.rotation = 8;
  t.wall_s = 0.7;
  t.floor_bytes = 2e8;
  t.bandwidth_gbs = 4000;
  t.floor_ms = 0.05;
  t.baseline_ms = 0.25;
  t.baseline = "vendor kernel";
  v.cases[0].timing = t;
  v.runtime_ms = 0.5;
  v.ref_runtime_ms = 1.0;
  v.speedup_low = 1.9;
  v.speedup_high = 2.1;
  v.fraction_of_floor = 0.1;
  v.baseline_runtime_ms = 0.25;
  v.baseline = "vendor kernel";
  v.resources.push_back({"launch[0] 'k'", 32, 1024, 0, 0, 256, 8, 1.0, 0.75});
  v.memory_bytes = 192;
  v.ref_memory_bytes = 192;
  return v;
}

// The same with a baseline timed in the run and a FLOP floor.
Verdict gpu_bench_timed_baseline_verdict() {
  Verdict v = gpu_bench_verdict();
  CaseTiming& t = *v.cases[0].timing;
  t.baseline_samples_ms = {0.25, 0.24, 0.26, 0.25};
  t.baseline = "cuBLAS SGEMM";
  t.floor_bytes_ms = 0.05;
  t.floor_flops = 1e9;
  t.peak_tflops = 400;
  t.floor_flops_ms = 0.0025;
  t.peak_unit = "tf32 tensor cores: cuBLAS 13.0.2 GEMM 8192^3, best of 3";
  v.baseline = "cuBLAS SGEMM";
  v.baseline_timed = true;
  return v;
}

TEST(Json, GpuBenchFields) {
  const auto j = nlohmann::json::parse(to_json(gpu_bench_verdict()).dump());
  EXPECT_EQ(j["timer"], "cuda_events");
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), 2.0);
  EXPECT_EQ(j["speedup_ci"], nlohmann::json::array({1.9, 2.1}));
  EXPECT_DOUBLE_EQ(j["fraction_of_floor"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j["baseline_runtime"].get<double>(), 0.25);
  EXPECT_EQ(j["baseline"], "vendor kernel");
  EXPECT_DOUBLE_EQ(j["baseline_speedup"].get<double>(), 0.5);
  ASSERT_EQ(j["resources"].size(), 1u);
  EXPECT_EQ(j["resources"][0]["registers"], 32);
  EXPECT_EQ(j["resources"][0]["blocks_per_sm"], 8);
  EXPECT_EQ(j["memory_bytes"], 192);
  const auto& t = j["cases"][0]["timing"];
  EXPECT_EQ(t["throttled"], 8);
  EXPECT_EQ(t["converged"], true);
  EXPECT_EQ(t["rotation"], 8);
  EXPECT_DOUBLE_EQ(t["floor_ms"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(t["fraction_of_floor"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(t["baseline_ms"].get<double>(), 0.25);
  EXPECT_EQ(t["candidate"]["samples"], 4);
  EXPECT_DOUBLE_EQ(j["resources"][0]["grid_occupancy"].get<double>(), 0.75);
  EXPECT_EQ(j["baseline_timed"], false); // recorded
  EXPECT_TRUE(t["floor_flops"].is_null() && t["peak_tflops"].is_null()) << t;
  EXPECT_FALSE(t.contains("baseline_samples_ms"));
  // Without a bench the new fields are null, not absent.
  const auto plain = to_json(passing_verdict());
  for (const char* k : {"speedup_ci", "fraction_of_floor", "baseline_runtime", "baseline",
                        "baseline_timed", "baseline_speedup", "memory_bytes"})
    EXPECT_TRUE(plain.contains(k) && plain[k].is_null()) << k;
}

TEST(Json, TimedBaselineAndFlopFloor) {
  const auto j = nlohmann::json::parse(to_json(gpu_bench_timed_baseline_verdict()).dump());
  EXPECT_EQ(j["baseline_timed"], true);
  EXPECT_EQ(j["baseline"], "cuBLAS SGEMM");
  const auto& t = j["cases"][0]["timing"];
  EXPECT_EQ(t["baseline_samples_ms"].size(), 4u);
  EXPECT_DOUBLE_EQ(t["baseline_stats"]["median_ms"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(t["floor_flops"].get<double>(), 1e9);
  EXPECT_DOUBLE_EQ(t["peak_tflops"].get<double>(), 400);
  EXPECT_DOUBLE_EQ(t["floor_flops_ms"].get<double>(), 0.0025);
  EXPECT_DOUBLE_EQ(t["floor_bytes_ms"].get<double>(), 0.05);
  EXPECT_EQ(t["peak_unit"], "tf32 tensor cores: cuBLAS 13.0.2 GEMM 8192^3, best of 3");
}

TEST(Console, TimedBaselineAndFlopFloor) {
  const std::string s = console(gpu_bench_timed_baseline_verdict());
  EXPECT_TRUE(contains(s, "floor 1e+09 FLOPs at 400.0 TFLOP/s (tf32 tensor cores")) << s;
  EXPECT_TRUE(contains(s, "baseline cuBLAS SGEMM: 0.25 ms, speedup 0.5x")) << s;
  EXPECT_TRUE(contains(s, "baseline cuBLAS SGEMM: 0.25 ms timed in this run, speedup 0.5x")) << s;
  EXPECT_TRUE(contains(s, "occupancy 100% (75% with the grid's waves)")) << s;
}

TEST(Console, GpuBenchTable) {
  const std::string s = console(gpu_bench_verdict());
  EXPECT_TRUE(contains(s, "timed case")) << s;
  EXPECT_TRUE(contains(s, "1a2b3c4d:public0:0:id")) << s;
  EXPECT_TRUE(contains(s, "8 throttled sample(s) dropped, SM clock 1980 MHz, 8 input sets")) << s;
  EXPECT_TRUE(contains(s, "launch[0] 'k': 32 registers")) << s;
  EXPECT_TRUE(contains(s, "speedup 2x [1.9, 2.1], 10% of the physical floor's speed")) << s;
  EXPECT_TRUE(contains(s, "baseline vendor kernel: 0.25 ms recorded on NVIDIA H200, speedup 0.5x"))
      << s;
}

// ---- provenance: where every figure comes from --------------------------------------------

// softmax's tensors, as check fills them (record_problem_dtypes).
void with_dtypes(Verdict& v) {
  v.provenance.inputs = {{"x", "f32"}};
  v.provenance.outputs = {{"y", "f32"}, {"z", "bf16"}};
}

TEST(Json, ACheckVerdictsProvenanceHasDtypesAndTheCaseCacheButNoTimer) {
  Verdict v = passing_verdict();
  with_dtypes(v);
  v.manifest.case_cache_hits = 40;
  v.manifest.case_cache_misses = 14;
  v.manifest.case_cache_disk_hits = 3;
  v.manifest.case_cache_disk_stored = 11;
  v.manifest.case_cache_disk_corrupt = 1;
  v.manifest.case_cache_disk_declined = 2;
  const auto j = nlohmann::json::parse(to_json(v).dump());
  EXPECT_EQ(j["manifest"]["case_cache"],
            (nlohmann::json{{"hits", 40},
                            {"misses", 14},
                            {"disk_hits", 3},
                            {"disk_stored", 11},
                            {"disk_corrupt", 1},
                            {"disk_declined", 2}}));
  const auto& p = j["provenance"];
  EXPECT_EQ(p["inputs"], nlohmann::json::parse(R"([{"name": "x", "dtype": "f32"}])"));
  EXPECT_EQ(p["outputs"], nlohmann::json::parse(R"([{"name": "y", "dtype": "f32"},
                                                   {"name": "z", "dtype": "bf16"}])"));
  EXPECT_EQ(p["driver_release"], "");
  EXPECT_TRUE(p["sm_clock"]["mhz"].is_null());
  EXPECT_TRUE(p["sm_clock"]["source"].is_null());
  EXPECT_TRUE(p["timer"].is_null());
  EXPECT_TRUE(p["sample"].is_null());
  EXPECT_EQ(p["figures"], nlohmann::json::object());
  EXPECT_TRUE(j["latency"].is_null());
  // A fresh manifest counts nothing: the counters are there, at 0.
  EXPECT_EQ(to_json(Manifest{})["case_cache"],
            (nlohmann::json{{"hits", 0},
                            {"misses", 0},
                            {"disk_hits", 0},
                            {"disk_stored", 0},
                            {"disk_corrupt", 0},
                            {"disk_declined", 0}}));
}

// A host bench: CPU time, the sums of medians, the pooled latencies with --against and an SLO.
Verdict host_bench_verdict() {
  Verdict v = passing_verdict();
  with_dtypes(v);
  v.timer = "host_cpu";
  CaseTiming t;
  t.candidate_ms = {0.4, 0.5, 0.6};
  t.reference_ms = {1.0, 1.0, 1.0};
  t.against_ms = {0.7, 0.8, 0.9};
  v.cases[0].timing = t;
  v.runtime_ms = 0.5;
  v.ref_runtime_ms = 1.0;
  Latency l;
  l.candidate = {0.5, 0.6, 0.6, 0.6, 3};
  l.against = LatencyDistribution{0.8, 0.9, 0.9, 0.9, 3};
  l.slo_p99_ms = 0.75;
  v.latency = l;
  return v;
}

TEST(Json, AHostBenchSaysWhatEveryFigureIsAndItsTimer) {
  const auto j = nlohmann::json::parse(to_json(host_bench_verdict()).dump());
  const auto& p = j["provenance"];
  EXPECT_EQ(p["timer"], "host_cpu");
  EXPECT_EQ(p["sample"],
            "the CPU time of one run's launches, summed over the host worker's threads that ran "
            "blocks, on every public-class case of the host plan (--runs runs each, fewer when "
            "stopped early)");
  const auto& f = p["figures"];
  std::vector<std::string> names;
  for (const auto& [k, value] : f.items()) {
    names.push_back(k);
    EXPECT_EQ(value["timer"], "host_cpu") << k;
  }
  // No interval, floor or baseline on the host: only the figures the verdict holds.
  EXPECT_EQ(names, (std::vector<std::string>{"cases.timing", "latency", "ref_runtime", "runtime",
                                             "speedup"}));
  EXPECT_EQ(f["runtime"]["statistic"], "median of the candidate's samples of each timed case");
  EXPECT_EQ(f["runtime"]["aggregation"], "sum over the timed cases");
  EXPECT_EQ(f["ref_runtime"]["statistic"], "median of the reference's samples of each timed case");
  EXPECT_EQ(f["speedup"]["statistic"], "ref_runtime / runtime");
  EXPECT_EQ(f["speedup"]["aggregation"], "the ratio of the two sums of medians");
  EXPECT_EQ(f["latency"]["statistic"],
            "nearest-rank p50, p90 and p99 (the sample at rank ceil(q n)), max and count n");
  EXPECT_EQ(f["latency"]["aggregation"],
            "every timed run of every timed case pooled, per kernel (candidate, against)");
  EXPECT_TRUE(p["sm_clock"]["mhz"].is_null()); // no clock on the host

  const auto& l = j["latency"];
  EXPECT_EQ(l["candidate"], nlohmann::json::parse(R"({"p50_ms": 0.5, "p90_ms": 0.6,
                              "p99_ms": 0.6, "max_ms": 0.6, "n": 3})"));
  EXPECT_EQ(l["against"], nlohmann::json::parse(R"({"p50_ms": 0.8, "p90_ms": 0.9,
                            "p99_ms": 0.9, "max_ms": 0.9, "n": 3})"));
  EXPECT_EQ(l["slo_p99_ms"], 0.75);
  EXPECT_EQ(l["slo_met"], true);
  const auto& t = j["cases"][0]["timing"];
  EXPECT_EQ(t["against_ms"], nlohmann::json::array({0.7, 0.8, 0.9}));
  EXPECT_DOUBLE_EQ(t["against"]["median_ms"].get<double>(), 0.8);
  EXPECT_EQ(t["against"]["samples"], 3);
  // Without --against: no against series, and no SLO: slo_met null.
  Verdict plain = host_bench_verdict();
  plain.latency->against.reset();
  plain.latency->slo_p99_ms.reset();
  plain.cases[0].timing->against_ms.clear();
  const auto k = to_json(plain);
  EXPECT_TRUE(k["latency"]["against"].is_null());
  EXPECT_TRUE(k["latency"]["slo_met"].is_null());
  EXPECT_FALSE(k["cases"][0]["timing"].contains("against_ms"));
}

TEST(Console, TheLatencyLineShowsBothDistributionsAndTheSlo) {
  Verdict v = host_bench_verdict();
  EXPECT_TRUE(contains(console(v),
                       "latency (CPU time, every timed run): candidate p50 0.5 ms, p90 0.6 ms, "
                       "p99 0.6 ms, max 0.6 ms (n 3); --against kernel p50 0.8 ms, p90 0.9 ms, "
                       "p99 0.9 ms, max 0.9 ms (n 3); SLO p99 <= 0.75 ms: met\n"))
      << console(v);
  v.latency->slo_p99_ms = 0.55;
  EXPECT_TRUE(contains(console(v), "; SLO p99 <= 0.55 ms: MISSED\n")) << console(v);
}

TEST(Json, AGpuBenchGivesTheMeasuredClockAndTheIntervalsMeaning) {
  Verdict v = gpu_bench_verdict();
  v.provenance.driver_release = "580.65.06";
  v.provenance.sm_clock_mhz = 1980;
  v.provenance.sm_clock_source = "measured";
  const auto j = nlohmann::json::parse(to_json(v).dump());
  const auto& p = j["provenance"];
  EXPECT_EQ(p["driver_release"], "580.65.06");
  EXPECT_EQ(p["sm_clock"], (nlohmann::json{{"mhz", 1980}, {"source", "measured"}}));
  EXPECT_EQ(p["timer"], "cuda_events");
  const auto& f = p["figures"];
  for (const char* k : {"cases.timing", "runtime", "ref_runtime", "speedup", "speedup_ci",
                        "fraction_of_floor", "baseline_runtime", "baseline_speedup"})
    EXPECT_EQ(f[k]["timer"], "cuda_events") << k;
  EXPECT_EQ(f["speedup_ci"]["statistic"],
            "95% interval of the ratio of the sums of medians: speedup x [max(0, 1 - 1.96 r), 1 + "
            "1.96 r], r = sqrt((se_runtime / runtime)^2 + (se_ref_runtime / ref_runtime)^2)");
  EXPECT_EQ(f["fraction_of_floor"]["statistic"],
            "the timed cases' physical floors summed, over runtime");
  EXPECT_FALSE(f.contains("latency")); // this verdict has none
}

TEST(Json, ReporterWritesParseableJsonEvenWithBadUtf8) {
  Verdict v = failing_verdict();
  v.message = "compiler said \xff\xfe";
  std::ostringstream out;
  make_json_reporter(out)->report(v);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["outcome"], "FAIL");
}

// ---- JUnit ----

TEST(Junit, WellFormedWithEscaping) {
  Verdict v = failing_verdict();
  v.manifest.problem = "soft<max> & \"co\"";
  v.cases[1].message = "a < b && c > \"d\" 'e'\x01";
  v.cases[1].reason = Reason::mismatch;
  std::ostringstream out;
  {
    auto r = make_junit_reporter(out);
    r->report(v);
    r->report(error_verdict());
    r->finish();
  }
  const std::string xml = out.str();
  EXPECT_EQ(xml_problem(xml), "") << xml;
  EXPECT_TRUE(contains(xml, "<testsuite name=\"soft&lt;max&gt; &amp; &quot;co&quot;\" tests=\"5\" "
                            "failures=\"2\" errors=\"0\" skipped=\"1\">"))
      << xml;
  EXPECT_TRUE(contains(xml, "<failure message=\"mismatch\" type=\"mismatch\">a &lt; b &amp;&amp; "
                            "c &gt; &quot;d&quot; &apos;e&apos;\xef\xbf\xbd"))
      << xml;
  EXPECT_TRUE(contains(xml, "<testcase classname=\"softmax\" name=\"verdict\">\n      <error "
                            "message=\"spec_error\""))
      << xml;
  EXPECT_TRUE(contains(xml, "<skipped message=\"SKIP(no GPU) red zones\"/>")) << xml;
  // One document, two suites.
  std::size_t suites = 0;
  for (std::size_t p = xml.find("<testsuite "); p != std::string::npos;
       p = xml.find("<testsuite ", p + 1))
    ++suites;
  EXPECT_EQ(suites, 2u);
}

TEST(Junit, DestructorClosesAndRedactionHolds) {
  std::ostringstream out;
  ReportOptions o;
  o.redact_hidden = true;
  make_junit_reporter(out, o)->report(failing_verdict());
  const std::string xml = out.str();
  EXPECT_EQ(xml_problem(xml), "") << xml;
  EXPECT_TRUE(contains(xml, "name=\"hidden case 0\""));
  EXPECT_FALSE(contains(xml, "hidden0"));
  EXPECT_FALSE(contains(xml, "4099"));
  std::ostringstream empty;
  make_junit_reporter(empty).reset();
  EXPECT_EQ(xml_problem(empty.str()), "") << empty.str();
}

TEST(Junit, TheCheckerCatchesBadXml) {
  EXPECT_NE(xml_problem("<a>x & y</a>"), "");
  EXPECT_NE(xml_problem("<a b=\"1></a>"), "");
  EXPECT_NE(xml_problem("<a><b></a>"), "");
  EXPECT_EQ(xml_problem("<a b=\"&lt;\"><c/>t &amp; u</a>"), "");
}

// ---- validate ----

TEST(Diagnostics, PrintLikeACompiler) {
  Diagnostic d{Diagnostic::Severity::error, {"p/reference.cu", "", 5, 21}, "expf caps the golden"};
  EXPECT_EQ(format_diagnostic(d), "p/reference.cu:5:21: error: expf caps the golden");
  d.where = {"p/problem.toml", "tier", 5, 0};
  d.severity = Diagnostic::Severity::warning;
  EXPECT_EQ(format_diagnostic(d), "p/problem.toml:5: warning: tier: expf caps the golden");
  d.where = {};
  EXPECT_EQ(format_diagnostic(d), "kjudge: warning: expf caps the golden");
}

}  // namespace

TEST(ShellQuote, PlainWordsStayAndTheRestIsQuoted) {
  EXPECT_EQ(kj::shell_quote("problems/softmax"), "problems/softmax");
  EXPECT_EQ(kj::shell_quote("08089ad7:public0:1:id"), "08089ad7:public0:1:id");
  EXPECT_EQ(kj::shell_quote("x*3"), "'x*3'");
  EXPECT_EQ(kj::shell_quote("~/cand.cu"), "'~/cand.cu'");
  EXPECT_EQ(kj::shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(kj::shell_quote(""), "''");
}
