// The host backend without a GPU: the rewrite of `__shared__` declarations and the refusals
// with their lines, then real kernels compiled by the host compiler and run on the CPU, each
// checked against the value computed here: a grid-stride elementwise kernel, a block tree
// reduction through static shared memory and __syncthreads, a warp shuffle reduction, dynamic
// shared memory, atomics across blocks (several CPU threads), a template instantiation, f16,
// and a kernel whose threads meet at different barriers (a launch error, not a hang). Last, race
// detection: the missing-barrier tree and the non-atomic cross-block sum of problems/reduce_sum's
// traps, built with ThreadSanitizer and run in a child with its runtime preloaded, are reported
// with both places in the kernel's source; the same kernels done right are not.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "kjudge/host_backend.hpp"
#include "kjudge/nvrtc.hpp"
#include "support/own_command_line.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

std::size_t count_lines(const std::string& s) {
  return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(HostRewrite, SharedDeclarationsBecomePerBlockStorageOnTheirOwnLines) {
  const std::string src = "__global__ void k(float* y) {\n"
                          "  __shared__ float tile[32][33];\n"
                          "  __shared__ __align__(16) int\n"
                          "      count;\n"
                          "  extern __shared__ float dyn[];\n"
                          "  y[0] = tile[0][0] + count + dyn[0];\n"
                          "}\n";
  const std::string out = rewrite_for_host(src, "k.cu", {"k"});
  EXPECT_NE(out.find("auto& tile = ::kjh::block_shared<float [ 32 ] [ 33 ], 0>();"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("auto& count = ::kjh::block_shared<int , 1>();"), std::string::npos) << out;
  EXPECT_NE(out.find("float* dyn = ::kjh::dynamic_shared<float>();"), std::string::npos) << out;
  EXPECT_EQ(out.find("__shared__"), std::string::npos) << out;
  // The source's lines keep their numbers: the rewritten part ends where the source did.
  const std::string body = out.substr(0, out.find("// ---- kjudge host backend"));
  EXPECT_EQ(count_lines(body), count_lines(src) + 1) << body; // + the separator's newline
  EXPECT_NE(out.find("::kjh::invoke(&k, a)"), std::string::npos);
}

TEST(HostRewrite, RefusesWhatTheCpuCannotRunWithItsLine) {
  auto refusal = [](const std::string& src) {
    try {
      (void)rewrite_for_host(src, "c.cu", {"k"});
    } catch (const UnsupportedOnHost& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refusal("__global__ void k() {\n  asm volatile(\"membar.gl;\");\n}\n"),
            "unsupported on host backend: inline PTX (asm) at c.cu:2");
  EXPECT_EQ(refusal("#include <cooperative_groups.h>\n__global__ void k() {}\n"),
            "unsupported on host backend: cooperative groups at c.cu:1");
  EXPECT_EQ(refusal("__global__ void k() {\n\n  nvcuda::wmma::fill_fragment(f, 0);\n}\n"),
            "unsupported on host backend: tensor-core instructions (wmma) at c.cu:3");
  EXPECT_EQ(refusal("__global__ void k() {\n  __shared__ float a[4], b[4];\n}\n"),
            "unsupported on host backend: a __shared__ declaration of several variables at "
            "c.cu:2");
  EXPECT_EQ(refusal("__global__ void k(long long* t) { *t = clock64(); }\n"),
            "unsupported on host backend: clock reads (clock64) at c.cu:1");
  // A word in a comment or a string is no construct.
  EXPECT_EQ(refusal("// no asm here\n__global__ void k() { const char* s = \"asm\"; }\n"),
            "(accepted)");
}

TEST(RaceReport, ReadsBothAccessesTheirPlacesAndThreads) {
  const std::string log = R"(==================
WARNING: ThreadSanitizer: data race (pid=1)
  Write of size 4 at 0x7b4000000104 by thread T2:
    #0 row_sum_racy<1024>(float const*, float*, int, int) /some/dir/cand.cu:23 (x.so+0x51db)
    #1 kjh::invoke_with<...> /work/main/include/kjudge/host/cuda_emulation.hpp:266 (x.so+0x5299)

  Previous read of size 4 at 0x7b4000000104 by thread T1:
    #0 kjh::helper() /work/main/include/kjudge/host/cuda_emulation.hpp:100 (x.so+0x1)
    #1 row_sum_racy<1024>(float const*, float*, int, int) /some/dir/cand.cu:23 (x.so+0x51e7)

  Thread T2 'block (0,0,0) thread (1,0,0)' (tid=0, running) created by main thread at:
    #0 kjh::race::create_fiber() /work/main/include/kjudge/host/cuda_emulation.hpp:54 (x.so+0x6af8)

  Thread T1 'block (0,0,0) thread (0,0,0)' (tid=0, running) created by main thread at:
    #0 kjh::race::create_fiber() /work/main/include/kjudge/host/cuda_emulation.hpp:54 (x.so+0x6af8)

SUMMARY: ThreadSanitizer: data race /some/dir/cand.cu:23 in row_sum_racy<1024>
==================
)";
  const auto r = parse_race_report(log, "cand.cu");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->message(),
            "data race on 4 bytes: a write at cand.cu:23 by block (0,0,0) thread (1,0,0), and an "
            "earlier read at cand.cu:23 by block (0,0,0) thread (0,0,0), with no barrier or atomic "
            "between them");
  // Another file of the same ending is not the candidate's; a cut-off report is no report.
  EXPECT_EQ(parse_race_report(log, "and.cu")->current.place, "");
  EXPECT_FALSE(parse_race_report(log.substr(0, log.find("  Previous")), "cand.cu"));
  EXPECT_FALSE(parse_race_report("no report here", "cand.cu"));
}

// ---- kernels run on the CPU -------------------------------------------------------------------

class HostKernels : public ::testing::Test {
protected:
  static HostCompileOptions options() {
    HostCompileOptions o;
    o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
    o.cuda_include = "/usr/local/cuda/include";
    o.cache_dir = fs::temp_directory_path() / "kjudge_host_test_cache";
    return o;
  }
  static std::unique_ptr<HostModule> build(const std::string& src,
                                           const std::vector<std::string>& expressions) {
    return compile_host_module(src, "test.cu", expressions, options());
  }
};

TEST_F(HostKernels, GridStrideElementwise) {
  const auto m = build(R"(
__global__ void add(const float* __restrict__ x, const float* __restrict__ y, float* z, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    z[i] = x[i] + y[i];
}
)",
                       {"add"});
  const int n = 10007;
  std::vector<float> x(n), y(n), z(n, -1.0f);
  for (int i = 0; i < n; ++i)
    x[i] = 0.5f * static_cast<float>(i), y[i] = 1.0f / static_cast<float>(i + 1);
  float *px = x.data(), *py = y.data(), *pz = z.data();
  int nn = n;
  void* args[] = {&px, &py, &pz, &nn};
  const unsigned grid[3] = {7, 1, 1}, block[3] = {128, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 4), "");
  for (int i = 0; i < n; ++i) ASSERT_EQ(z[i], x[i] + y[i]) << i;
}

