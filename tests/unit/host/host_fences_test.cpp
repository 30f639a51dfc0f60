// The checked build's memory model for inter-block protocols: the CUDA programming guide's
// "last block done" (threadFenceReduction) is no race when each block's partial is fenced before
// its atomic count, with the fence by the storing thread, by every storing thread, or by thread 0
// after a __syncthreads, and when the last block resets the count with a plain store. Without
// the fence, with a store after the fence or the atomic, with no atomic on the reading side,
// with the reader's atomic on another address, or with a plain store cutting the atomic chain,
// the same reads stay races, with both places pinned. Each kernel runs in a child process, as in
// host_backend_test.cpp, since a finding ends the process.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/host_backend.hpp"
#include "support/own_command_line.hpp"

extern "C" char** environ;

namespace kj {
namespace {

namespace fs = std::filesystem;

constexpr unsigned kBlocks = 8, kThreads = 64, kN = kBlocks * kThreads;
constexpr int kZone = 4; // ints of red zone

// The child's side: `--run-fences-module SO INDEX` launches kernel INDEX of SO on 8 blocks of 64
// threads over an arena [zone | x | zone | partial | zone | count | zone | result | zone], x all
// ones, the rest zero, and prints the result and the count.
const bool fences_child_hook = [] {
  const std::vector<std::string> args = test::own_command_line();
  if (args.size() < 4 || args[1] != "--run-fences-module") return true;
  HostModule m(args[2]);
  std::vector<int> arena(5 * kZone + 2 * kN + 2, 0);
  int* x = arena.data() + kZone;
  int* partial = x + kN + kZone;
  auto* count = reinterpret_cast<unsigned*>(partial + kN + kZone);
  int* result = reinterpret_cast<int*>(count) + 1 + kZone;
  std::fill(x, x + kN, 1);
  auto at = [&](const void* p) {
    return static_cast<unsigned long>(static_cast<const char*>(p) -
                                      reinterpret_cast<const char*>(arena.data()));
  };
  const std::string tracked = m.track(arena.data(), arena.size() * sizeof(int), arena.data(),
                                      {at(x), kN * sizeof(int), at(partial), kN * sizeof(int),
                                       at(count), sizeof(unsigned), at(result), sizeof(int)},
                                      true);
  void* kernel_args[] = {&x, &partial, &count, &result};
  const unsigned grid[3] = {kBlocks, 1, 1}, block[3] = {kThreads, 1, 1};
  const std::string error = tracked.empty()
                                ? m.launch(std::stoi(args[3]), grid, block, 0, kernel_args, 1)
                                : "track: " + tracked;
  std::fprintf(stderr, "launched: %s result=%d count=%u\n", error.empty() ? "ok" : error.c_str(),
               *result, *count);
  std::_Exit(0);
}();

struct ChildRun {
  int code = -1;
  std::string err;
};

ChildRun run_child(const fs::path& so, int index) {
  const fs::path log = fs::temp_directory_path() / ("kjudge_fences_" + std::to_string(::getpid()));
  std::vector<std::string> argv = {"/proc/self/exe", "--run-fences-module", so.string(),
                                   std::to_string(index)};
  std::vector<char*> raw_argv;
  for (auto& a : argv)
    raw_argv.push_back(a.data());
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

// Every kernel takes (x, partial, count, result). A "// @name" comment marks the lines the
// findings must name.
const char* const kSource = R"(// The guide's threadFenceReduction: thread 0 stores, fences, counts.
__global__ void fenced_one_thread(const int* x, int* partial, unsigned* count, int* result) {
  __shared__ int red[64];
  __shared__ bool am_last;
  red[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 64; ++i) s += red[i];
    partial[blockIdx.x] = s;
    __threadfence();
    am_last = atomicInc(count, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (am_last && threadIdx.x == 0) {
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    *result = total;
  }
}
// Every thread stores and fences; thread 0 counts after a barrier.
__global__ void fenced_every_thread(const int* x, int* partial, unsigned* count, int* result) {
  __shared__ bool am_last;
  partial[blockIdx.x * 64 + threadIdx.x] = 2 * x[blockIdx.x * 64 + threadIdx.x];
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) am_last = atomicAdd(count, 1u) == gridDim.x - 1;
  __syncthreads();
  if (am_last) {
    int s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b * 64 + threadIdx.x];
    atomicAdd(result, s);
  }
}
// Every thread stores; thread 0 fences after a barrier and counts.
__global__ void fenced_after_barrier(const int* x, int* partial, unsigned* count, int* result) {
  __shared__ bool am_last;
  partial[blockIdx.x * 64 + threadIdx.x] = 3 * x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    am_last = atomicInc(count, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (am_last) {
    int s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b * 64 + threadIdx.x];
    atomicAdd(result, s);
  }
}
// fenced_one_thread without its fence.
__global__ void unfenced_one_thread(const int* x, int* partial, unsigned* count, int* result) {
  __shared__ int red[64];
  __shared__ bool am_last;
  red[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 64; ++i) s += red[i];
    partial[blockIdx.x] = s; // @unfenced-store
    am_last = atomicInc(count, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (am_last && threadIdx.x == 0) {
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b]; // @unfenced-load
    *result = total;
  }
}
// fenced_one_thread, the last block resetting the count for the next launch.
__global__ void fenced_reset(const int* x, int* partial, unsigned* count, int* result) {
  __shared__ int red[64];
  __shared__ bool am_last;
  red[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) {
    int s = 0;
    for (int i = 0; i < 64; ++i) s += red[i];
    partial[blockIdx.x] = s;
    __threadfence();
    am_last = atomicInc(count, gridDim.x) == gridDim.x - 1;
  }
  __syncthreads();
  if (am_last && threadIdx.x == 0) {
    int total = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    *result = total;
    *count = 0;
  }
}
// A fenced release, but the next block reads before any atomic of its own.
__global__ void release_without_acquire(const int* x, int* partial, unsigned* count, int* result) {
  if (threadIdx.x == 0) {
    const int before = blockIdx.x > 0 ? partial[blockIdx.x - 1] : 0; // @no-acquire-load
    partial[blockIdx.x] = before + x[blockIdx.x]; // @no-acquire-store
    __threadfence();
    atomicInc(count, gridDim.x);
  }
}
// fenced_every_thread without its fence.
__global__ void unfenced_every_thread(const int* x, int* partial, unsigned* count, int* result) {
  __shared__ bool am_last;
  partial[blockIdx.x * 64 + threadIdx.x] = 2 * x[blockIdx.x * 64 + threadIdx.x]; // @every-store
  __syncthreads();
  if (threadIdx.x == 0) am_last = atomicAdd(count, 1u) == gridDim.x - 1;
  __syncthreads();
  if (am_last) {
    int s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b * 64 + threadIdx.x]; // @every-load
    atomicAdd(result, s);
  }
}
// Thread 0 stores again after its fence: that store is not released.
__global__ void store_after_fence(const int* x, int* partial, unsigned* count, int* result) {
  __shared__ bool am_last;
  partial[blockIdx.x * 64 + threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  __threadfence();
  if (threadIdx.x == 0) partial[blockIdx.x * 64] += 1; // @late-store
  __syncthreads();
  if (threadIdx.x == 0) am_last = atomicAdd(count, 1u) == gridDim.x - 1;
  __syncthreads();
  if (am_last) {
    int s = 0;
    for (unsigned b = 0; b < gridDim.x; ++b) s += partial[b * 64 + threadIdx.x]; // @late-load
    atomicAdd(result, s);
  }
}
// The fence and the count come before the store.
__global__ void store_after_release(const int* x, int* partial, unsigned* count, int* result) {
  if (threadIdx.x == 0) {
    __threadfence();
    const bool last = atomicInc(count, gridDim.x) == gridDim.x - 1;
    partial[blockIdx.x] = x[blockIdx.x]; // @after-release-store
    if (last) {
      int total = 0;
      for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b]; // @after-release-load
      *result = total;
    }
  }
}
// The last block's atomic is on another address than the count the others release on.
__global__ void acquire_elsewhere(const int* x, int* partial, unsigned* count, int* result) {
  if (threadIdx.x == 0) {
    if (blockIdx.x + 1 < gridDim.x) {
      partial[blockIdx.x] = x[blockIdx.x]; // @elsewhere-store
      __threadfence();
      atomicAdd(count, 1u);
    } else {
      atomicAdd(result, 1);
      *result += partial[0]; // @elsewhere-load
    }
  }
}
// Block 3 stores the count plainly: the atomics after it read that store, not blocks 0 to 2's
// releases.
__global__ void chain_cut(const int* x, int* partial, unsigned* count, int* result) {
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = x[blockIdx.x]; // @cut-store
    __threadfence();
    atomicAdd(count, 1u);
    if (blockIdx.x == 3) {
      *count = 100;
      atomicAdd(count, 1u);
    }
    if (blockIdx.x == gridDim.x - 1) {
      int total = 0;
      for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b]; // @cut-load
      *result = total;
    }
  }
}
// chain_cut with an atomicAdd for the plain store: the chain holds.
__global__ void chain_kept(const int* x, int* partial, unsigned* count, int* result) {
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = x[blockIdx.x];
    __threadfence();
    atomicAdd(count, 1u);
    if (blockIdx.x == 3) {
      atomicAdd(count, 100u);
      atomicAdd(count, 1u);
    }
    if (blockIdx.x == gridDim.x - 1) {
      int total = 0;
      for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
      *result = total;
    }
  }
}
)";

