// The host backend's launch cost: an elementwise kernel (one fiber per thread, no barrier) and
// a block tree reduction (ten barriers per block) over a grid of blocks, on one CPU thread and
// on all of them; items/s is CUDA threads run per second. Compiled once per run (the cache
// folder is temporary), outside the timing. Needs g++ and Boost.Context where it runs; without
// them each benchmark reports the error instead of a time.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "kjudge/host_backend.hpp"
#include "kjudge/nvrtc.hpp"

namespace {

namespace fs = std::filesystem;

const char* const kSource = R"(
__global__ void scale(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
__global__ void block_sum(const float* x, float* y) {
  __shared__ float part[1024];
  part[threadIdx.x] = x[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  for (unsigned w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = part[0];
}
)";

const kj::HostModule* module(std::string* error) {
  static std::string failure;
  static const std::unique_ptr<kj::HostModule> m = [] {
    try {
      kj::HostCompileOptions o;
      o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
      o.cuda_include = "/usr/local/cuda/include";
      o.cache_dir = fs::temp_directory_path() / "kjudge_bench_host_cache";
      return kj::compile_host_module(kSource, "bench.cu", {"scale", "block_sum"}, o);
    } catch (const std::exception& e) {
      failure = e.what();
      return std::unique_ptr<kj::HostModule>();
    }
  }();
  *error = failure;
  return m.get();
}

void launch(benchmark::State& state, int kernel, unsigned threads_per_block) {
  std::string error;
  const kj::HostModule* m = module(&error);
  if (!m) {
    state.SkipWithError(error.c_str());
    return;
  }
  const unsigned blocks = 256;
  const unsigned workers = state.range(0) == 0 ? std::thread::hardware_concurrency() : 1;
  std::vector<float> x(blocks * threads_per_block, 1.0f), y(blocks * threads_per_block);
  float *px = x.data(), *py = y.data();
  int n = static_cast<int>(x.size());
  void* scale_args[] = {&px, &py, &n};
  void* sum_args[] = {&px, &py};
  const unsigned grid[3] = {blocks, 1, 1}, block[3] = {threads_per_block, 1, 1};
  for (auto _ : state) {
    const std::string e =
        m->launch(kernel, grid, block, 0, kernel == 0 ? scale_args : sum_args, workers);
    if (!e.empty()) {
      state.SkipWithError(e.c_str());
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * blocks * threads_per_block);
  state.SetLabel(workers == 1 ? "1 CPU thread" : std::to_string(workers) + " CPU threads");
}

void BM_Elementwise(benchmark::State& state) { launch(state, 0, 256); }
void BM_BlockReduction(benchmark::State& state) { launch(state, 1, 1024); }

// Arg 1: one CPU thread; Arg 0: all of them.
BENCHMARK(BM_Elementwise)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_BlockReduction)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace
