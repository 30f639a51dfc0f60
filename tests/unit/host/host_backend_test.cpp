// The host backend without a GPU: the rewrite of `__shared__` declarations and the refusals
// with their lines, then real kernels compiled by the host compiler and run on the CPU, each
// checked against the value computed here: a grid-stride elementwise kernel, a block tree
// reduction through static shared memory and __syncthreads, a warp shuffle reduction, dynamic
// shared memory, atomics across blocks (several CPU threads), a template instantiation, f16,
// a kernel whose threads meet at different barriers (a launch error, not a hang), and a failed
// assert or a trap (the launch ends with the assertion's text and place). Last, the
// checked build (kjudge's shadow memory behind the compiler's instrumentation), run in a child
// process since a finding ends it: the missing-barrier tree and the non-atomic cross-block sum
// of problems/reduce_sum's traps are races with both places in the kernel's source; the same
// kernels done right (barriers, shuffles, atomics) are not; reads and writes next to a buffer
// are exact out-of-bounds findings.
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
                          "  __shared__ float* volatile slot;\n"
                          "  volatile __shared__ int flag;\n"
                          "  y[0] = tile[0][0] + count + dyn[0] + *slot + flag;\n"
                          "}\n";
  const std::string out = rewrite_for_host(src, "k.cu", {"k"});
  EXPECT_NE(out.find("auto& tile = ::kjh::block_shared<float [ 32 ] [ 33 ], 0>();"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("auto& count = ::kjh::block_shared<int , 1>();"), std::string::npos) << out;
  EXPECT_NE(out.find("float* dyn = ::kjh::dynamic_shared<float>();"), std::string::npos) << out;
  // `volatile` where the source put it: a volatile pointer, then a volatile int.
  EXPECT_NE(out.find("auto& slot = ::kjh::block_shared<float * volatile , 2>();"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("auto& flag = ::kjh::block_shared<volatile int , 3>();"), std::string::npos)
      << out;
  EXPECT_EQ(out.find("__shared__"), std::string::npos) << out;
  // Several declarators in one declaration (`__shared__ float As[..], Bs[..];`, common in tiled
  // kernels): each its own storage, of the first one's base type.
  const std::string several =
      rewrite_for_host("__global__ void m(float* y) {\n"
                       "  __shared__ float As[4][8], *p, Bs[8];\n"
                       "  __shared__ cuda::std::pair<int, float> q;\n"
                       "  y[0] = As[0][0] + *p + Bs[0] + q.second;\n"
                       "}\n",
                       "m.cu", {"m"});
  EXPECT_NE(several.find("auto& As = ::kjh::block_shared<float [ 4 ] [ 8 ], 0>(); "
                         "auto& p = ::kjh::block_shared<float * , 1>(); "
                         "auto& Bs = ::kjh::block_shared<float [ 8 ], 2>();\n"),
            std::string::npos)
      << several;
  EXPECT_NE(several.find("auto& q = "
                         "::kjh::block_shared<cuda :: std :: pair < int , float > , 3>();"),
            std::string::npos)
      << several;
  // The source's lines keep their numbers: the rewritten part ends where the source did.
  const std::string body = out.substr(0, out.find("#line 1 \"kjudge-host-entries\""));
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
  // Cooperative groups run at block and warp level (host_cooperative_groups_test.cpp); a grid's
  // barrier does not.
  EXPECT_EQ(refusal("#include <cooperative_groups.h>\n__global__ void k() {\n"
                    "  cooperative_groups::this_grid().sync();\n}\n"),
            "unsupported on host backend: grid-wide synchronisation "
            "(cooperative_groups::this_grid) at c.cu:3");
  EXPECT_EQ(refusal("__global__ void k() {\n\n  nvcuda::wmma::fill_fragment(f, 0);\n}\n"),
            "unsupported on host backend: tensor-core instructions (wmma) at c.cu:3");
  EXPECT_EQ(refusal("__global__ void k() {\n  extern __shared__ float a[], b[];\n}\n"),
            "unsupported on host backend: an extern __shared__ declaration of several variables "
            "at c.cu:2");
  EXPECT_EQ(refusal("__global__ void k(long long* t) { *t = clock64(); }\n"),
            "unsupported on host backend: clock reads (clock64) at c.cu:1");
  // Every spelling of inline assembly (GCC's __asm could .incbin a host file into the module),
  // and probes of the host's files.
  EXPECT_EQ(refusal("__global__ void k() {\n  __asm(\".incbin \\\"/etc/hostname\\\"\");\n}\n"),
            "unsupported on host backend: inline PTX (asm) at c.cu:2");
  EXPECT_EQ(refusal("__global__ void k() { __asm__(\"nop\"); }\n"),
            "unsupported on host backend: inline PTX (asm) at c.cu:1");
  EXPECT_EQ(refusal("#if __has_include(\"/etc/hostname\")\n#endif\n__global__ void k() {}\n"),
            "unsupported on host backend: __has_include (a probe of the host's files) at c.cu:1");
  EXPECT_EQ(refusal("__global__ void k() {}\nconstexpr bool b = __has_include_next(<x>);\n"),
            "unsupported on host backend: __has_include (a probe of the host's files) at c.cu:2");
  // A word in a comment or a string is no construct.
  EXPECT_EQ(refusal("// no asm here\n__global__ void k() { const char* s = \"asm\"; }\n"),
            "(accepted)");
}

TEST(ShadowFinding, ReadsTheHooksLineAndSaysWhatWhereAndWho) {
  const std::string race =
      "noise before\nkjudge-shadow: race space=shared offset=8 size=4 access=write pc=0x51db "
      "block=0,0,0 thread=1,0,0 shared_bytes=256 prev_access=read prev_pc=0x51e7 prev_block=0,0,0 "
      "prev_thread=0,0,0\n";
  auto r = parse_shadow_finding(race);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->race);
  EXPECT_TRUE(r->shared);
  EXPECT_EQ(r->offset, 8);
  EXPECT_EQ(r->current.pc, 0x51dbu);
  EXPECT_EQ(r->previous.pc, 0x51e7u);
  r->current.place = r->previous.place = "cand.cu:23";
  EXPECT_EQ(r->message(r->shared_where()),
            "data race on 4 bytes of shared memory (byte 8): a write at cand.cu:23 by block "
            "(0,0,0) thread (1,0,0), and an earlier read at cand.cu:23 by block (0,0,0) thread "
            "(0,0,0), with no barrier or atomic between them");

  const auto bounds = parse_shadow_finding(
      "kjudge-shadow: bounds space=global offset=-4 size=8 access=atomic-write pc=0x10 "
      "block=3,0,0 thread=5,1,0 shared_bytes=0\n");
  ASSERT_TRUE(bounds);
  EXPECT_FALSE(bounds->race);
  EXPECT_EQ(bounds->offset, -4);
  EXPECT_EQ(bounds->message("4 bytes before the start of input 'x'"),
            "out-of-bounds atomic write of 8 bytes, 4 bytes before the start of input 'x', at a "
            "place outside the kernel's source by block (3,0,0) thread (5,1,0)");
  const auto past_shared = parse_shadow_finding(
      "kjudge-shadow: bounds space=shared offset=260 size=4 access=read pc=0x10 block=0,0,0 "
      "thread=0,0,0 shared_bytes=256");
  ASSERT_TRUE(past_shared);
  EXPECT_EQ(past_shared->shared_where(),
            "4 bytes past the end of the block's 256 bytes of shared memory");

  // A cut-off line, a race without its earlier access, a malformed index: no finding.
  EXPECT_FALSE(parse_shadow_finding(race.substr(0, race.find("size="))));
  EXPECT_FALSE(parse_shadow_finding(race.substr(0, race.find(" prev_access"))));
  EXPECT_FALSE(parse_shadow_finding(
      "kjudge-shadow: bounds space=global offset=1 size=4 access=read pc=0x10 block=3,0 "
      "thread=5,1,0 shared_bytes=0"));
  EXPECT_FALSE(parse_shadow_finding("no finding here"));

  // Places: the candidate's file only, whatever folder the compiler recorded in front of it.
  EXPECT_EQ(place_in_frame("/some/dir/cand.cu:23 (discriminator 2)", "cand.cu"), "cand.cu:23");
  EXPECT_EQ(place_in_frame("/some/dir/cand.cu:23", "and.cu"), "");
  EXPECT_EQ(place_in_frame("/x/cuda_emulation.hpp:100", "cand.cu"), "");
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

// Code as training codebases write it: cuda_runtime.h included, INFINITY and NULL used, loads
// and stores with cache hints, and atomicInc's wrapping counter (the "last block done" count).
TEST_F(HostKernels, CacheHintsAtomicIncDecAndTheRuntimeHeader) {
  const auto m = build(R"(
#include <cuda_runtime.h>
#include <cuda.h>
__global__ void hints(const float* x, float* y, unsigned* count, unsigned* down, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float v = __ldcs(x + i) + __ldcg(x + i) + __ldca(x + i) + __ldlu(x + i) + __ldcv(x + i);
    __stcs(y + i, v > 1e30f ? INFINITY : v);
    __stcg(y + i, __ldg(y + i) + 1.0f);
    __stwt(y + i, __ldcs(y + i) * 2.0f);
    __stwb(y + i, y[i] + (count != NULL ? 0.0f : 1.0f));
  }
  atomicInc(count, 9u);
  atomicDec(down, 4u);
}
)",
                       {"hints"});
  const int n = 40;
  std::vector<float> x(n), y(n, -1.0f);
  for (int i = 0; i < n; ++i)
    x[i] = static_cast<float>(i);
  x[7] = 1e38f;
  unsigned count = 0, down = 2;
  float *px = x.data(), *py = y.data();
  unsigned *pc = &count, *pd = &down;
  int nn = n;
  void* args[] = {&px, &py, &pc, &pd, &nn};
  const unsigned grid[3] = {5, 1, 1}, block[3] = {8, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 4), "");
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(y[i], i == 7 ? INFINITY : (5.0f * static_cast<float>(i) + 1.0f) * 2.0f) << i;
  // 40 increments wrapping after 9 (0..9, ten values): back to 0. 40 decrements from 2 with
  // limit 4: 2, 1, 0, then 4, 3, 2, 1, 0 in turns of five, ending at 2 - 40 mod 5 = 2.
  EXPECT_EQ(count, 0u);
  EXPECT_EQ(down, 2u);
}

