// Cooperative groups on the host backend (kjudge/host/cooperative_groups.hpp): the kernels of
// tests/cases/host/cooperative_groups.cu, which NVRTC also compiles for the GPU, run on the CPU
// with their outputs pinned to what the GPU computes (the same kernels, inputs and expectations
// held on an H200, run by hand once): warp reductions with every operator of
// reduce.h (integers equal to the sequential results, floats in the butterfly's order), a tile of
// 8's shfl_down tree at its meta_group_rank, tiles that sync apart from the rest of their warp,
// block barriers through cg::sync, votes of tiles of 16, coalesced_threads in both arms of a
// branch, scans, and dynamic and labeled partitions. Grid-wide groups are still refused with
// their reason. The checked build sees the tile and block barriers as ordering shared memory.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/host_backend.hpp"
#include "support/own_command_line.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

HostCompileOptions cg_options() {
  HostCompileOptions o;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cuda_include = "/usr/local/cuda/include";
  o.cache_dir = fs::temp_directory_path() / "kjudge_host_test_cache";
  return o;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

const std::vector<std::string> kKernels = {"warp_reduce",  "tile8_sum",     "tiles_apart",
                                           "block_rotate", "tile16_votes",  "compact_positive",
                                           "tile_scans",   "dynamic_groups"};
enum Kernel {
  warp_reduce,
  tile8_sum,
  tiles_apart,
  block_rotate,
  tile16_votes,
  compact_positive,
  tile_scans,
  dynamic_groups
};

class HostCooperativeGroups : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    const std::string source = read_text(fs::path(KJ_CASES_DIR) / "host" / "cooperative_groups.cu");
    ASSERT_FALSE(source.empty());
    try {
      module_ =
          compile_host_module(source, "cooperative_groups.cu", kKernels, cg_options()).release();
    } catch (const CompileError& e) {
      FAIL() << e.what() << "\n" << e.log();
    }
  }
  static void TearDownTestSuite() {
    delete module_;
    module_ = nullptr;
  }
  static std::string launch(Kernel k, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                            std::vector<void*> args) {
    if (module_ == nullptr) return "no module";
    return module_->launch(k, grid.data(), block.data(), 0, args.data(), 2);
  }
  static HostModule* module_;
};
HostModule* HostCooperativeGroups::module_ = nullptr;

// The lane-by-lane butterfly of cg::reduce over a tile: every lane ends with the same value.
template <class T, class Op>
T butterfly(std::vector<T> v, Op op) {
  const std::size_t n = v.size();
  for (std::size_t m = n / 2; m > 0; m /= 2) {
    std::vector<T> next(n);
    for (std::size_t l = 0; l < n; ++l)
      next[l] = op(v[l], v[l ^ m]);
    v = next;
  }
  return v[0];
}

TEST_F(HostCooperativeGroups, WarpReduceOverTiledPartition32MatchesTheSequentialResults) {
  const int blocks = 3, threads = 128, n = blocks * threads, warps = n / 32;
  std::vector<int> x(n), out(6 * warps, 0);
  std::vector<float> xf(n), outf(warps, 0.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = (i * 7919) % 2001 - 1000 + (i % 5 == 0 ? 1 << 20 : 0);
    xf[i] = static_cast<float>((i * 37) % 101) * (i % 3 == 0 ? 1e-3f : 17.25f);
  }
  int *px = x.data(), *po = out.data();
  float *pxf = xf.data(), *pof = outf.data();
  ASSERT_EQ(launch(warp_reduce, {blocks, 1, 1}, {threads, 1, 1}, {&px, &po, &pxf, &pof}), "");
  for (int w = 0; w < warps; ++w) {
    const auto first = x.begin() + 32 * w, last = first + 32;
    unsigned a = ~0u, o = 0, e = 0;
    for (auto it = first; it != last; ++it) {
      a &= static_cast<unsigned>(*it);
      o |= static_cast<unsigned>(*it);
      e ^= static_cast<unsigned>(*it);
    }
    EXPECT_EQ(out[6 * w + 0], std::accumulate(first, last, 0)) << w;
    EXPECT_EQ(out[6 * w + 1], *std::min_element(first, last)) << w;
    EXPECT_EQ(out[6 * w + 2], *std::max_element(first, last)) << w;
    EXPECT_EQ(static_cast<unsigned>(out[6 * w + 3]), a) << w;
    EXPECT_EQ(static_cast<unsigned>(out[6 * w + 4]), o) << w;
    EXPECT_EQ(static_cast<unsigned>(out[6 * w + 5]), e) << w;
    // Floats: the butterfly's order, bit for bit (not the sequential sum's).
    const float f = butterfly(std::vector<float>(xf.begin() + 32 * w, xf.begin() + 32 * w + 32),
                              [](float p, float q) { return p + q; });
    EXPECT_EQ(outf[w], f) << w;
  }
}

