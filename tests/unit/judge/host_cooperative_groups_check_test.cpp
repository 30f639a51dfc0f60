// Whole checks on the host backend of kernels written with cooperative groups: reduce_sum by
// tile reductions (through NVRTC, its preprocessing with the toolkit's cooperative_groups.h and
// the host's stand-in, the race-screening build, and the comparison) passes; a grid barrier is a
// SKIP naming it at its line.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kj;

CheckOptions host_options() {
  CheckOptions o;
  o.backend = Backend::host;
  o.self_exe = KJ_KJUDGE_EXE;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cache_dir = fs::temp_directory_path() / "kjudge_host_check_test_cache";
  return o;
}

Verdict judge(const std::string& problem, const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << text;
  const fs::path dir = fs::path(KJ_SOURCE_DIR) / "problems" / problem;
  const Problem p = load_problem(dir);
  return check(p, load_candidate(path, p), host_options());
}

std::string describe(const Verdict& v) {
  std::string s = std::string(outcome_name(v.outcome)) + "(" + std::string(reason_name(v.reason)) +
                  "): " + v.message;
  for (const auto& k : v.skips)
    s += "\n" + k;
  return s;
}

TEST(HostCheckCooperativeGroups, ATileReductionOfReduceSumPasses) {
  const Verdict v = judge("reduce_sum", "kjudge_host_cg_sum.cu", R"cu(// reduce_sum by tiles of 32.
/* kjudge
[[launch]]
kernel = "row_sum_tiles"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void row_sum_tiles(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  __shared__ float warp_sums[8];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const float* row = x + static_cast<long long>(blockIdx.x) * C;
  float s = 0.0f;
  for (int j = block.thread_rank(); j < C; j += block.size()) s += row[j];
  s = cg::reduce(warp, s, cg::plus<float>());
  if (warp.thread_rank() == 0) warp_sums[warp.meta_group_rank()] = s;
  cg::sync(block);
  if (warp.meta_group_rank() == 0) {
    auto eight = cg::tiled_partition<8>(warp);
    float w = warp.thread_rank() < 8 ? warp_sums[warp.thread_rank()] : 0.0f;
    for (int o = 4; o > 0; o /= 2) w += eight.shfl_down(w, o);
    if (warp.thread_rank() == 0) y[blockIdx.x] = w;
  }
}
)cu");
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  EXPECT_EQ(v.manifest.trust, "host");
  EXPECT_FALSE(v.cases.empty());
}

TEST(HostCheckCooperativeGroups, AGridBarrierIsAFailNamingIt) {
  const Verdict v = judge("vector_add", "kjudge_host_cg_grid.cu", R"cu(/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  cg::this_grid().sync();
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::forbidden_construct) << describe(v);
  EXPECT_NE(v.message.find("unsupported on host backend: grid-wide synchronisation "
                           "(cooperative_groups::this_grid) at kjudge_host_cg_grid.cu:12"),
            std::string::npos)
      << v.message;
}

} // namespace