// Two arrays in one declaration are two arrays: a block's dot product through both.
TEST_F(HostKernels, SeveralSharedArraysInOneDeclaration) {
  const auto m = build(R"(
__global__ void dot(const float* x, const float* y, float* out) {
  __shared__ float xs[32], ys[32];
  xs[threadIdx.x] = x[blockIdx.x * 32 + threadIdx.x];
  ys[threadIdx.x] = y[blockIdx.x * 32 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int k = 0; k < 32; ++k) s += xs[k] * ys[k];
    out[blockIdx.x] = s;
  }
}
)",
                       {"dot"});
  std::vector<float> x(64), y(64), out(2, -1.0f);
  for (int i = 0; i < 64; ++i)
    x[i] = static_cast<float>(i % 32), y[i] = i < 32 ? 1.0f : 2.0f;
  float *px = x.data(), *py = y.data(), *po = out.data();
  void* args[] = {&px, &py, &po};
  const unsigned grid[3] = {2, 1, 1}, block[3] = {32, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 2), "");
  EXPECT_EQ(out, (std::vector<float>{496.0f, 992.0f})); // 0 + 1 + ... + 31 = 496
}

// Atomics on half pairs across blocks (several CPU threads), as gradient kernels accumulate:
// both halves of each pair summed, exactly (integers a 16-bit float holds).
TEST_F(HostKernels, AtomicAddOnHalfAndBfloat16Pairs) {
  const auto m = build(R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void accumulate(__half2* h, __nv_bfloat162* b, __half* one) {
  atomicAdd(h, __floats2half2_rn(1.0f, 2.0f));
  atomicAdd(b, __floats2bfloat162_rn(1.0f, 2.0f));
  atomicAdd(one, __float2half(1.0f));
}
)",
                       {"accumulate"});
  // The host side of the pairs: two halves' bits, read back as floats by the same header.
  std::uint32_t h = 0, b = 0;
  std::uint16_t one = 0;
  void* ph = &h;
  void* pb = &b;
  void* po = &one;
  void* args[] = {&ph, &pb, &po};
  const unsigned grid[3] = {16, 1, 1}, block[3] = {8, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 4), "");
  auto half_at = [](std::uint32_t bits, int k) {
    const std::uint16_t x = static_cast<std::uint16_t>(bits >> (16 * k));
    const std::uint32_t sign = (x >> 15) & 1u, exp = (x >> 10) & 31u, man = x & 1023u;
    return (sign ? -1.0 : 1.0) * std::ldexp(1.0 + man / 1024.0, static_cast<int>(exp) - 15);
  };
  auto bf16_at = [](std::uint32_t bits, int k) {
    const std::uint32_t f = (bits >> (16 * k)) << 16;
    float v;
    std::memcpy(&v, &f, 4);
    return static_cast<double>(v);
  };
  EXPECT_EQ(half_at(h, 0), 128.0); // 128 threads
  EXPECT_EQ(half_at(h, 1), 256.0);
  EXPECT_EQ(bf16_at(b, 0), 128.0);
  EXPECT_EQ(bf16_at(b, 1), 256.0);
  EXPECT_EQ(half_at(one, 0), 128.0);
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