enum Kernel {
  fenced_one_thread,
  fenced_every_thread,
  fenced_after_barrier,
  unfenced_one_thread,
  fenced_reset,
  release_without_acquire,
  unfenced_every_thread,
  store_after_fence,
  store_after_release,
  acquire_elsewhere,
  chain_cut,
  chain_kept,
};

// "fences.cu:N", N the line holding "// @marker".
std::string place_of(const std::string& marker) {
  const std::string source = kSource;
  const std::size_t at = source.find("// @" + marker + "\n");
  if (at == std::string::npos) return "no marker " + marker;
  return "fences.cu:" + std::to_string(std::count(source.begin(), source.begin() + at, '\n') + 1);
}

class HostFences : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    HostCompileOptions o;
    o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
    o.cuda_include = "/usr/local/cuda/include";
    o.cache_dir = fs::temp_directory_path() / "kjudge_host_test_cache";
    o.checked = true;
    try {
      so_ = new fs::path(
          build_host_module(kSource, "fences.cu",
                            {"fenced_one_thread", "fenced_every_thread", "fenced_after_barrier",
                             "unfenced_one_thread", "fenced_reset", "release_without_acquire",
                             "unfenced_every_thread", "store_after_fence", "store_after_release",
                             "acquire_elsewhere", "chain_cut", "chain_kept"},
                            o));
    } catch (const CompileError& e) {
      FAIL() << e.what() << "\n" << e.log();
    }
  }
  static void TearDownTestSuite() {
    delete so_;
    so_ = nullptr;
  }

  // The child's last line, "launched: ok result=R count=C", when it ran without a finding.
  static std::string passes(Kernel k) {
    if (so_ == nullptr || !fences_child_hook) return "no module";
    const ChildRun r = run_child(*so_, k);
    if (r.code != 0 || parse_shadow_finding(r.err))
      return "code " + std::to_string(r.code) + ": " + r.err;
    const std::size_t at = r.err.rfind("launched: ");
    return at == std::string::npos ? r.err : r.err.substr(at, r.err.find('\n', at) - at);
  }

  // The race the child reported, its places filled in.
  static std::optional<ShadowFinding> race(Kernel k) {
    if (so_ == nullptr) return std::nullopt;
    const ChildRun r = run_child(*so_, k);
    EXPECT_EQ(r.code, 66) << k << "\n" << r.err;
    auto f = parse_shadow_finding(r.err);
    if (!f) return f;
    place_finding(*f, *so_, "fences.cu");
    EXPECT_TRUE(f->race) << f->message("");
    EXPECT_FALSE(f->shared) << f->message("");
    return f;
  }

  static std::string who(const ShadowAccess& a) { return a.block + " " + a.thread; }

  static fs::path* so_;
};
fs::path* HostFences::so_ = nullptr;

constexpr long kPartialAt = (2 * kZone + kN) * sizeof(int); // partial[0]'s offset in the arena

// (1) The guide's protocol, the fence by the one thread that stores.
TEST_F(HostFences, TheGuidesLastBlockDoneWithItsFenceIsNoRace) {
  EXPECT_EQ(passes(fenced_one_thread), "launched: ok result=512 count=8");
}

// (1) Every storing thread fences, then a barrier, then thread 0's atomicAdd.
TEST_F(HostFences, EveryStoringThreadsFenceBeforeTheBarrierReleasesTheirStores) {
  EXPECT_EQ(passes(fenced_every_thread), "launched: ok result=1024 count=8");
}

// (2) The fence by thread 0 after the barrier is cumulative: it releases every thread's store.
TEST_F(HostFences, ThreadZerosFenceAfterTheBarrierReleasesTheWholeBlock) {
  EXPECT_EQ(passes(fenced_after_barrier), "launched: ok result=1536 count=8");
}

// (3) The same kernel without its fence: the last block's read of block 0's partial.
TEST_F(HostFences, WithoutTheFenceTheLastBlocksReadIsARaceWithBothLines) {
  const auto f = race(unfenced_one_thread);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->offset, kPartialAt);
  EXPECT_EQ(f->current.kind, "read");
  EXPECT_EQ(f->current.place, place_of("unfenced-load")) << f->message("");
  EXPECT_EQ(who(f->current), "block (7,0,0) thread (0,0,0)");
  EXPECT_EQ(f->previous.kind, "write");
  EXPECT_EQ(f->previous.place, place_of("unfenced-store")) << f->message("");
  EXPECT_EQ(who(f->previous), "block (0,0,0) thread (0,0,0)");
  EXPECT_EQ(place_of("unfenced-store"), "fences.cu:60");
  EXPECT_EQ(place_of("unfenced-load"), "fences.cu:66");
}

TEST_F(HostFences, WithoutTheFenceEveryThreadsStoreIsARaceToo) {
  const auto f = race(unfenced_every_thread);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->offset, kPartialAt);
  EXPECT_EQ(f->current.place, place_of("every-load")) << f->message("");
  EXPECT_EQ(who(f->current), "block (7,0,0) thread (0,0,0)");
  EXPECT_EQ(f->previous.place, place_of("every-store")) << f->message("");
  EXPECT_EQ(who(f->previous), "block (0,0,0) thread (0,0,0)");
}

// (4) The last block's plain `*count = 0` comes after every block's atomic on the count (the
// chain of read-modify-writes ends in its own atomicInc).
TEST_F(HostFences, TheLastBlocksPlainResetOfTheCountIsNoRace) {
  EXPECT_EQ(passes(fenced_reset), "launched: ok result=512 count=0");
}

// (5) Block 0 released its partial, but block 1 reads it before any atomic of its own.
TEST_F(HostFences, AReleaseWithoutAnAcquireOrdersNothing) {
  const auto f = race(release_without_acquire);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->offset, kPartialAt);
  EXPECT_EQ(f->current.kind, "read");
  EXPECT_EQ(f->current.place, place_of("no-acquire-load")) << f->message("");
  EXPECT_EQ(who(f->current), "block (1,0,0) thread (0,0,0)");
  EXPECT_EQ(f->previous.place, place_of("no-acquire-store")) << f->message("");
  EXPECT_EQ(who(f->previous), "block (0,0,0) thread (0,0,0)");
}

// A store after the thread's own fence (before the barrier and the count) is not released, and
// neither is one after the count.
TEST_F(HostFences, AStoreAfterTheFenceOrAfterTheCountIsNotReleased) {
  const auto fence = race(store_after_fence);
  ASSERT_TRUE(fence);
  EXPECT_EQ(fence->offset, kPartialAt);
  EXPECT_EQ(fence->current.place, place_of("late-load")) << fence->message("");
  EXPECT_EQ(who(fence->current), "block (7,0,0) thread (0,0,0)");
  EXPECT_EQ(fence->previous.place, place_of("late-store")) << fence->message("");
  EXPECT_EQ(who(fence->previous), "block (0,0,0) thread (0,0,0)");

  const auto count = race(store_after_release);
  ASSERT_TRUE(count);
  EXPECT_EQ(count->offset, kPartialAt);
  EXPECT_EQ(count->current.place, place_of("after-release-load")) << count->message("");
  EXPECT_EQ(who(count->current), "block (7,0,0) thread (0,0,0)");
  EXPECT_EQ(count->previous.place, place_of("after-release-store")) << count->message("");
  EXPECT_EQ(who(count->previous), "block (0,0,0) thread (0,0,0)");
}

// The reader's atomic is on `result`, the releases on `count`: nothing synchronises.
TEST_F(HostFences, AnAtomicOnAnotherAddressAcquiresNothing) {
  const auto f = race(acquire_elsewhere);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->offset, kPartialAt);
  EXPECT_EQ(f->current.place, place_of("elsewhere-load")) << f->message("");
  EXPECT_EQ(who(f->current), "block (7,0,0) thread (0,0,0)");
  EXPECT_EQ(f->previous.place, place_of("elsewhere-store")) << f->message("");
  EXPECT_EQ(who(f->previous), "block (0,0,0) thread (0,0,0)");
}

// After block 3's plain store to the count, the last block's atomic reads a chain that starts
// there: blocks 0 to 2's releases do not reach it.
TEST_F(HostFences, APlainStoreToTheCountCutsTheChainOfReleases) {
  const auto f = race(chain_cut);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->offset, kPartialAt);
  EXPECT_EQ(f->current.place, place_of("cut-load")) << f->message("");
  EXPECT_EQ(who(f->current), "block (7,0,0) thread (0,0,0)");
  EXPECT_EQ(f->previous.place, place_of("cut-store")) << f->message("");
  EXPECT_EQ(who(f->previous), "block (0,0,0) thread (0,0,0)");
}

// The same with the plain store an atomic: every release reaches the last block.
TEST_F(HostFences, AnAtomicInItsPlaceKeepsTheChain) {
  EXPECT_EQ(passes(chain_kept), "launched: ok result=8 count=109");
}

} // namespace
} // namespace kj