TEST_F(HostKernels, BlockTreeReductionWithSharedMemoryAndBarriers) {
  const auto m = build(R"(
template <int THREADS>
__global__ void row_sum(const float* x, float* out, int cols) {
  __shared__ float part[THREADS];
  const float* row = x + blockIdx.x * cols;
  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += THREADS) s += row[j];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = THREADS / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}
)",
                       {"row_sum<256>"});
  const int rows = 33, cols = 1000;
  std::vector<float> x(rows * cols), out(rows, 0.0f);
  for (int i = 0; i < rows * cols; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  float *px = x.data(), *po = out.data();
  int c = cols;
  void* args[] = {&px, &po, &c};
  const unsigned grid[3] = {rows, 1, 1}, block[3] = {256, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 3), "");
  for (int r = 0; r < rows; ++r) {
    // The same tree, in the same order, here.
    std::vector<float> part(256, 0.0f);
    for (int t = 0; t < 256; ++t)
      for (int j = t; j < cols; j += 256) part[t] += x[r * cols + j];
    for (int w = 128; w > 0; w /= 2)
      for (int t = 0; t < w; ++t) part[t] += part[t + w];
    EXPECT_EQ(out[r], part[0]) << r;
  }
}

TEST_F(HostKernels, WarpShuffleReductionAndBallot) {
  const auto m = build(R"(
__global__ void warp_sum(const int* x, int* out, unsigned* ballots) {
  int v = x[blockIdx.x * 64 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const unsigned b = __ballot_sync(0xffffffffu, x[blockIdx.x * 64 + threadIdx.x] > 0);
  int down = __shfl_down_sync(0xffffffffu, threadIdx.x, 1);
  if (threadIdx.x % 32 == 0) {
    out[blockIdx.x * 2 + threadIdx.x / 32] = v;
    ballots[blockIdx.x * 2 + threadIdx.x / 32] = b;
  }
  if (threadIdx.x == 31 && down != 31) out[0] = -999999; // lane 31 keeps its own value
}
)",
                       {"warp_sum"});
  std::vector<int> x(3 * 64), out(6, 0);
  std::vector<unsigned> ballots(6, 0);
  for (int i = 0; i < 3 * 64; ++i) x[i] = (i * 37) % 11 - 5;
  int *px = x.data(), *po = out.data();
  unsigned* pb = ballots.data();
  void* args[] = {&px, &po, &pb};
  const unsigned grid[3] = {3, 1, 1}, block[3] = {64, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 2), "");
  for (int w = 0; w < 6; ++w) {
    const int sum = std::accumulate(x.begin() + w * 32, x.begin() + w * 32 + 32, 0);
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l)
      if (x[w * 32 + l] > 0) ballot |= 1u << l;
    EXPECT_EQ(out[w], sum) << w;
    EXPECT_EQ(ballots[w], ballot) << w;
  }
}

