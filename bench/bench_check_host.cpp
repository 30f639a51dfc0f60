// `kjudge check` on the host backend, the target: softmax's warp-shuffle solution over
// the problem's host shapes with a warm cache (under 3 s on the 2-core CI machine): with the
// default race screening (arg 1), without it (0), and with every run in the checked build
// (--exact-bounds, 2). The first, untimed, check fills the cache folder (a temporary one,
// so the figure is never a stale cache's). The workers are the kjudge executable of this build.
// Needs g++, Boost.Context and the CUDA headers where it runs; without them the benchmark
// reports the verdict's error instead of a time.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"

namespace {

namespace fs = std::filesystem;

void BM_CheckSoftmaxOnHost(benchmark::State& state) {
  const fs::path dir = fs::path(KJ_SOURCE_DIR) / "problems" / "softmax";
  const kj::Problem problem = kj::load_problem(dir);
  const kj::Candidate candidate = kj::load_candidate(dir / "solutions/warp_shuffle.cu", problem);
  kj::CheckOptions o;
  o.backend = kj::Backend::host;
  o.race_detection = state.range(0) != 0;
  o.exact_bounds = state.range(0) == 2;
  o.self_exe = KJ_KJUDGE_EXE;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cache_dir = fs::temp_directory_path() / "kjudge_bench_check_host";
  fs::remove_all(o.cache_dir);
  const kj::Verdict warm_up = kj::check(problem, candidate, o);
  if (warm_up.outcome != kj::Outcome::pass) {
    state.SkipWithError(("the check does not pass: " + warm_up.message).c_str());
    return;
  }
  for (auto _ : state) {
    const kj::Verdict v = kj::check(problem, candidate, o);
    benchmark::DoNotOptimize(v.cases_passed);
  }
  state.counters["cases"] = static_cast<double>(warm_up.cases_total);
  state.SetLabel(o.exact_bounds     ? "every run checked (--exact-bounds)"
                 : o.race_detection ? "races screened"
                                    : "no race detection");
}
BENCHMARK(BM_CheckSoftmaxOnHost)->Arg(1)->Arg(0)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()
    ->Iterations(3);

} // namespace