TEST_F(HostCooperativeGroups, Tile8ShflDownTreeLandsAtItsMetaGroupRank) {
  const int blocks = 2, threads = 64, n = blocks * threads;
  std::vector<float> x(n), out(n / 8, -1.0f);
  std::vector<unsigned> places(n, 0);
  for (int i = 0; i < n; ++i)
    x[i] = 1.0f / static_cast<float>(i + 3) + static_cast<float>(i % 7) * 1e4f;
  float *px = x.data(), *po = out.data();
  unsigned* pp = places.data();
  ASSERT_EQ(launch(tile8_sum, {blocks, 1, 1}, {threads, 1, 1}, {&px, &po, &pp}), "");
  for (int t = 0; t < n / 8; ++t) {
    const float* v = x.data() + 8 * t;
    // shfl_down by 4, 2, 1: lane 0 ends with ((v0+v4)+(v2+v6)) + ((v1+v5)+(v3+v7)).
    const float expect = ((v[0] + v[4]) + (v[2] + v[6])) + ((v[1] + v[5]) + (v[3] + v[7]));
    EXPECT_EQ(out[t], expect) << t;
  }
  for (int i = 0; i < n; ++i) {
    const unsigned r = static_cast<unsigned>(i % threads);
    EXPECT_EQ(places[i], r / 8 * 1000 + 8 * 10 + r % 8) << i;
  }
}

TEST_F(HostCooperativeGroups, TilesSmallerThanAWarpSyncOnlyTheirOwnLanes) {
  const int blocks = 2, n = blocks * 64;
  std::vector<int> out(n, 0);
  int* po = out.data();
  ASSERT_EQ(launch(tiles_apart, {blocks, 1, 1}, {64, 1, 1}, {&po}), "");
  for (int i = 0; i < n; ++i) {
    const int r = i % 64, partner_tile = (r ^ 8) / 8;
    // The even tiles summed 1..8 across their lanes; the odd ones kept rank + 1.
    EXPECT_EQ(out[i], partner_tile % 2 == 0 ? 36 : (r ^ 8) % 8 + 1) << i;
  }
}

TEST_F(HostCooperativeGroups, BlockBarriersThroughCgSyncIn3DBlocks) {
  const unsigned gx = 2, gy = 2, bx = 16, by = 4, bz = 2, per = bx * by * bz;
  const unsigned n = gx * gy * per;
  std::vector<int> x(n), out(n, 0);
  for (unsigned i = 0; i < n; ++i)
    x[i] = static_cast<int>(i * 3 + 1);
  int *px = x.data(), *po = out.data();
  ASSERT_EQ(launch(block_rotate, {gx, gy, 1}, {bx, by, bz}, {&px, &po}), "");
  for (unsigned i = 0; i < n; ++i) {
    const unsigned base = i / per * per, r = i % per;
    EXPECT_EQ(out[i], 2 * x[base + (r + 2) % per]) << i;
  }
}

TEST_F(HostCooperativeGroups, BallotAnyAllAndMatchAnyOnTiles16) {
  const int threads = 64, tiles = threads / 16;
  std::vector<int> x(threads);
  for (int i = 0; i < threads; ++i) {
    const int t = i / 16, r = i % 16;
    // Tile 0 all positive, tile 1 none, tile 2 every third, tile 3 only its last thread.
    x[i] = t == 0   ? r + 1
           : t == 1 ? -r
           : t == 2 ? (r % 3 == 0 ? r + 5 : -1 - r)
                    : (r == 15 ? 9 : 0);
  }
  std::vector<unsigned> out(3 * tiles, 7), matches(threads, 0);
  int* px = x.data();
  unsigned *po = out.data(), *pm = matches.data();
  ASSERT_EQ(launch(tile16_votes, {1, 1, 1}, {threads, 1, 1}, {&px, &po, &pm}), "");
  for (int t = 0; t < tiles; ++t) {
    unsigned ballot = 0;
    for (int r = 0; r < 16; ++r)
      if (x[16 * t + r] > 0) ballot |= 1u << r;
    EXPECT_EQ(out[3 * t], ballot) << t;
    EXPECT_EQ(out[3 * t + 1], ballot != 0 ? 1u : 0u) << t;
    EXPECT_EQ(out[3 * t + 2], ballot == 0xffffu ? 1u : 0u) << t;
  }
  EXPECT_EQ(out[0], 0xffffu);
  EXPECT_EQ(out[3], 0u);
  EXPECT_EQ(out[6], 0x9249u); // ranks 0, 3, 6, 9, 12, 15
  EXPECT_EQ(out[9], 0x8000u);
  for (int i = 0; i < threads; ++i) {
    unsigned same = 0;
    for (int r = 0; r < 16; ++r)
      if (x[i / 16 * 16 + r] % 3 == x[i] % 3) same |= 1u << r;
    EXPECT_EQ(matches[i], same) << i;
  }
}