TEST_F(HostKernels, DynamicSharedMemoryAndAtomicsAcrossBlocks) {
  const auto m = build(R"(
__global__ void histogram(const int* x, int n, unsigned* bins, double* total) {
  extern __shared__ unsigned local[];
  for (int b = threadIdx.x; b < 16; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(&local[x[i] % 16], 1u);
    atomicAdd(total, 0.5);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 16; b += blockDim.x) atomicAdd(&bins[b], local[b]);
}
)",
                       {"histogram"});
  const int n = 50000;
  std::vector<int> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i * 7919) % 1000;
  std::vector<unsigned> bins(16, 0), expect(16, 0);
  for (int v : x) ++expect[v % 16];
  double total = 0;
  int* px = x.data();
  int nn = n;
  unsigned* pb = bins.data();
  double* pt = &total;
  void* args[] = {&px, &nn, &pb, &pt};
  const unsigned grid[3] = {24, 1, 1}, block[3] = {96, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 16 * sizeof(unsigned), args, 4), "");
  EXPECT_EQ(bins, expect);
  EXPECT_EQ(total, 0.5 * n);
}

TEST_F(HostKernels, HalfPrecisionThroughTheToolkitHeader) {
  const auto m = build(R"(
#include <cuda_fp16.h>
__global__ void scale(const __half* x, __half* y, float a, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = __float2half(__half2float(x[i]) * a);
}
)",
                       {"scale"});
  const int n = 100;
  std::vector<std::uint16_t> x(n), y(n, 0);
  for (int i = 0; i < n; ++i) x[i] = static_cast<std::uint16_t>(0x3C00 + i); // 1 + i ulps
  void *px = x.data(), *py = y.data();
  float a = 2.0f;
  int nn = n;
  void* args[] = {&px, &py, &a, &nn};
  const unsigned grid[3] = {1, 1, 1}, block[3] = {128, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 1), "");
  for (int i = 0; i < n; ++i) EXPECT_EQ(y[i], x[i] + 0x0400) << i; // doubling: exponent + 1
}

TEST_F(HostKernels, ThreadsAtDifferentBarriersAreALaunchErrorNotAHang) {
  const auto m = build(R"(
__global__ void diverge(float* y) {
  // Lanes 16..31 wait for the whole warp, lanes 0..15 for the whole block: neither can go on.
  if (threadIdx.x < 16) __syncthreads();
  else __syncwarp(0xffffffffu);
  y[threadIdx.x] = 1.0f;
}
)",
                       {"diverge"});
  std::vector<float> y(32);
  float* py = y.data();
  void* args[] = {&py};
  const unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  const std::string error = m->launch(0, grid, block, 0, args, 1);
  EXPECT_NE(error.find("different barriers"), std::string::npos) << error;
}

TEST_F(HostKernels, AHostCompilerErrorIsACompileErrorWithTheCandidatesLines) {
  try {
    (void)build("__global__ void k(float* y) {\n  y[0] = undefined_name;\n}\n", {"k"});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("test.cu:2"), std::string::npos) << e.log();
  }
}

// ---- race detection ----------------------------------------------------------------------------

extern "C" char** environ;

// The child's side: `--run-race-module SO INDEX` launches kernel INDEX of SO on 4 blocks of 64
// threads over an int array of 256 and a sum cell.
const bool race_child_hook = [] {
  const std::vector<std::string> args = test::own_command_line();
  if (args.size() < 4 || args[1] != "--run-race-module") return true;
  HostModule m(args[2]);
  std::vector<int> x(256, 1);
  int sum = 0;
  int *px = x.data(), *ps = &sum;
  void* kernel_args[] = {&px, &ps};
  const unsigned grid[3] = {4, 1, 1}, block[3] = {64, 1, 1};
  const std::string error = m.launch(std::stoi(args[3]), grid, block, 0, kernel_args, 1);
  std::fprintf(stderr, "launched: %s\n", error.empty() ? "ok" : error.c_str());
  std::_Exit(0);
}();

