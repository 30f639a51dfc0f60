// The suite library: the manifest and samples read (faults named by file, line and field), the
// unbiased pass@k, and the summary's figures on hand-made outcomes whose values are worked out
// in the comments.
#include <fstream>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/suite.hpp"

namespace kj::suite {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path temp_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kjudge-suite-test-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
}

std::string spec_error_of(auto&& call) {
  try {
    call();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PassAtK, IsTheUnbiasedEstimator) {
  EXPECT_DOUBLE_EQ(*pass_at_k(10, 3, 1), 0.3);
  EXPECT_DOUBLE_EQ(*pass_at_k(10, 3, 5), 1.0 - 21.0 / 252.0); // C(7,5) / C(10,5)
  EXPECT_DOUBLE_EQ(*pass_at_k(10, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(*pass_at_k(5, 1, 5), 1.0);  // every draw of 5 holds the correct one
  EXPECT_FALSE(pass_at_k(4, 1, 5).has_value()); // fewer samples than k: none, not a guess
  EXPECT_NEAR(*pass_at_k(1000, 10, 10), 1.0 - 0.9043, 1e-3); // large n stays finite
}

TEST(Suite, TheBundledManifestLoads) {
  const Suite s = load_suite(fs::path(KJ_SOURCE_DIR) / "problems");
  EXPECT_EQ(s.name, "problems");
  EXPECT_EQ(s.problems.size(), 20u);
  EXPECT_EQ(s.problems.front().name, "vector_add");
  EXPECT_FALSE(bundled_samples(s).empty());
}

TEST(Suite, ManifestFaultsNameTheField) {
  const fs::path dir = temp_folder("manifest");
  EXPECT_NE(spec_error_of([&] { load_suite(dir); }).find("no manifest.toml"), std::string::npos);
  write(dir / "a" / "problem.toml", "");
  write(dir / "manifest.toml", "[[problem]]\nname = \"a\"\npath = \"a\"\n"
                               "[[problem]]\nname = \"a\"\npath = \"a\"\n");
  EXPECT_NE(spec_error_of([&] { load_suite(dir); }).find("problem[1].name: 'a' is listed twice"),
            std::string::npos);
  write(dir / "manifest.toml", "debug = [\"b\"]\n[[problem]]\nname = \"a\"\npath = \"a\"\n");
  EXPECT_NE(spec_error_of([&] { load_suite(dir); }).find("debug[0]: not a problem"),
            std::string::npos);
  write(dir / "manifest.toml", "[[problem]]\nname = \"a\"\npath = \"missing\"\n");
  EXPECT_NE(spec_error_of([&] { load_suite(dir); }).find("problem[0].path"), std::string::npos);
}

TEST(Suite, SamplesFromJsonLinesAreCheckedLineByLine) {
  const fs::path dir = temp_folder("samples");
  write(dir / "a" / "problem.toml", "");
  write(dir / "b" / "problem.toml", "");
  write(dir / "manifest.toml", "debug = [\"b\"]\n[[problem]]\nname = \"a\"\npath = \"a\"\n"
                               "category = \"elementwise\"\n[[problem]]\nname = \"b\"\npath = \"b\"\n");
  const Suite s = load_suite(dir);
  EXPECT_EQ(s.problems[0].category, "elementwise");
  EXPECT_EQ(s.problems[1].category, "uncategorized");
  EXPECT_EQ(s.debug, std::vector<std::string>{"b"});
  write(dir / "samples.jsonl",
        R"({"problem": "b", "sample_id": "2", "source": "x", "metadata": {"model": "m"}})" "\n\n"
        R"({"problem": "a", "sample_id": "1", "source": "y"})" "\n");
  const std::vector<Sample> samples = load_samples(dir / "samples.jsonl", s);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].problem, "a"); // the suite's order
  EXPECT_EQ(samples[1].metadata["model"], "m");
  write(dir / "bad.jsonl", R"({"problem": "a", "sample_id": "1", "source": "y"})" "\n"
                           R"({"problem": "c", "sample_id": "1", "source": "y"})" "\n");
  EXPECT_NE(spec_error_of([&] { load_samples(dir / "bad.jsonl", s); })
                .find("bad.jsonl:2: problem: no problem 'c'"),
            std::string::npos);
  write(dir / "twice.jsonl", R"({"problem": "a", "sample_id": "1", "source": "y"})" "\n"
                             R"({"problem": "a", "sample_id": "1", "source": "z"})" "\n");
  EXPECT_NE(spec_error_of([&] { load_samples(dir / "twice.jsonl", s); }).find("a/1 appears twice"),
            std::string::npos);
  write(dir / "junk.jsonl", "{not json\n");
  EXPECT_NE(spec_error_of([&] { load_samples(dir / "junk.jsonl", s); }).find("junk.jsonl:1: not JSON"),
            std::string::npos);
}

Outcome judged(const char* problem, const char* sample, bool compiled, bool correct,
               std::optional<double> speedup = std::nullopt,
               std::optional<double> baseline_speedup = std::nullopt) {
  Outcome o;
  o.problem = problem;
  o.sample = sample;
  o.compiled = compiled;
  o.correct = correct;
  o.speedup = speedup;
  o.baseline_speedup = baseline_speedup;
  return o;
}

TEST(Summary, FiguresOnHandMadeOutcomes) {
  Suite s;
  s.name = "toy";
  s.problems = {{"p", "p", "elementwise"}, {"q", "q", "reduction"}, {"r", "r", "reduction"}};
  // p: 2 samples, both correct, speedups 2 and 8 over the reference, no baseline.
  // q: 2 samples, one correct at 0.5x the reference and 1.5x its baseline.
  // r: one sample that does not compile.
  const std::vector<Outcome> outcomes = {
      judged("p", "1", true, true, 2.0), judged("p", "2", true, true, 8.0),
      judged("q", "1", true, true, 0.5, 1.5), judged("q", "2", true, false),
      judged("r", "1", false, false)};
  const json j = summarize(s, outcomes);
  const json& f = j["suite_figures"];
  EXPECT_DOUBLE_EQ(f["accuracy"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(f["pass_at_k"]["pass@1"].get<double>(), (1.0 + 0.5 + 0.0) / 3.0);
  EXPECT_TRUE(f["pass_at_k"]["pass@5"].is_null()); // no problem has 5 samples
  // fast_p over 3 problems: p's best is 8 (reference), q's is 1.5 (its baseline), r has none.
  EXPECT_DOUBLE_EQ(f["fast_p"]["fast_0"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(f["fast_p"]["fast_1"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(f["fast_p"]["fast_1.2"].get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(f["fast_p"]["fast_2"].get<double>(), 1.0 / 3.0);
  // Over the three correct samples' reference speedups 2, 8, 0.5: (2*8*0.5)^(1/3) = 2.
  EXPECT_DOUBLE_EQ(f["speedup_geometric_mean"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(f["speedup_arithmetic_mean"].get<double>(), 3.5);
  EXPECT_EQ(j["problems"][1]["speedup_for_fast_p_against"], "baseline");
  EXPECT_EQ(j["problems"][0]["fastest_correct"], "2");
  EXPECT_DOUBLE_EQ(j["categories"]["reduction"]["accuracy"].get<double>(), 0.5);
  const std::string md = summary_markdown(j);
  EXPECT_NE(md.find("| speedup, geometric mean | 2.000x |"), std::string::npos);
  EXPECT_NE(md.find("| r | 1 | 0 | 0 | - | - |"), std::string::npos);
  EXPECT_EQ(j["judge_seconds"]["total"], 0.0); // none measured
}

TEST(Summary, JudgeSecondsAreSummedByPhase) {
  Suite s;
  s.name = "toy";
  s.problems = {{"p", "p", "elementwise"}};
  std::vector<Outcome> outcomes = {judged("p", "1", true, true, 2.0), judged("p", "2", false, false)};
  outcomes[0].seconds = 3.0;
  outcomes[0].compile_seconds = 1.0;
  outcomes[0].check_seconds = 0.5;
  outcomes[0].bench_seconds = 1.5;
  outcomes[1].seconds = outcomes[1].compile_seconds = 0.25;
  const json j = summarize(s, outcomes)["judge_seconds"];
  EXPECT_EQ(j["total"], 3.25);
  EXPECT_EQ(j["compile"], 1.25);
  EXPECT_EQ(j["check"], 0.5);
  EXPECT_EQ(j["bench"], 1.5);
  EXPECT_NE(summary_markdown(summarize(s, outcomes))
                .find("Judge time: 3.2 s (compile 1.2 s, check 0.5 s, bench 1.5 s)"),
            std::string::npos);
}

TEST(Summary, AnOutcomeReadsAResultsLine) {
  const Outcome o = outcome_of(json::parse(
      R"({"problem": "p", "sample": "s", "compiled": true, "correct": true, "speedup": 1.5,
          "baseline_speedup": null})"));
  EXPECT_EQ(o.problem, "p");
  EXPECT_TRUE(o.correct);
  EXPECT_DOUBLE_EQ(*o.speedup, 1.5);
  EXPECT_FALSE(o.baseline_speedup.has_value());
  EXPECT_FALSE(o.seconds.has_value());
  const Outcome timed = outcome_of(json::parse(
      R"({"problem": "p", "sample": "s", "seconds": 2.5,
          "phase_seconds": {"compile": 1.0, "check": 1.25, "bench": 0.25}})"));
  EXPECT_EQ(timed.seconds, 2.5);
  EXPECT_EQ(timed.check_seconds, 1.25);
  EXPECT_EQ(timed.bench_seconds, 0.25);
}

} // namespace
} // namespace kj::suite
