// `kjudge serve`'s engine (kj::Judge) on a stream of different candidates of one problem, the
// issue's throughput figure: softmax's three solutions and two traps in turn, each request a
// full check, with the caches warm (a first, untimed round fills a temporary cache folder).
// Reported: seconds per request and requests per second. The backend is the machine's default
// (the GPU where there is one, else the host); arg 1 forces the host backend.
#include <benchmark/benchmark.h>

#include <filesystem>
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

} // namespace