// A failed assert ends the launch as the driver's CUDA_ERROR_ASSERT does, with the candidate's
// text, its line and the thread, even while the block's other threads wait at a barrier; the
// same kernel whose asserts hold runs through.
TEST_F(HostKernels, AFailedAssertEndsTheLaunchWithItsTextLineBlockAndThread) {
  const auto m = build(R"(__global__ void check(const int* x, int n, int* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(x[i] < n);
  __syncthreads();
  y[i] = x[i];
}
)",
                       {"check"});
  std::vector<int> x(64, 0), y(64, -1);
  const int *px = x.data();
  int* py = y.data();
  int n = 64;
  void* args[] = {&px, &n, &py};
  const unsigned grid[3] = {2, 1, 1}, block[3] = {32, 1, 1};
  HostAssertion held;
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 2, &held), "");
  EXPECT_FALSE(held.caught);
  EXPECT_EQ(y[63], 0);

  x[37] = 100; // block 1, thread 5
  HostAssertion a;
  EXPECT_EQ(m->launch(0, grid, block, 0, args, 2, &a), "device assertion failed");
  ASSERT_TRUE(a.caught);
  EXPECT_EQ(a.condition, "x[i] < n");
  EXPECT_EQ(a.file, "test.cu");
  EXPECT_EQ(a.line, 3u);
  EXPECT_EQ(std::vector<unsigned>(a.block, a.block + 3), (std::vector<unsigned>{1, 0, 0}));
  EXPECT_EQ(std::vector<unsigned>(a.thread, a.thread + 3), (std::vector<unsigned>{5, 0, 0}));
  // Without a place for the fields the message still says what stopped the kernel, and no text.
  EXPECT_EQ(m->launch(0, grid, block, 0, args, 2), "device assertion failed");
}

