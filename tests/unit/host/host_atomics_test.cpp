// atomicCAS and atomicExch on the host backend, on every width the GPU has them for (atomicCAS:
// int, unsigned int, unsigned long long int, unsigned short int; atomicExch: int, unsigned int,
// unsigned long long int, float; the _block and _system forms), each in a small kernel compiled
// by the host compiler and run across blocks on several CPU threads, its results pinned: CAS
// loops that count, take a maximum and add doubles as the CUDA programming guide does (with its
// long long argument for an unsigned long long, which converts as on the GPU), 16-bit counters
// that leave their neighbours alone, the old value a failed CAS returns, and exchanges that lose
// no value.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/host_backend.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<HostModule> build(const std::string& src,
                                  const std::vector<std::string>& expressions) {
  HostCompileOptions o;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cuda_include = "/usr/local/cuda/include";
  o.cache_dir = fs::temp_directory_path() / "kjudge_host_test_cache";
  return compile_host_module(src, "atomics.cu", expressions, o);
}

constexpr unsigned kBlocks = 8, kThreads = 64, kAll = kBlocks * kThreads;

// Counting, a maximum and a double sum by CAS loops, one per 32- and 64-bit type and scope.
TEST(HostAtomics, CompareAndSwapLoopsOnIntUnsignedAndUnsignedLongLong) {
  const auto m = build(R"(
__device__ double add_double(double* address, double val) {
  unsigned long long int* address_as_ull = (unsigned long long int*)address;
  unsigned long long int old = *address_as_ull, assumed;
  do {
    assumed = old;
    old = atomicCAS(address_as_ull, assumed,
                    __double_as_longlong(val + __longlong_as_double(assumed)));
  } while (assumed != old);
  return __longlong_as_double(old);
}
__global__ void cas(int* max, unsigned* count, unsigned long long* wide, double* sum,
                    unsigned* block_count, unsigned long long* system_wide) {
  const int me = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = (me * 37) % 501 - 250;
  int old = *max;
  while (v > old) {
    const int seen = atomicCAS(max, old, v);
    if (seen == old) break;
    old = seen;
  }
  for (unsigned was = *count;;) {
    const unsigned seen = atomicCAS(count, was, was + 1u);
    if (seen == was) break;
    was = seen;
  }
  for (unsigned long long was = *wide;;) {
    const unsigned long long seen = atomicCAS(wide, was, was + (1ull << 33));
    if (seen == was) break;
    was = seen;
  }
  add_double(sum, 0.25);
  for (unsigned was = *block_count;;) {
    const unsigned seen = atomicCAS_block(block_count, was, was + 2u);
    if (seen == was) break;
    was = seen;
  }
  for (unsigned long long was = *system_wide;;) {
    const unsigned long long seen = atomicCAS_system(system_wide, was, was + 3);
    if (seen == was) break;
    was = seen;
  }
}
)",
                       {"cas"});
  int max = -1000;
  unsigned count = 0, block_count = 0;
  unsigned long long wide = 5, system_wide = 0;
  double sum = 0;
  int* pm = &max;
  unsigned *pc = &count, *pb = &block_count;
  unsigned long long *pw = &wide, *ps = &system_wide;
  double* pd = &sum;
  void* args[] = {&pm, &pc, &pw, &pd, &pb, &ps};
  const unsigned grid[3] = {kBlocks, 1, 1}, block[3] = {kThreads, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 4), "");
  int expect_max = -1000;
  for (unsigned me = 0; me < kAll; ++me)
    expect_max = std::max(expect_max, static_cast<int>(me * 37 % 501) - 250);
  EXPECT_EQ(expect_max, 250);
  EXPECT_EQ(max, 250);
  EXPECT_EQ(count, 512u);
  EXPECT_EQ(wide, 5ull + 512ull * (1ull << 33)); // past 32 bits: the whole word swapped
  EXPECT_EQ(sum, 128.0);
  EXPECT_EQ(block_count, 1024u);
  EXPECT_EQ(system_wide, 1536ull);
}