struct ChildRun {
  int code = -1;
  std::string err;
};

ChildRun run_race_child(const fs::path& so, int index, const fs::path& runtime) {
  const fs::path log = fs::temp_directory_path() / ("kjudge_race_" + std::to_string(::getpid()));
  std::vector<std::string> argv = {"/proc/self/exe", "--run-race-module", so.string(),
                                   std::to_string(index)};
  std::vector<std::string> env = {"LD_PRELOAD=" + runtime.string(),
                                  "TSAN_OPTIONS=halt_on_error=1:exitcode=66"};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0 && std::strncmp(*e, "TSAN_OPTIONS=", 13) != 0)
      env.emplace_back(*e);
  std::vector<char*> raw_argv, raw_env;
  for (auto& a : argv) raw_argv.push_back(a.data());
  raw_argv.push_back(nullptr);
  for (auto& e : env) raw_env.push_back(e.data());
  raw_env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  ChildRun r;
  if (posix_spawn(&pid, raw_argv[0], &actions, nullptr, raw_argv.data(), raw_env.data()) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  std::ifstream f(log);
  r.err.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  std::error_code ec;
  fs::remove(log, ec);
  return r;
}

// Kernels 0 and 1 race (line 7: the tree without barriers; line 15: blocks adding into one cell
// with a plain +=); 2 and 3 are the same done right.
const char* const kRaceKernels = R"(__global__ void tree_no_barrier(int* x, int* sum) {
  __shared__ int part[64];
  part[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  for (int w = 32; w > 0; w /= 2) {
    if (threadIdx.x < w)
      part[threadIdx.x] += part[threadIdx.x + w];
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}
__global__ void plain_cross_block_add(int* x, int* sum) {
  __shared__ int part[64];
  part[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) { int s = 0; for (int i = 0; i < 64; ++i) s += part[i];
    *sum += s; }
}
__global__ void tree(int* x, int* sum) {
  __shared__ int part[64];
  part[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  for (int w = 32; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}
__global__ void warp_shuffle(int* x, int* sum) {
  int v = x[blockIdx.x * 64 + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) atomicAdd(sum, v);
}
)";

TEST_F(HostKernels, RacesAreFoundWithBothPlacesAndCorrectKernelsAreNot) {
  ASSERT_TRUE(race_child_hook);
  const fs::path runtime = tsan_runtime();
  ASSERT_FALSE(runtime.empty()) << "g++ has no ThreadSanitizer runtime";
  HostCompileOptions o = options();
  o.race_detection = true;
  const fs::path so = build_host_module(
      kRaceKernels, "race.cu", {"tree_no_barrier", "plain_cross_block_add", "tree", "warp_shuffle"},
      o);

  const ChildRun missing_barrier = run_race_child(so, 0, runtime);
  EXPECT_EQ(missing_barrier.code, 66) << missing_barrier.err;
  const auto tree = parse_race_report(missing_barrier.err, "race.cu");
  ASSERT_TRUE(tree) << missing_barrier.err;
  EXPECT_EQ(tree->current.place, "race.cu:7") << tree->message();
  EXPECT_EQ(tree->previous.place, "race.cu:7") << tree->message();
  // Two threads of one block: the tree's partner slots.
  EXPECT_EQ(tree->current.thread.rfind("block (0,0,0) thread (", 0), 0u) << tree->message();
  EXPECT_NE(tree->current.thread, tree->previous.thread) << tree->message();

  const ChildRun cross_block = run_race_child(so, 1, runtime);
  EXPECT_EQ(cross_block.code, 66) << cross_block.err;
  const auto sum = parse_race_report(cross_block.err, "race.cu");
  ASSERT_TRUE(sum) << cross_block.err;
  EXPECT_EQ(sum->current.place, "race.cu:16") << sum->message();
  // Thread 0 of two different blocks.
  EXPECT_NE(sum->current.thread.find("thread (0,0,0)"), std::string::npos) << sum->message();
  EXPECT_NE(sum->current.thread, sum->previous.thread) << sum->message();
  EXPECT_NE(sum->message().find("with no barrier or atomic between them"), std::string::npos);

  for (int right : {2, 3}) {
    const ChildRun r = run_race_child(so, right, runtime);
    EXPECT_EQ(r.code, 0) << right << "\n" << r.err;
    EXPECT_NE(r.err.find("launched: ok"), std::string::npos) << r.err;
    EXPECT_FALSE(parse_race_report(r.err, "race.cu"));
  }
}

} // namespace
} // namespace kj
