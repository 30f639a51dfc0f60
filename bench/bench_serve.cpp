// `kjudge serve`'s engine (kj::Judge) on a stream of different candidates of one problem, the
// issue's throughput figure: softmax's three solutions and two traps in turn, each request a
// full check, with the caches warm (a first, untimed round fills a temporary cache folder).
// Reported: seconds per request and requests per second. The backend is the machine's default
// (the GPU where there is one, else the host); arg 1 forces the host backend.
// BM_ServeDistinctSoftmax is the RL trainer's stream: 200 candidates, every one new (the five
// files, each made distinct by a comment, so each misses the compile cache), through kj::serve
// with `jobs` judges (the first arg; the second 0 for no spare workers); it reports checks per second, p50 and p99 of the checks' own
// latency (judge_time.wall_ms) and kjudge's time over the candidates' own run time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjudge/serve.hpp"

namespace {

namespace fs = std::filesystem;

void BM_ServeSoftmaxStream(benchmark::State& state) {
  const fs::path dir = fs::path(KJ_SOURCE_DIR) / "problems" / "softmax";
  kj::ServeOptions o;
  o.defaults.backend = state.range(0) == 1 ? kj::Backend::host : kj::Backend::automatic;
  o.defaults.self_exe = KJ_KJUDGE_EXE;
  o.defaults.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.defaults.cache_dir = fs::temp_directory_path() / "kjudge_bench_serve";
  fs::remove_all(o.defaults.cache_dir);
  kj::Judge judge(o);
  std::vector<nlohmann::json> stream;
  for (const char* c : {"solutions/basic.cu", "solutions/block_reduce.cu",
                        "solutions/warp_shuffle.cu", "traps/zeros.cu", "traps/no_max_subtraction.cu"})
    stream.push_back({{"problem", dir.string()}, {"candidate", (dir / c).string()}});
  std::string backend;
  for (const auto& request : stream) { // warm-up round: compiles, cache
    const nlohmann::json answer = judge.handle(request);
    if (!answer.contains("verdict")) {
      state.SkipWithError(("the request failed: " + answer.dump()).c_str());
      return;
    }
    backend = answer["verdict"]["manifest"]["backend"].get<std::string>();
  }
  std::size_t next = 0;
  for (auto _ : state) {
    const nlohmann::json answer = judge.handle(stream[next++ % stream.size()]);
    benchmark::DoNotOptimize(answer);
  }
  state.counters["requests_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel("backend " + backend);
}
BENCHMARK(BM_ServeSoftmaxStream)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime()
    ->Iterations(5);

void BM_ServeDistinctSoftmax(benchmark::State& state) {
  const fs::path dir = fs::path(KJ_SOURCE_DIR) / "problems" / "softmax";
  kj::ServeOptions o;
  o.defaults.self_exe = KJ_KJUDGE_EXE;
  o.defaults.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.defaults.cache_dir = fs::temp_directory_path() / "kjudge_bench_serve";
  o.jobs = static_cast<int>(state.range(0));
  o.spare_workers = state.range(1) != 0;
  // KJ_BENCH_SERVE_CANDIDATES: fewer, for a quick look (the target's figure needs 200).
  const char* asked = std::getenv("KJ_BENCH_SERVE_CANDIDATES");
  const int kCandidates = asked != nullptr ? std::max(5, std::atoi(asked)) : 200;
  struct File {
    std::string name, text;
    bool passes;
  };
  std::vector<File> files;
  for (const char* c : {"solutions/basic.cu", "solutions/block_reduce.cu",
                        "solutions/warp_shuffle.cu", "traps/zeros.cu",
                        "traps/no_max_subtraction.cu"}) {
    std::ifstream in(dir / c);
    std::stringstream text;
    text << in.rdbuf();
    files.push_back({c, text.str(), std::string_view(c).starts_with("solutions/")});
  }
  // A salt per run, so a second run of the benchmark misses the compile cache too.
  const auto salt = std::chrono::steady_clock::now().time_since_epoch().count();
  std::string requests;
  for (int i = 0; i < kCandidates; ++i) {
    const File& f = files[static_cast<std::size_t>(i) % files.size()];
    requests += nlohmann::json{{"id", i},
                               {"problem", dir.string()},
                               {"name", f.name},
                               {"source", f.text + "\n// distinct " + std::to_string(salt) + "." +
                                              std::to_string(i) + "\n"}}
                    .dump() +
                "\n";
  }
  double wall_s = 0;
  std::vector<double> latency_ms;
  double kjudge_ms = 0, candidate_ms = 0;
  for (auto _ : state) {
    std::istringstream in(requests);
    std::ostringstream out;
    const auto start = std::chrono::steady_clock::now();
    kj::serve(in, out, o);
    wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::istringstream answers(out.str());
    std::string line;
    int n = 0;
    for (; std::getline(answers, line); ++n) {
      const nlohmann::json a = nlohmann::json::parse(line);
      const File& f = files[static_cast<std::size_t>(n) % files.size()];
      // In request order, each a verdict, solutions passing and traps failing: a stream that
      // errs or misjudges measures nothing.
      if (a["id"] != n || !a.contains("verdict") ||
          (a["verdict"]["outcome"] == "PASS") != f.passes) {
        state.SkipWithError(("answer " + std::to_string(n) + " is wrong: " +
                             a.dump().substr(0, 400)).c_str());
        return;
      }
      const nlohmann::json& t = a["verdict"]["judge_time"];
      latency_ms.push_back(t["wall_ms"].get<double>());
      kjudge_ms += t["wall_ms"].get<double>();
      candidate_ms += t["candidate_ms"].get<double>();
    }
    if (n != kCandidates) {
      state.SkipWithError(("answers: " + std::to_string(n)).c_str());
      return;
    }
  }
  state.counters["checks_per_s"] = kCandidates / wall_s;
  const kj::LatencyDistribution latency = kj::latency_distribution(std::move(latency_ms));
  state.counters["p50_ms"] = latency.p50;
  state.counters["p99_ms"] = latency.p99;
  state.counters["kjudge_over_candidate"] = candidate_ms > 0 ? kjudge_ms / candidate_ms : 0;
  state.SetLabel("jobs " + std::to_string(o.jobs) + (o.spare_workers ? "" : ", no spare workers"));
}
BENCHMARK(BM_ServeDistinctSoftmax)->Args({1, 1})->Args({4, 1})->Args({4, 0})->Args({8, 1})
    ->Unit(benchmark::kSecond)
    ->UseRealTime()->Iterations(1);

} // namespace