TEST_F(HostKernels, TrapEndsTheLaunch) {
  const auto m = build(R"(
__global__ void stop(float* y) {
  if (threadIdx.x == 7) __trap();
  y[threadIdx.x] = 1.0f;
}
)",
                       {"stop"});
  std::vector<float> y(32);
  float* py = y.data();
  void* args[] = {&py};
  const unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
  HostAssertion a;
  EXPECT_EQ(m->launch(0, grid, block, 0, args, 1, &a), "the kernel executed __trap()");
  EXPECT_FALSE(a.caught);
}

// Through the preprocessing as NVRTC does it (the source's macros decided before the host
// build): assert with no include and through <assert.h> or <cassert>, __assertfail called
// directly with texts that hold anything (capped, the message quotes them), and NDEBUG as usual:
// -DNDEBUG (one of NVRTC's macros then) or a #define before the include turns assert off.
TEST_F(HostKernels, AssertAsNvrtcPreprocessesItAndNdebug) {
  auto run = [](const std::string& head, bool ndebug, HostAssertion& a) {
    HostCompileOptions o = options();
    o.device_macros = {{"__CUDACC__", "1"}, {"__CUDACC_RTC__", "1"}, {"__CUDA_ARCH__", "900"}};
    if (ndebug) o.device_macros.emplace_back("NDEBUG", "");
    const auto m = compile_host_module(head + R"(
__global__ void check(int n) {
  assert(threadIdx.x != 9 && "thread 9");
}
)",
                                       "pp.cu", {"check"}, o);
    int nn = 1;
    void* args[] = {&nn};
    const unsigned grid[3] = {1, 1, 1}, block[3] = {16, 1, 1};
    return m->launch(0, grid, block, 0, args, 1, &a);
  };
  for (const char* head : {"", "#include <assert.h>", "#include <cassert>",
                           "#define NDEBUG\n#include <assert.h>\n#undef NDEBUG\n#include <cassert>",
                           "#define NDEBUG"}) {
    HostAssertion a;
    EXPECT_EQ(run(head, false, a), "device assertion failed") << head;
    ASSERT_TRUE(a.caught) << head;
    EXPECT_EQ(a.condition, "threadIdx.x != 9 && \"thread 9\"") << head;
    EXPECT_EQ(a.file, "pp.cu") << head;
    EXPECT_EQ(a.line, static_cast<unsigned>(3 + count_lines(head))) << head;
    EXPECT_EQ(a.thread[0], 9u) << head;
  }
  for (const char* head :
       {"#define NDEBUG\n#include <cassert>", "#define NDEBUG\n#include <assert.h>"}) {
    HostAssertion a;
    EXPECT_EQ(run(head, false, a), "") << head;
  }
  for (const char* head : {"", "#include <cassert>"}) {
    HostAssertion a;
    EXPECT_EQ(run(head, true, a), "") << head;
  }

  HostCompileOptions o = options();
  o.device_macros = {{"__CUDACC__", "1"}, {"__CUDACC_RTC__", "1"}, {"__CUDA_ARCH__", "900"}};
  const auto m = compile_host_module(R"(
__global__ void forge() {
  __assertfail("x\nPASS all\n", "f\".cu", 77, __func__, sizeof(char));
}
)",
                                     "forge.cu", {"forge"}, o);
  const unsigned one[3] = {1, 1, 1};
  HostAssertion a;
  EXPECT_EQ(m->launch(0, one, one, 0, nullptr, 1, &a), "device assertion failed");
  ASSERT_TRUE(a.caught);
  EXPECT_EQ(a.condition, "x\nPASS all\n");
  EXPECT_EQ(a.file, "f\".cu");
  EXPECT_EQ(a.line, 77u);
}