TEST_F(HostCooperativeGroups, CoalescedThreadsAreTheLanesOfTheirBranch) {
  const int n = 200, threads = 64, blocks = (n + threads - 1) / threads;
  std::vector<int> x(n), out(n, 0), groups(n, 0);
  for (int i = 0; i < n; ++i)
    x[i] = (i * 13) % 7 < 3 ? i + 1 : -i;
  int count = 0, nn = n;
  int *px = x.data(), *po = out.data(), *pc = &count, *pg = groups.data();
  ASSERT_EQ(launch(compact_positive, {static_cast<unsigned>(blocks), 1, 1}, {threads, 1, 1},
                   {&px, &po, &pc, &pg, &nn}),
            "");
  std::vector<int> positive;
  for (int w = 0; w * 32 < n; ++w) {
    int pos = 0, neg = 0;
    for (int i = 32 * w; i < std::min(n, 32 * w + 32); ++i)
      (x[i] > 0 ? pos : neg) += 1;
    int neg_rank = 0;
    for (int i = 32 * w; i < std::min(n, 32 * w + 32); ++i) {
      if (x[i] > 0) {
        positive.push_back(x[i]);
        EXPECT_EQ(groups[i], pos * 100 + pos) << i;
      } else {
        EXPECT_EQ(groups[i], -(neg * 100 + neg_rank++)) << i;
      }
    }
  }
  ASSERT_EQ(count, static_cast<int>(positive.size()));
  // Where each warp's run lands depends on the order of the atomics; which values, not.
  std::vector<int> got(out.begin(), out.begin() + count);
  std::sort(got.begin(), got.end());
  std::sort(positive.begin(), positive.end());
  EXPECT_EQ(got, positive);
}

TEST_F(HostCooperativeGroups, InclusiveAndExclusiveScansOfWarpsAndTilesOfFour) {
  const int threads = 64;
  std::vector<int> x(threads), inc(threads), exc(threads), mx(threads);
  std::vector<float> quarter(threads);
  for (int i = 0; i < threads; ++i)
    x[i] = (i * 29) % 17 - 8;
  int *px = x.data(), *pi = inc.data(), *pe = exc.data(), *pm = mx.data();
  float* pq = quarter.data();
  ASSERT_EQ(launch(tile_scans, {1, 1, 1}, {threads, 1, 1}, {&px, &pi, &pe, &pm, &pq}), "");
  for (int w = 0; w < 2; ++w) {
    int sum = 0, best = x[32 * w];
    for (int l = 0; l < 32; ++l) {
      const int i = 32 * w + l;
      EXPECT_EQ(exc[i], sum) << i;
      sum += x[i];
      best = std::max(best, x[i]);
      EXPECT_EQ(inc[i], sum) << i;
      EXPECT_EQ(mx[i], best) << i;
    }
  }
  for (int t = 0; t < threads / 4; ++t) {
    // Hillis-Steele over 4 ranks: each step adds the value `step` ranks below to its own.
    std::vector<float> v(4);
    for (int r = 0; r < 4; ++r)
      v[r] = 0.1f * static_cast<float>(x[4 * t + r]);
    for (int step = 1; step < 4; step *= 2) {
      std::vector<float> next = v;
      for (int r = step; r < 4; ++r)
        next[r] = v[r] + v[r - step];
      v = next;
    }
    for (int r = 0; r < 4; ++r)
      EXPECT_EQ(quarter[4 * t + r], v[r] + 1000.0f * static_cast<float>(t % 8)) << 4 * t + r;
  }
}