// sm_70's 16-bit atomicCAS: two counters in one 32-bit word, each counted by its own CAS loop,
// neither disturbing the other; a CAS that fails returns the value it found and stores nothing.
TEST(HostAtomics, CompareAndSwapOnUnsignedShortLeavesItsNeighbourAlone) {
  const auto m = build(R"(
__global__ void cas16(unsigned short* pair, unsigned short* found) {
  for (unsigned short was = pair[0];;) {
    const unsigned short seen = atomicCAS(&pair[0], was, (unsigned short)(was + 1));
    if (seen == was) break;
    was = seen;
  }
  for (unsigned short was = pair[1];;) {
    const unsigned short seen = atomicCAS(&pair[1], was, (unsigned short)(was + 2));
    if (seen == was) break;
    was = seen;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    found[0] = atomicCAS(&found[2], 1, 2); // holds 7: fails, returns 7
    found[1] = atomicCAS(&found[3], 9, 65535); // holds 9: swaps, returns 9
  }
}
)",
                       {"cas16"});
  std::uint16_t pair[2] = {65300, 3}, found[4] = {0, 0, 7, 9};
  void* pp = pair;
  void* pf = found;
  void* args[] = {&pp, &pf};
  const unsigned grid[3] = {kBlocks, 1, 1}, block[3] = {kThreads, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 4), "");
  EXPECT_EQ(pair[0], 276u); // 65300 + 512 wraps at 16 bits, carrying nothing into pair[1]
  EXPECT_EQ(pair[1], 3u + 1024u);
  EXPECT_EQ(found[0], 7u);
  EXPECT_EQ(found[1], 9u);
  EXPECT_EQ(found[2], 7u);
  EXPECT_EQ(found[3], 65535u);
}

// Every thread exchanges its number in and keeps what it took out: the values taken out and the
// one left are the start value and every thread's number, each once, for every type and scope.
TEST(HostAtomics, ExchangeOnIntUnsignedUnsignedLongLongAndFloatLosesNoValue) {
  const auto m = build(R"(
__global__ void exch(int* i, unsigned* u, unsigned long long* ull, float* f, int* block_i,
                     float* system_f, int* out_i, unsigned* out_u, unsigned long long* out_ull,
                     float* out_f, int* out_block_i, float* out_system_f) {
  const int me = blockIdx.x * blockDim.x + threadIdx.x;
  out_i[me] = atomicExch(i, me);
  out_u[me] = atomicExch(u, (unsigned)me);
  out_ull[me] = atomicExch(ull, (1ull << 40) + me);
  out_f[me] = atomicExch(f, me); // an int, converted to float as CUDA's overload does
  out_block_i[me] = atomicExch_block(block_i, me);
  out_system_f[me] = atomicExch_system(system_f, 0.5f * me);
}
)",
                       {"exch"});
  int i = -1, block_i = -1;
  unsigned u = 1u << 31;
  unsigned long long ull = 3;
  float f = -1.0f, system_f = -1.0f;
  std::vector<int> out_i(kAll), out_block_i(kAll);
  std::vector<unsigned> out_u(kAll);
  std::vector<unsigned long long> out_ull(kAll);
  std::vector<float> out_f(kAll), out_system_f(kAll);
  int *pi = &i, *pbi = &block_i, *poi = out_i.data(), *pobi = out_block_i.data();
  unsigned *pu = &u, *pou = out_u.data();
  unsigned long long *pull = &ull, *poull = out_ull.data();
  float *pf = &f, *psf = &system_f, *pof = out_f.data(), *posf = out_system_f.data();
  void* args[] = {&pi, &pu, &pull, &pf, &pbi, &psf, &poi, &pou, &poull, &pof, &pobi, &posf};
  const unsigned grid[3] = {kBlocks, 1, 1}, block[3] = {kThreads, 1, 1};
  ASSERT_EQ(m->launch(0, grid, block, 0, args, 4), "");
  // Taken out and left over, sorted: the start value, then 0 .. 511 (as the type holds them).
  auto all_of = [](auto taken, auto left) {
    taken.push_back(left);
    std::sort(taken.begin(), taken.end());
    return taken;
  };
  std::vector<int> ints(kAll + 1);
  std::iota(ints.begin(), ints.end(), -1);
  EXPECT_EQ(all_of(out_i, i), ints);
  EXPECT_EQ(all_of(out_block_i, block_i), ints);
  std::vector<unsigned> uns(kAll + 1);
  std::iota(uns.begin(), uns.end(), 0u);
  uns.back() = 1u << 31;
  EXPECT_EQ(all_of(out_u, u), uns);
  std::vector<unsigned long long> wide(kAll + 1);
  wide[0] = 3;
  for (unsigned k = 0; k < kAll; ++k)
    wide[k + 1] = (1ull << 40) + k;
  EXPECT_EQ(all_of(out_ull, ull), wide);
  std::vector<float> floats(kAll + 1), halves(kAll + 1);
  for (unsigned k = 0; k <= kAll; ++k) {
    floats[k] = static_cast<float>(k) - 1.0f;
    halves[k] = k == 0 ? -1.0f : 0.5f * static_cast<float>(k - 1);
  }
  EXPECT_EQ(all_of(out_f, f), floats);
  EXPECT_EQ(all_of(out_system_f, system_f), halves);
}

} // namespace
} // namespace kj