TEST_F(HostKernels, AHostCompilerErrorIsACompileErrorWithTheCandidatesLines) {
  try {
    (void)build("__global__ void k(float* y) {\n  y[0] = undefined_name;\n}\n", {"k"});
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("test.cu:2"), std::string::npos) << e.log();
  }
}

// ---- the checked build ----------------------------------------------------------------------

// The child's side: `--run-checked-module SO INDEX` launches kernel INDEX of SO on 4 blocks of 64
// threads over an int array of 256 and a sum cell, laid out as the host worker lays out its
// arena: [red zone | x | red zone | sum | red zone], only x and sum valid.
extern "C" char** environ;

constexpr int kZone = 4; // ints of red zone
const bool checked_child_hook = [] {
  const std::vector<std::string> args = test::own_command_line();
  if (args.size() < 4 || args[1] != "--run-checked-module") return true;
  HostModule m(args[2]);
  std::vector<int> arena(3 * kZone + 256 + 1, 0);
  int* px = arena.data() + kZone;
  int* ps = px + 256 + kZone;
  for (int i = 0; i < 256; ++i) px[i] = 1;
  const unsigned long x_at = kZone * sizeof(int), sum_at = (2 * kZone + 256) * sizeof(int);
  const std::string tracked = m.track(arena.data(), arena.size() * sizeof(int), arena.data(),
                                      {x_at, 256 * sizeof(int), sum_at, sizeof(int)}, true);
  void* kernel_args[] = {&px, &ps};
  const unsigned grid[3] = {4, 1, 1}, block[3] = {64, 1, 1};
  const std::string error = tracked.empty()
                                ? m.launch(std::stoi(args[3]), grid, block, 0, kernel_args, 1)
                                : "track: " + tracked;
  std::fprintf(stderr, "launched: %s\n", error.empty() ? "ok" : error.c_str());
  std::_Exit(0);
}();

struct ChildRun {
  int code = -1;
  std::string err;
};