TEST_F(HostCooperativeGroups, DynamicTilesLabeledPartitionsAndABroadcast) {
  const int threads = 64;
  std::vector<int> out(4 * threads, -7);
  int* po = out.data();
  ASSERT_EQ(launch(dynamic_groups, {1, 1, 1}, {threads, 1, 1}, {&po}), "");
  for (int r = 0; r < threads; ++r) {
    const int* row = out.data() + 4 * r;
    EXPECT_EQ(row[0], r % 4 * 10 + 4) << r;
    const int warp = r / 32 * 32;
    int size = 0, rank = 0;
    for (int q = warp; q < warp + 32; ++q)
      if (q % 3 == r % 3) (q < r ? rank : size) += 1;
    size += rank;
    EXPECT_EQ(row[1], size * 100 + rank) << r;
    // The label groups are ranked by their first lane: labels warp, warp+1, warp+2 (mod 3).
    EXPECT_EQ(row[2], ((r % 3 - warp % 3 + 3) % 3) * 10 + 3) << r;
    EXPECT_EQ(row[3], warp) << r;
  }
}

// ---- what stays refused -------------------------------------------------------------------------

std::string refusal(const std::string& source) {
  try {
    (void)compile_host_module(source, "grid.cu", {"k"}, cg_options());
  } catch (const UnsupportedOnHost& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(HostCooperativeGroupsRefused, GridAndMultiGridGroupsKeepTheirReason) {
  EXPECT_EQ(refusal("#include <cooperative_groups.h>\n"
                    "namespace cg = cooperative_groups;\n"
                    "__global__ void k(float* y) {\n"
                    "  y[threadIdx.x] = 1.0f;\n"
                    "  cg::this_grid().sync();\n"
                    "}\n"),
            "unsupported on host backend: grid-wide synchronisation "
            "(cooperative_groups::this_grid) at grid.cu:5");
  EXPECT_EQ(refusal("#include <cooperative_groups.h>\n"
                    "__global__ void k(cooperative_groups::grid_group g) {}\n"),
            "unsupported on host backend: grid-wide synchronisation "
            "(cooperative_groups::grid_group) at grid.cu:2");
  EXPECT_EQ(refusal("#include <cooperative_groups.h>\n"
                    "__global__ void k() {\n  cooperative_groups::this_multi_grid().sync();\n}\n"),
            "unsupported on host backend: multi-device synchronisation "
            "(cooperative_groups::this_multi_grid) at grid.cu:3");
  EXPECT_EQ(refusal("#include <cooperative_groups.h>\n"
                    "__global__ void k() {\n  cooperative_groups::this_cluster().sync();\n}\n"),
            "unsupported on host backend: thread-block clusters "
            "(cooperative_groups::this_cluster) at grid.cu:3");
  EXPECT_EQ(
      refusal("#include <cooperative_groups.h>\n#include <cooperative_groups/memcpy_async.h>\n"
              "__global__ void k() {}\n"),
      "unsupported on host backend: asynchronous copies of cooperative groups "
      "(cooperative_groups/memcpy_async.h) at grid.cu:2");
  // Tiles of more than a warp: the host compiler's message says which sizes are.
  try {
    (void)compile_host_module("#include <cooperative_groups.h>\n"
                              "__global__ void k(int* y) {\n"
                              "  auto t = cooperative_groups::tiled_partition<64>(\n"
                              "      cooperative_groups::this_thread_block());\n"
                              "  y[0] = t.thread_rank();\n}\n",
                              "wide.cu", {"k"}, cg_options());
    ADD_FAILURE() << "a tile of 64 compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("thread_block_tile sizes are 1, 2, 4, 8, 16 and 32"), std::string::npos)
        << e.log();
  }
}

// ---- the checked build --------------------------------------------------------------------------

// The child's side: `--run-cg-checked-module SO INDEX` launches kernel INDEX over 2 blocks of 64
// threads reading x (128 ints of 1) and adding into one int, only x and the sum valid.
extern "C" char** environ;

const bool cg_checked_child = [] {
  const std::vector<std::string> args = test::own_command_line();
  if (args.size() < 4 || args[1] != "--run-cg-checked-module") return true;
  HostModule m(args[2]);
  std::vector<int> arena(128 + 1 + 8, 0);
  int* px = arena.data();
  int* ps = px + 128 + 4; // a gap of 4 ints between x and the sum
  for (int i = 0; i < 128; ++i)
    px[i] = 1;
  const std::string tracked =
      m.track(arena.data(), arena.size() * sizeof(int), arena.data(),
              {0, 128 * sizeof(int), (128 + 4) * sizeof(int), sizeof(int)}, true);
  void* kernel_args[] = {&px, &ps};
  const unsigned grid[3] = {2, 1, 1}, block[3] = {64, 1, 1};
  const std::string error = tracked.empty()
                                ? m.launch(std::stoi(args[3]), grid, block, 0, kernel_args, 1)
                                : "track: " + tracked;
  std::fprintf(stderr, "launched: %s sum=%d\n", error.empty() ? "ok" : error.c_str(), *ps);
  std::_Exit(0);
}();

struct Child {
  int code = -1;
  std::string err;
};

Child run_child(const fs::path& so, int index) {
  const fs::path log =
      fs::temp_directory_path() / ("kjudge_cg_checked_" + std::to_string(::getpid()));
  std::vector<std::string> argv = {"/proc/self/exe", "--run-cg-checked-module", so.string(),
                                   std::to_string(index)};
  std::vector<char*> raw;
  for (auto& a : argv)
    raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  Child c;
  if (posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), environ) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    c.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  c.err = read_text(log);
  std::error_code ec;
  fs::remove(log, ec);
  return c;
}

// 0: partners in a tile of 8 exchange through shared memory with tile.sync() between; 1: the
// same without a sync (line 17's write races with line 18's read by the partner); 2: a block sum
// through cg::reduce and cg::sync.
const char* const kCheckedKernels = R"(#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void tile_exchange(int* x, int* sum) {
  __shared__ int s[64];
  auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  s[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  tile.sync();
  const int v = s[threadIdx.x ^ 1];
  tile.sync();
  s[threadIdx.x] = v + 1;
  cg::sync(cg::this_thread_block());
  if (threadIdx.x == 0) { int t = 0; for (int i = 0; i < 64; ++i) t += s[i]; atomicAdd(sum, t); }
}
__global__ void tile_exchange_unsynced(int* x, int* sum) {
  __shared__ int s[64];
  s[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  const int v = s[threadIdx.x ^ 1];
  auto tile = cg::tiled_partition<8>(cg::this_thread_block());
  tile.sync();
  if (threadIdx.x == 0) atomicAdd(sum, v);
}
__global__ void block_sum(int* x, int* sum) {
  __shared__ int part[2];
  cg::thread_block block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  const int s = cg::reduce(warp, x[blockIdx.x * 64 + block.thread_rank()], cg::plus<int>());
  if (warp.thread_rank() == 0) part[warp.meta_group_rank()] = s;
  cg::sync(block);
  if (block.thread_rank() == 0) atomicAdd(sum, part[0] + part[1]);
}
)";

TEST(HostCooperativeGroupsChecked, TileAndBlockBarriersOrderSharedMemory) {
  ASSERT_TRUE(cg_checked_child);
  HostCompileOptions o = cg_options();
  o.checked = true;
  fs::path so;
  try {
    so = build_host_module(kCheckedKernels, "cg_race.cu",
                           {"tile_exchange", "tile_exchange_unsynced", "block_sum"}, o);
  } catch (const CompileError& e) {
    FAIL() << e.what() << "\n" << e.log();
  }
  for (const auto& [index, sum] : std::vector<std::pair<int, int>>{{0, 256}, {2, 128}}) {
    const Child c = run_child(so, index);
    EXPECT_EQ(c.code, 0) << index << "\n" << c.err;
    EXPECT_NE(c.err.find("launched: ok sum=" + std::to_string(sum)), std::string::npos)
        << index << "\n"
        << c.err;
    EXPECT_FALSE(parse_shadow_finding(c.err)) << index << "\n" << c.err;
  }
  const Child racy = run_child(so, 1);
  EXPECT_EQ(racy.code, 66) << racy.err;
  auto f = parse_shadow_finding(racy.err);
  ASSERT_TRUE(f) << racy.err;
  place_finding(*f, so, "cg_race.cu");
  EXPECT_TRUE(f->race);
  EXPECT_TRUE(f->shared);
  EXPECT_EQ(f->current.place, "cg_race.cu:17") << f->message("");
  EXPECT_EQ(f->previous.place, "cg_race.cu:18") << f->message("");
}

} // namespace
} // namespace kj
