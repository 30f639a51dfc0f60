// The static scan on PTX that NVRTC really makes (no GPU needed): each construct DESIGN.md names is
// found, with its source line, even behind a macro or a helper; what a right kernel does (reads
// of its arguments, stores through them, shared-memory atomics, reads of a __device__ table) is
// not; a problem's `forbid` adds identifiers, registers and PTX instructions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kjudge/nvrtc.hpp"
#include "kjudge/scan.hpp"

namespace {

kj::CompileOptions options() {
  kj::CompileOptions o;
  o.arch = 90;
  o.kjudge_include = KJ_SOURCE_DIR "/include";
  return o;
}

// The findings of `source`'s PTX, one kernel `k`.
std::vector<kj::ScanFinding> scan(const std::string& source,
                                  const std::vector<std::string>& forbid = {}) {
  const kj::CompiledModule m = kj::compile_module(source, "cand.cu", {"k"}, options());
  return kj::scan_ptx(m.ptx, forbid);
}

std::string listed(const std::vector<kj::ScanFinding>& found) {
  std::string s;
  for (const kj::ScanFinding& f : found)
    s += f.what + " @" + std::to_string(f.line) + "; ";
  return s;
}

bool has(const std::vector<kj::ScanFinding>& found, const std::string& what, int line) {
  for (const kj::ScanFinding& f : found)
    if (f.what == what && f.line == line) return true;
  return false;
}

TEST(StaticScan, ARightKernelHasNoFindings) {
  const auto found = scan(R"(
__device__ const float table[4] = {1, 2, 3, 4};
__device__ float twice(float v) { return 2 * v; }
__global__ void k(const float* x, float* y, int* hits, int n) {
  __shared__ int count;
  if (threadIdx.x == 0) count = 0;
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = twice(x[i]) + table[i & 3];
    atomicAdd(&count, 1);
    atomicAdd(hits, 1);
  }
}
)");
  EXPECT_TRUE(found.empty()) << listed(found);
}

TEST(StaticScan, AClockBehindAMacroIsFoundAtTheLineThatUsesIt) {
  const auto found = scan(R"(#define NOW(t) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t))
__device__ long long stamp() { return clock64(); }
__global__ void k(long long* out) {
  long long t;
  NOW(t);
  out[0] = t + stamp();
  unsigned sm;
  asm("mov.u32 %0, %%smid;" : "=r"(sm));
  out[1] = sm;
}
)");
  EXPECT_TRUE(has(found, "reads %globaltimer", 5)) << listed(found);
  EXPECT_TRUE(has(found, "reads %smid", 8)) << listed(found);
  bool clock = false;
  for (const kj::ScanFinding& f : found)
    clock = clock || f.what == "reads %clock64";
  EXPECT_TRUE(clock) << listed(found);
  for (const kj::ScanFinding& f : found) {
    EXPECT_EQ(f.file.substr(f.file.size() - 7), "cand.cu") << f.file;
    EXPECT_EQ(f.function, "_Z1kPx");
  }
}

TEST(StaticScan, PrintfAndTheDeviceHeapAreFound) {
  const auto found = scan(R"(
#include "kjudge/device.cuh"
// device printf and the heap need no declaration of their own
__global__ void k(int* out) {
  int* p = static_cast<int*>(malloc(16));
  p[0] = 1;
  out[0] = p[0];
  free(p);
  printf("%d\n", out[0]);
}
)");
  EXPECT_TRUE(has(found, "calls malloc", 5)) << listed(found);
  EXPECT_TRUE(has(found, "calls free", 8)) << listed(found);
  EXPECT_TRUE(has(found, "calls vprintf", 9)) << listed(found);
}

TEST(StaticScan, WritesToDeviceVariablesAreFoundAndReadsAreNot) {
  const auto found = scan(R"(
__device__ float g_cache[1024];
__device__ const float* g_seen;
__device__ unsigned g_count;
namespace state { __device__ int last; }
__global__ void k(const float* x, float* y) {
  const int i = threadIdx.x;
  if (g_seen == x) { y[i] = g_cache[i + 1]; return; }
  g_cache[i + 1] = x[i];
  if (i == 0) g_seen = x;
  atomicAdd(&g_count, 1u);
  state::last = i;
  y[i] = x[i];
}
)");
  EXPECT_TRUE(has(found, "stores to the __device__ variable g_cache", 9)) << listed(found);
  EXPECT_TRUE(has(found, "stores to the __device__ variable g_seen", 10)) << listed(found);
  EXPECT_TRUE(has(found, "makes an atomic on the __device__ variable g_count", 11))
      << listed(found);
  EXPECT_TRUE(has(found, "stores to the __device__ variable state::last", 12)) << listed(found);
  EXPECT_EQ(found.size(), 4u) << listed(found);
}

TEST(StaticScan, AProblemsForbidListAddsNames) {
  const std::string source = R"(
#define ADD atomicAdd
__global__ void k(int* out) {
  ADD(out, 1);  // atomicAdd in a comment is not a use
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[1] = lane;
}
)";
  const std::vector<std::string> forbid = {"atomicAdd", "%laneid", "ptx:red", "ptx:atom"};
  const std::vector<kj::ScanFinding> in_source = kj::scan_source(source, "cand.cu", forbid);
  ASSERT_EQ(in_source.size(), 1u);
  EXPECT_EQ(in_source[0].what, "uses atomicAdd");
  EXPECT_EQ(in_source[0].line, 2);
  const auto in_ptx = scan(source, forbid);
  EXPECT_TRUE(has(in_ptx, "reads %laneid", 6)) << listed(in_ptx);
  bool atomic = false; // NVRTC makes an unused atomicAdd a red, else an atom
  for (const kj::ScanFinding& f : in_ptx)
    atomic = atomic || ((f.what.rfind("uses the PTX instruction red.", 0) == 0 ||
                         f.what.rfind("uses the PTX instruction atom.", 0) == 0) &&
                        f.line == 4);
  EXPECT_TRUE(atomic) << listed(in_ptx);
  EXPECT_TRUE(scan(source).empty());
}

TEST(StaticScan, TheMessageNamesLinesAndKernels) {
  const std::string source = R"(__device__ int g_n;
__global__ void k(int* out) {
  g_n = out[0];
  out[1] = clock();
}
)";
  const kj::CompiledModule m = kj::compile_module(source, "cand.cu", {"k"}, options());
  const auto message = kj::forbidden_constructs(source, "cand.cu", m.ptx, {});
  ASSERT_TRUE(message.has_value());
  EXPECT_NE(message->find("stores to the __device__ variable g_n"), std::string::npos) << *message;
  EXPECT_NE(message->find("at line 3 in k(int*)"), std::string::npos) << *message;
  EXPECT_NE(message->find("reads %clock"), std::string::npos) << *message;
  EXPECT_FALSE(
      kj::forbidden_constructs("__global__ void k(int* o) { o[0] = 1; }\n", "cand.cu",
                               kj::compile_module("__global__ void k(int* o) { o[0] = 1; }\n",
                                                  "cand.cu", {"k"}, options())
                                   .ptx,
                               {})
          .has_value());
}

} // namespace