ChildRun run_checked_child(const fs::path& so, int index) {
  const fs::path log = fs::temp_directory_path() / ("kjudge_checked_" + std::to_string(::getpid()));
  std::vector<std::string> argv = {"/proc/self/exe", "--run-checked-module", so.string(),
                                   std::to_string(index)};
  std::vector<char*> raw_argv;
  for (auto& a : argv) raw_argv.push_back(a.data());
  raw_argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  ChildRun r;
  if (posix_spawn(&pid, raw_argv[0], &actions, nullptr, raw_argv.data(), environ) == 0) {
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
// with a plain +=); 2 to 4 are the same done right (barriers, shuffles, a warp-synchronous tail
// with __syncwarp); 5 reads one int before x, 6 writes one past it.
const char* const kCheckedKernels = R"(__global__ void tree_no_barrier(int* x, int* sum) {
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
__global__ void warp_synchronous_tail(int* x, int* sum) {
  __shared__ int part[64];
  part[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x < 32) {
    part[threadIdx.x] += part[threadIdx.x + 32];
    __syncwarp();
    for (int w = 16; w > 0; w /= 2) {
      int v = threadIdx.x < w ? part[threadIdx.x + w] : 0;
      __syncwarp();
      part[threadIdx.x] += v;
      __syncwarp();
    }
  }
  if (threadIdx.x == 0) atomicAdd(sum, part[0]);
}
__global__ void read_before_x(int* x, int* sum) {
  if (blockIdx.x == 2 && threadIdx.x == 5) atomicAdd(sum, x[-1]);
}
__global__ void write_past_x(int* x, int* sum) {
  if (blockIdx.x == 3 && threadIdx.x == 63) x[256] = 7;
}
)";

TEST_F(HostKernels, TheCheckedBuildFindsRacesAndOutOfBoundsAccessesWithTheirPlaces) {
  ASSERT_TRUE(checked_child_hook);
  HostCompileOptions o = options();
  o.checked = true;
  const fs::path so = build_host_module(
      kCheckedKernels, "race.cu",
      {"tree_no_barrier", "plain_cross_block_add", "tree", "warp_shuffle", "warp_synchronous_tail",
       "read_before_x", "write_past_x"},
      o);
  auto finding_of = [&](int index) {
    const ChildRun r = run_checked_child(so, index);
    EXPECT_EQ(r.code, 66) << index << "\n" << r.err;
    auto f = parse_shadow_finding(r.err);
    if (f) place_finding(*f, so, "race.cu");
    return f;
  };

  const auto tree = finding_of(0);
  ASSERT_TRUE(tree);
  EXPECT_TRUE(tree->race);
  EXPECT_TRUE(tree->shared);
  EXPECT_EQ(tree->current.place, "race.cu:7") << tree->message("");
  EXPECT_EQ(tree->previous.place, "race.cu:7") << tree->message("");
  // Two threads of one block: the tree's partner slots.
  EXPECT_EQ(tree->current.block, "block (0,0,0)") << tree->message("");
  EXPECT_EQ(tree->previous.block, "block (0,0,0)") << tree->message("");
  EXPECT_NE(tree->current.thread, tree->previous.thread) << tree->message("");

  const auto sum = finding_of(1);
  ASSERT_TRUE(sum);
  EXPECT_TRUE(sum->race);
  EXPECT_FALSE(sum->shared);
  EXPECT_EQ(sum->offset, static_cast<std::int64_t>((2 * kZone + 256) * sizeof(int)));
  EXPECT_EQ(sum->current.place, "race.cu:16") << sum->message("");
  EXPECT_EQ(sum->previous.place, "race.cu:16") << sum->message("");
  // Thread 0 of two different blocks.
  EXPECT_EQ(sum->current.thread, "thread (0,0,0)") << sum->message("");
  EXPECT_EQ(sum->previous.thread, "thread (0,0,0)") << sum->message("");
  EXPECT_NE(sum->current.block, sum->previous.block) << sum->message("");

  for (int right : {2, 3, 4}) {
    const ChildRun r = run_checked_child(so, right);
    EXPECT_EQ(r.code, 0) << right << "\n" << r.err;
    EXPECT_NE(r.err.find("launched: ok"), std::string::npos) << right << "\n" << r.err;
    EXPECT_FALSE(parse_shadow_finding(r.err)) << right;
  }

  const auto before = finding_of(5);
  ASSERT_TRUE(before);
  EXPECT_FALSE(before->race);
  EXPECT_EQ(before->current.kind, "read");
  EXPECT_EQ(before->offset, static_cast<std::int64_t>((kZone - 1) * sizeof(int)));
  EXPECT_EQ(before->current.place, "race.cu:50") << before->message("");
  EXPECT_EQ(before->current.block + " " + before->current.thread,
            "block (2,0,0) thread (5,0,0)");

  const auto past = finding_of(6);
  ASSERT_TRUE(past);
  EXPECT_EQ(past->current.kind, "write");
  EXPECT_EQ(past->offset, static_cast<std::int64_t>((kZone + 256) * sizeof(int)));
  EXPECT_EQ(past->current.place, "race.cu:53") << past->message("");
}

} // namespace
} // namespace kj
