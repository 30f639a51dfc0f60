// `kjudge run`'s library on the host backend: a small suite's samples judged into a folder, an
// interrupted run resumed (what it lacks judged, nothing twice, the files as an uninterrupted
// run's apart from times), and two shards merged into the whole.
#include <fstream>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/suite.hpp"

namespace kj::suite {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kProblems = fs::path(KJ_SOURCE_DIR) / "problems";

RunOptions host_options() {
  RunOptions o;
  o.judge.defaults.backend = Backend::host;
  o.judge.defaults.self_exe = KJ_KJUDGE_EXE;
  o.judge.defaults.cache_dir = fs::temp_directory_path() / "kjudge-suite-run-cache";
  o.runs = 1;
  return o;
}

// vector_add's samples: two solutions and a trap that fails.
std::vector<Sample> three_samples(const Suite& s) {
  std::vector<Sample> picked;
  for (Sample& x : select_samples(s, bundled_samples(s), {{"vector_add"}, false, 0, 1}))
    if (x.id == "solutions/basic" || x.id == "solutions/grid_stride" || x.id == "traps/off_by_one")
      picked.push_back(std::move(x));
  return picked;
}

std::vector<json> lines_of(const fs::path& file) {
  std::vector<json> lines;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) lines.push_back(json::parse(line));
  return lines;
}

// A line without what differs from run to run (times, timings, when).
json steady(json line) {
  for (const char* k : {"seconds", "phase_seconds", "judged_at", "runtime_ms", "ref_runtime_ms", "speedup",
                        "baseline_speedup"})
    line.erase(k);
  return line;
}

fs::path fresh(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("kjudge-suite-run-" + name);
  fs::remove_all(dir);
  return dir;
}

TEST(Run, JudgesResumesAndMerges) {
  const Suite s = load_suite(kProblems);
  const std::vector<Sample> samples = three_samples(s);
  ASSERT_EQ(samples.size(), 3u);

  const fs::path whole = fresh("whole");
  const RunReport first = run_suite(s, samples, whole, host_options());
  EXPECT_EQ(first.judged, 3u);
  const std::vector<json> lines = lines_of(whole / "results.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["sample"], "solutions/basic");
  EXPECT_EQ(lines[0]["outcome"], "PASS");
  EXPECT_EQ(lines[2]["sample"], "traps/off_by_one");
  EXPECT_EQ(lines[2]["outcome"], "FAIL");
  // The judge's seconds split by phase, adding up (the host's timed runs ride in the cases, so
  // its bench phase is only the call that would time public cases on a GPU).
  const json& phases = lines[0]["phase_seconds"];
  EXPECT_GT(phases["compile"].get<double>(), 0);
  EXPECT_GT(phases["check"].get<double>(), 0);
  EXPECT_GE(phases["bench"].get<double>(), 0);
  EXPECT_NEAR(phases["compile"].get<double>() + phases["check"].get<double>() +
                  phases["bench"].get<double>(),
              lines[0]["seconds"].get<double>(), 1e-9);
  EXPECT_EQ(first.summary["suite_figures"]["accuracy"], 1.0);
  EXPECT_DOUBLE_EQ(first.summary["suite_figures"]["pass_at_k"]["pass@1"].get<double>(), 2.0 / 3.0);
  for (const char* f : {"summary.json", "summary.md", "junit.xml", "report.html"})
    EXPECT_TRUE(fs::exists(whole / f)) << f;

  // Interrupted: the first line kept, the second cut off mid-write, the third never written.
  const fs::path cut = fresh("cut");
  fs::create_directories(cut);
  {
    std::ofstream f(cut / "results.jsonl");
    f << lines[0].dump() << "\n" << lines[1].dump().substr(0, 40);
  }
  const RunReport resumed = run_suite(s, samples, cut, host_options());
  EXPECT_EQ(resumed.resumed, 1u);
  EXPECT_EQ(resumed.judged, 2u);
  const std::vector<json> after = lines_of(cut / "results.jsonl");
  ASSERT_EQ(after.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(steady(after[i]), steady(lines[i])) << i;
  // Resumed again, nothing is left to judge.
  EXPECT_EQ(run_suite(s, samples, cut, host_options()).judged, 0u);

  // Two shards take each sample once; merged, they are the whole run.
  std::set<std::string> seen;
  std::vector<fs::path> shards;
  for (int i = 0; i < 2; ++i) {
    std::vector<Sample> part = select_samples(s, samples, {{}, false, i, 2});
    for (const Sample& x : part) EXPECT_TRUE(seen.insert(x.id).second) << x.id;
    shards.push_back(fresh("shard" + std::to_string(i)));
    run_suite(s, part, shards.back(), host_options());
  }
  EXPECT_EQ(seen.size(), 3u);
  const RunReport merged = merge_results(s, shards, fresh("merged"));
  const std::vector<json> joined = lines_of(merged.dir / "results.jsonl");
  ASSERT_EQ(joined.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(steady(joined[i]), steady(lines[i])) << i;
}

// Judged through commands (the KernelBench adapters of --devices x --jobs): the samples are dealt
// to them in turn, each answers its own, and every sample gets its line. The commands here are
// Python one-liners that speak serve's protocol and sign their answers.
TEST(Run, SamplesAreDealtToTheJudgeCommandsInTurn) {
  const Suite s = load_suite(kProblems);
  const std::vector<Sample> samples = three_samples(s);
  RunOptions o = host_options();
  const std::string answer =
      "import json, sys\n"
      "print(json.dumps({'ready': True}), flush=True)\n"
      "for line in sys.stdin:\n"
      "    r = json.loads(line)\n"
      "    print(json.dumps({'id': r['id'], 'verdict': {'outcome': 'PASS', 'reason': 'none',\n"
      "          'compiled': True, 'correctness': True, 'message': sys.argv[1]}}), flush=True)\n";
  for (const char* judge : {"judge-a", "judge-b"})
    o.judge_commands.push_back({"python3", "-c", answer, judge});
  const fs::path dir = fresh("dealt");
  EXPECT_EQ(run_suite(s, samples, dir, o).judged, 3u);
  std::map<std::string, std::string> by;
  for (const json& line : lines_of(dir / "results.jsonl"))
    by[line["sample"].get<std::string>()] = line["message"].get<std::string>();
  EXPECT_EQ(by, (std::map<std::string, std::string>{{"solutions/basic", "judge-a"},
                                                    {"solutions/grid_stride", "judge-b"},
                                                    {"traps/off_by_one", "judge-a"}}));
}

TEST(Run, SelectionFaultsAreNamed) {
  const Suite s = load_suite(kProblems);
  EXPECT_THROW(select_samples(s, {}, {{"nope"}, false, 0, 1}), SpecError);
  EXPECT_THROW(select_samples(s, {}, {{}, false, 2, 2}), SpecError);
  EXPECT_THROW(merge_results(s, {fresh("empty")}, fresh("out")), SpecError);
}

} // namespace
} // namespace kj::suite
