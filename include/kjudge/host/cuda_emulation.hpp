// CUDA C++ on the CPU: the header a kernel source is compiled against by the host backend
// (docs/design.md "The backends"), after src/backend/host/rewrite.cpp has turned its `__shared__`
// declarations into per-block storage. The whole runtime is here, so the shared object the host
// compiler makes from one source is self-contained: kjudge loads it and calls kj_host_launch.
//
// Model. The blocks of a launch run on a few CPU threads; the threads of one block run as
// fibers (Boost.Context) on one CPU thread, each until it reaches a barrier (__syncthreads,
// __syncwarp, a shuffle or a vote) or returns. When every live thread of the block waits at
// __syncthreads, all go on; a warp's operations wait for the live lanes the mask names. Warp
// operations exchange values through a per-warp slot array between two warp barriers.
// threadIdx, blockIdx, blockDim and gridDim read the running fiber's own values.
//
// What is not here (inline PTX, tensor-core instructions, grid-wide synchronisation) is refused
// by the rewrite with its place, before compiling; a construct that slips through fails to
// compile, never silently runs wrong.
#pragma once

#ifndef KJ_HOST_BACKEND
#define KJ_HOST_BACKEND 1
#endif

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

// The toolkit's own vector types, dim3 and make_* functions: cuda_fp16.h includes them too, so
// they must be the same definitions. Included before kjudge's qualifiers below replace the
// toolkit's host definitions of __device__ and friends.
#include <vector_functions.h>
#include <vector_types.h>

// The checked build (race detection and exact bounds) is compiled with -fsanitize=thread for
// the compiler's instrumentation alone: a call to a hook before every load and store. The hooks
// are defined at the end of this header, over kjudge's own shadow memory; the sanitizer's
// runtime is never linked (see "checked build" below).
#if defined(__SANITIZE_THREAD__)
#define KJ_SHADOW 1
#include <sys/mman.h>
#include <unistd.h>
// Runtime code the instrumentation must not reach: it runs inside the hooks.
#define KJ_UNCHECKED __attribute__((no_sanitize_thread))
#else
#define KJ_SHADOW 0
#define KJ_UNCHECKED
#endif

// ---- qualifiers -----------------------------------------------------------------------------

#undef __global__
#undef __device__
#undef __host__
#undef __forceinline__
#undef __noinline__
#undef __restrict__
#undef __launch_bounds__
#undef __grid_constant__
#undef __align__
#undef __constant__
#undef __managed__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __grid_constant__
#define __align__(n) alignas(n)
#define __constant__ static
#define __managed__ static

// cuda_fp16.h and cuda_bf16.h work under a host compiler as they are (host definitions of
// __half, __nv_bfloat16 and their conversions); a source includes them itself.

namespace kjh {

inline constexpr unsigned kWarp = 32;

// ---- the running thread ----------------------------------------------------------------------

struct Block;

// converge: in cooperative_groups::coalesced_threads() (cooperative_groups.hpp), which learns its
// group once nothing else in the block can run.
enum class Wait : std::uint8_t { none, block, warp, converge };

struct LaunchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failed device assert (__assertfail below): the candidate's text and where it failed, as
// fields, for kj_host_launch to hand to kjudge, which quotes them (a candidate's text never
// reaches a message unquoted).
struct DeviceAssertion : std::exception {
  std::string condition, file;
  unsigned line = 0;
  uint3 block{}, thread{};
  const char* what() const noexcept override { return "device assertion failed"; }
};

struct Thread {
  uint3 thread_idx{};
  unsigned linear = 0; // x + y*bx + z*bx*by
  Block* block = nullptr;
  boost::context::fiber fiber;
  boost::context::fiber scheduler; // where a barrier returns to
  Wait wait = Wait::none;
  unsigned warp_mask = 0; // lanes a warp barrier waits for; after Wait::converge, the group
  const void* converge_site = nullptr; // Wait::converge: the call it waits in
  bool done = false;
};

// ---- the checked build's shadow memory: what is known about each byte ----------------------------

namespace shadow {

// One remembered access: who made it, when (in barrier intervals), and where in the code.
struct Side {
  std::uint32_t block = 0;      // linear block index
  std::uint16_t thread = 0;     // linear thread index + 1; 0: no access remembered
  std::uint16_t atomic : 1 = 0;
  std::uint16_t write : 1 = 0;
  std::uint16_t fence : 14 = 0; // global accesses: the thread's count of __threadfence before it
  std::uint32_t epoch = 0;      // the block's count of released __syncthreads at the access
  std::uint32_t warp_epoch = 0; // its warp's count of released warp barriers
  std::uint32_t pc = 0;         // the access's code address, from the module's start
};
// Per byte of tracked memory: whether the kernel may touch it at all (a buffer's or the block's
// shared memory, not a red zone), the last writer, and two readers that no barrier orders (one
// would forget a reader from another block when a later one comes).
struct Cell {
  Side write, read, other_read;
  std::uint32_t valid = 0;
};

// Shadow cells for a range of addresses, mapped on demand (untouched pages cost nothing).
struct Cells {
  std::uintptr_t lo = 0, bytes = 0;
  Cell* cells = nullptr;
  std::size_t mapped = 0;
  KJ_UNCHECKED bool holds(std::uintptr_t a) const { return a - lo < bytes; }
};

} // namespace shadow

// Shared memory is aligned like the GPU's widest vector loads want, and wider.
inline constexpr std::size_t kSharedAlign = 64;
// Static __shared__ memory is at most 48 KiB per block in CUDA; the dynamic part comes on top.
inline constexpr std::size_t kStaticSharedLimit = 48 * 1024;

inline std::size_t fiber_stack_bytes() { return 256 * 1024; }

struct Block {
  uint3 block_idx{};
  std::uint32_t linear = 0;
  dim3 block_dim, grid_dim;
  std::vector<std::unique_ptr<Thread>> threads;
  // Shared memory: one region per CPU thread, reused by the blocks it runs. The launch's dynamic
  // shared memory comes first; each static __shared__ declaration is placed after it when a
  // thread of the block first reaches it (keyed by a tag's address). CUDA does not zero shared
  // memory, so it is filled with 0xFF bytes (NaN for floats, -1 for integers): a kernel that
  // reads it before writing shows it.
  std::unique_ptr<unsigned char[]> shared_region;
  unsigned char* shared_base = nullptr; // aligned start of the region
  std::size_t shared_capacity = 0, shared_used = 0, dynamic_bytes = 0;
  std::vector<std::pair<const void*, std::size_t>> shared_slots; // tag -> offset
  // Per warp: the values the lanes exchange, 16 bytes a lane.
  std::vector<unsigned char> warp_slots;
  // Checked build: barrier counts (the epochs of shadow::Side) and the shared memory's shadow.
  std::uint32_t barrier_epoch = 0;
  std::vector<std::uint32_t> warp_epochs;
  std::uint32_t* warp_epoch = nullptr; // warp_epochs.data(), for the hooks
  shadow::Cells shared_shadow;
  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block() {
    threads.clear();
    if (shared_shadow.cells) ::munmap(shared_shadow.cells, shared_shadow.mapped);
  }
};

// The checked build runs a launch on one CPU thread, so its hooks read a plain variable.
#if KJ_SHADOW
inline Thread* current_thread = nullptr;
#else
inline thread_local Thread* current_thread = nullptr;
#endif

inline Thread& self() { return *current_thread; }

// Back to the scheduler, waiting as `wait` says, until it resumes this fiber.
inline void yield_to_scheduler(Wait wait, unsigned warp_mask = 0) {
  Thread& t = self();
  t.wait = wait;
  t.warp_mask = warp_mask;
  t.scheduler = std::move(t.scheduler).resume();
  current_thread = &t; // the scheduler ran others meanwhile
}

inline void syncthreads() { yield_to_scheduler(Wait::block); }

inline unsigned lane_id() { return self().linear % kWarp; }

// Wait until every live lane of `mask` in this warp has arrived here.
inline void warp_barrier(unsigned mask) {
  Thread& t = self();
  yield_to_scheduler(Wait::warp, mask | (1u << (t.linear % kWarp)));
}

inline unsigned char* warp_slot(unsigned lane) {
  Thread& t = self();
  const unsigned warp = t.linear / kWarp;
  return t.block->warp_slots.data() + (warp * kWarp + lane) * 16;
}

// One exchange: deposit `value`, meet, read lane `from`'s, meet again before the slots change.
template <class T>
T exchange(unsigned mask, T value, unsigned from) {
  static_assert(sizeof(T) <= 16 && std::is_trivially_copyable_v<T>, "warp exchange of this type");
  std::memcpy(warp_slot(lane_id()), &value, sizeof(T));
  warp_barrier(mask);
  T out;
  std::memcpy(&out, warp_slot(from % kWarp), sizeof(T));
  warp_barrier(mask);
  return out;
}

namespace shadow {
void allow(Cells& c, std::uintptr_t from, std::size_t bytes); // below, checked build only
}

// `bytes` more of the block's shared memory, filled with 0xFF; its offset in the region.
inline std::size_t place_shared(Block& b, std::size_t bytes) {
  const std::size_t at = (b.shared_used + kSharedAlign - 1) / kSharedAlign * kSharedAlign;
  if (at + bytes > b.shared_capacity)
    throw LaunchFailure("the kernel's static __shared__ memory exceeds CUDA's 48 KiB per block");
  std::memset(b.shared_base + at, 0xFF, bytes);
#if KJ_SHADOW
  shadow::allow(b.shared_shadow, reinterpret_cast<std::uintptr_t>(b.shared_base) + at, bytes);
#endif
  b.shared_used = at + bytes;
  return at;
}

// Per-block storage of one static __shared__ declaration (ID: the rewrite's number for it).
template <class T, int ID>
T& block_shared() {
  static const char tag = 0;
  Block& b = *self().block;
  for (const auto& [k, at] : b.shared_slots)
    if (k == &tag) return *reinterpret_cast<T*>(b.shared_base + at);
  const std::size_t at = place_shared(b, sizeof(T));
  b.shared_slots.emplace_back(&tag, at);
  return *reinterpret_cast<T*>(b.shared_base + at);
}

template <class T>
T* dynamic_shared() {
  return reinterpret_cast<T*>(self().block->shared_base);
}
// ---- launching --------------------------------------------------------------------------------

// Calls `kernel` with the arguments a launch passes as an array of pointers to their values
// (cuLaunchKernel's convention).
template <class... P, std::size_t... I>
void invoke_with(void (*kernel)(P...), void** args, std::index_sequence<I...>) {
  kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<P>>*>(args[I])...);
}
template <class... P>
void invoke(void (*kernel)(P...), void** args) {
  invoke_with(kernel, args, std::index_sequence_for<P...>{});
}

using Entry = void (*)(void** args);

// Fiber stacks (with a guard page) kept for reuse: mapping and protecting a fresh stack per CUDA
// thread cost more than running most kernels' threads. Each CPU thread keeps its own list and
// hands it to the shared one when it ends. kjudge's block threads outlive a module's unloading,
// so the shared list is never destroyed: a thread ending at exit still has it to hand to.
class PooledStack {
  using Stack = boost::context::stack_context;
  struct Shared {
    std::mutex mutex;
    boost::context::protected_fixedsize_stack make{fiber_stack_bytes()};
    std::vector<Stack> free;
    ~Shared() {
      for (auto& s : free) make.deallocate(s);
    }
  };
  static Shared& shared() {
    static Shared* p = new Shared;
    return *p;
  }
  struct Local {
    std::vector<Stack> free;
    ~Local() {
      Shared& p = shared();
      const std::lock_guard lock(p.mutex);
      p.free.insert(p.free.end(), free.begin(), free.end());
    }
  };
  static Local& local() {
    thread_local Local l;
    return l;
  }

public:
  Stack allocate() {
    Local& l = local();
    if (l.free.empty()) {
      Shared& p = shared();
      const std::lock_guard lock(p.mutex);
      if (p.free.empty()) return p.make.allocate();
      // Take up to a block's worth at once.
      const std::size_t take = std::min<std::size_t>(p.free.size(), 1024);
      l.free.assign(p.free.end() - static_cast<std::ptrdiff_t>(take), p.free.end());
      p.free.resize(p.free.size() - take);
    }
    const Stack s = l.free.back();
    l.free.pop_back();
    return s;
  }
  void deallocate(Stack& s) noexcept { local().free.push_back(s); }
};

namespace shadow {
void begin_block(Block& b); // checked build only: the last block's shared accesses are forgotten
}

// Runs one block to the end: every thread a fiber, resumed in thread order until it waits or
// returns; barriers release when every live thread (of the block, or of the warp's mask) waits.
inline void run_block(Entry entry, void** args, Block& b) {
  const unsigned n = b.block_dim.x * b.block_dim.y * b.block_dim.z;
  const unsigned warps = (n + kWarp - 1) / kWarp;
  b.threads.clear();
  b.warp_slots.assign(warps * kWarp * 16, 0);
  b.barrier_epoch = 0;
  b.warp_epochs.assign(warps, 0);
  b.warp_epoch = b.warp_epochs.data();
#if KJ_SHADOW
  shadow::begin_block(b);
#endif
  b.shared_slots.clear();
  b.shared_used = 0;
  place_shared(b, b.dynamic_bytes); // at offset 0
  std::exception_ptr failure;
  for (unsigned i = 0; i < n; ++i) {
    auto t = std::make_unique<Thread>();
    t->linear = i;
    t->thread_idx = uint3{i % b.block_dim.x, (i / b.block_dim.x) % b.block_dim.y,
                          i / (b.block_dim.x * b.block_dim.y)};
    t->block = &b;
    Thread* raw = t.get();
    auto body = [raw, entry, args, &failure](boost::context::fiber&& scheduler) {
      raw->scheduler = std::move(scheduler);
      current_thread = raw;
      try {
        entry(args);
      } catch (const boost::context::detail::forced_unwind&) {
        throw; // a suspended fiber destroyed (the block failed): let Boost unwind it
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
      raw->done = true;
      raw->wait = Wait::none;
      return std::move(raw->scheduler);
    };
    t->fiber = boost::context::fiber(std::allocator_arg, PooledStack(), std::move(body));
    b.threads.push_back(std::move(t));
  }
  for (;;) {
    bool ran = false;
    for (auto& t : b.threads) {
      if (t->done || t->wait != Wait::none) continue;
      current_thread = t.get();
      t->fiber = std::move(t->fiber).resume();
      current_thread = nullptr;
      ran = true;
      if (failure) std::rethrow_exception(failure);
    }
    if (ran) continue;
    // Nobody can run: release a barrier whose waiters are all there.
    bool released = false;
    // Warp barriers: every live lane of the mask waits at a warp barrier.
    for (unsigned w = 0; w < warps; ++w) {
      unsigned waiting = 0, live = 0, mask = 0;
      for (unsigned l = 0; l < kWarp && w * kWarp + l < n; ++l) {
        const Thread& t = *b.threads[w * kWarp + l];
        if (t.done) continue;
        live |= 1u << l;
        if (t.wait == Wait::warp) {
          waiting |= 1u << l;
          mask |= t.warp_mask;
        }
      }
      if (waiting != 0 && (mask & live & ~waiting) == 0) {
        for (unsigned l = 0; l < kWarp && w * kWarp + l < n; ++l)
          if (waiting & (1u << l)) b.threads[w * kWarp + l]->wait = Wait::none;
        ++b.warp_epochs[w];
        released = true;
      }
    }
    if (released) continue;
    // Lanes in coalesced_threads() go on once nothing else can: those of one warp waiting at one
    // call site are a group (a branch's converged lanes), told to each in warp_mask.
    for (auto& t : b.threads) {
      if (t->wait != Wait::converge) continue;
      const unsigned w = t->linear / kWarp;
      unsigned group = 0;
      for (unsigned l = 0; l < kWarp && w * kWarp + l < n; ++l) {
        const Thread& u = *b.threads[w * kWarp + l];
        if (u.wait == Wait::converge && u.converge_site == t->converge_site) group |= 1u << l;
      }
      t->warp_mask = group;
    }
    for (auto& t : b.threads)
      if (t->wait == Wait::converge) {
        t->wait = Wait::none;
        released = true;
      }
    if (released) continue;
    bool any_block = false, all_block = true;
    for (auto& t : b.threads) {
      if (t->done) continue;
      if (t->wait == Wait::block)
        any_block = true;
      else
        all_block = false;
    }
    if (!any_block && all_block) break; // every thread returned
    if (all_block) {
      for (auto& t : b.threads)
        if (!t->done) t->wait = Wait::none;
      ++b.barrier_epoch;
      continue;
    }
    throw LaunchFailure("threads of one block wait at different barriers (a __syncthreads or a "
                        "warp operation that not every thread reaches): the kernel would hang");
  }
}
} // namespace kjh

// ---- the CUDA names a kernel uses ---------------------------------------------------------------

// Each name has the type NVRTC declares it with (`extern const uint3 threadIdx`, `const int
// warpSize`): decltype(threadIdx) is `const uint3`, not a reference, and warpSize is no constant
// expression, so no trait or `if constexpr` of the candidate's tells the host from the GPU. The
// expansion is an unparenthesized member access for that reason: decltype then names the
// member's declared type.
namespace kjh {
template <class T>
struct AsBuiltin {
  const T value;
};
template <class T>
inline const AsBuiltin<T>& as_builtin(const T& v) {
  return reinterpret_cast<const AsBuiltin<T>&>(v);
}
inline constexpr int kWarpSizeValue = 32;
} // namespace kjh
#define threadIdx ::kjh::as_builtin(::kjh::self().thread_idx).value
#define blockIdx ::kjh::as_builtin(::kjh::self().block->block_idx).value
#define blockDim ::kjh::as_builtin(::kjh::self().block->block_dim).value
#define gridDim ::kjh::as_builtin(::kjh::self().block->grid_dim).value
#define warpSize ::kjh::as_builtin(::kjh::kWarpSizeValue).value

inline void __syncthreads() { ::kjh::syncthreads(); }
inline int __syncthreads_count(int p) {
  (void)p;
  throw ::kjh::LaunchFailure("__syncthreads_count is not supported on the host backend");
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::kjh::warp_barrier(mask); }
#if KJ_SHADOW
namespace kjh::shadow {
void thread_fence(); // the checked build: a fence orders the thread's accesses before a release
}
#endif
inline void __threadfence() {
#if KJ_SHADOW
  ::kjh::shadow::thread_fence();
#endif
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }

// assert calls the toolkit's __assertfail (kjudge/compat/assert.h, as NVRTC's headers define
// it); on the GPU the kernel stops with CUDA_ERROR_ASSERT, here the launch fails with the
// assertion. A trap stops it with a launch failure on the GPU, here too.
extern "C" {
[[noreturn]] inline void __assertfail(const char* assertion, const char* file, unsigned line,
                                      const char* function, std::size_t char_size) {
  (void)function;
  (void)char_size;
  ::kjh::DeviceAssertion a;
  a.condition = assertion ? assertion : "";
  a.file = file ? file : "";
  a.line = line;
  if (const ::kjh::Thread* t = ::kjh::current_thread) {
    a.block = t->block->block_idx;
    a.thread = t->thread_idx;
  }
  throw a;
}
}
[[noreturn]] inline void __trap() { throw ::kjh::LaunchFailure("the kernel executed __trap()"); }
// From here on `#include <assert.h>` (kjudge/compat/assert.h, ahead of the C library's on the
// host build's path) and a source's plain assert mean the device's.
#define KJ_HOST_ASSERTFAIL 1
#include "kjudge/compat/assert.h"

template <class T>
T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
  const unsigned lane = ::kjh::lane_id();
  const unsigned base = lane / width * width;
  return ::kjh::exchange(mask, v, base + static_cast<unsigned>(src) % width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  const unsigned lane = ::kjh::lane_id();
  const unsigned base = lane / width * width;
  unsigned from = lane ^ static_cast<unsigned>(lane_mask);
  if (from >= base + width) from = lane; // outside the segment: own value
  return ::kjh::exchange(mask, v, from);
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned lane = ::kjh::lane_id();
  const unsigned base = lane / width * width;
  const unsigned from = lane + delta < base + width ? lane + delta : lane;
  return ::kjh::exchange(mask, v, from);
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  const unsigned lane = ::kjh::lane_id();
  const unsigned base = lane / width * width;
  const unsigned from = lane >= base + delta ? lane - delta : lane;
  return ::kjh::exchange(mask, v, from);
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  const unsigned lane = ::kjh::lane_id();
  const unsigned mine = predicate ? 1u << lane : 0u;
  unsigned all = 0;
  // Every lane deposits its bit, then reads every other lane's: one meeting for all 32.
  std::memcpy(::kjh::warp_slot(lane), &mine, sizeof mine);
  ::kjh::warp_barrier(mask);
  for (unsigned l = 0; l < 32; ++l) {
    if (!(mask & (1u << l))) continue;
    unsigned bit = 0;
    std::memcpy(&bit, ::kjh::warp_slot(l), sizeof bit);
    all |= bit;
  }
  ::kjh::warp_barrier(mask);
  return all & mask;
}
inline int __any_sync(unsigned mask, int p) { return __ballot_sync(mask, p) != 0; }
inline int __all_sync(unsigned mask, int p) { return __ballot_sync(mask, p) == mask; }
inline unsigned __activemask() {
  unsigned live = 0;
  const ::kjh::Thread& t = ::kjh::self();
  const unsigned warp = t.linear / 32;
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned i = warp * 32 + l;
    if (i < t.block->threads.size() && !t.block->threads[i]->done) live |= 1u << l;
  }
  return live;
}

// Atomics: blocks run on several CPU threads, so these are real atomics.
template <class T>
T atomicAdd(T* p, T v) {
  if constexpr (std::is_arithmetic_v<T>) {
    return std::atomic_ref<T>(*p).fetch_add(v);
  } else {
    // __half, __half2, __nv_bfloat16, __nv_bfloat162: a compare-and-swap of their bits, the
    // sum computed as the type computes it (both halves of a pair at once, as on the GPU).
    static_assert(sizeof(T) == 2 || sizeof(T) == 4, "atomicAdd of a 2- or 4-byte type");
    using Bits = std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint32_t>;
    std::atomic_ref<Bits> a(*reinterpret_cast<Bits*>(p));
    Bits old = a.load();
    for (;;) {
      T was;
      std::memcpy(&was, &old, sizeof(T));
      const T sum = was + v;
      Bits now;
      std::memcpy(&now, &sum, sizeof(T));
      if (a.compare_exchange_weak(old, now)) return was;
    }
  }
}
template <class T>
T atomicSub(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_sub(v);
}
// atomicCAS and atomicExch are CUDA's overloads, not templates, of exactly its types (atomicCAS:
// int, unsigned int, unsigned long long int and, from sm_70, unsigned short int; atomicExch: int,
// unsigned int, unsigned long long int and float; their _block and _system forms, sm_60, for the
// same types but unsigned short), so an argument of another type converts as on the GPU: the
// programming guide's atomicAdd on double passes __double_as_longlong's long long for an
// unsigned long long. The scopes are one operation here: the CPU's atomics order every thread.
// (sm_90's 16-byte atomicCAS and atomicExch are not here: the host module links no libatomic.)
namespace kjh {
template <class T>
T compare_and_swap(T* p, T expected, T desired) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
  return expected;
}
template <class T>
T exchange_atomically(T* p, T v) {
  return std::atomic_ref<T>(*p).exchange(v);
}
} // namespace kjh
#define KJH_ATOMIC_CAS(T, suffix)                                                                  \
  inline T atomicCAS##suffix(T* p, T compare, T val) {                                             \
    return ::kjh::compare_and_swap(p, compare, val);                                               \
  }
#define KJH_ATOMIC_EXCH(T, suffix)                                                                 \
  inline T atomicExch##suffix(T* p, T val) {                                                       \
    return ::kjh::exchange_atomically(p, val);                                                     \
  }
#define KJH_ATOMIC_CAS_AND_EXCH(T)                                                                 \
  KJH_ATOMIC_CAS(T, )                                                                              \
  KJH_ATOMIC_CAS(T, _block)                                                                        \
  KJH_ATOMIC_CAS(T, _system)                                                                       \
  KJH_ATOMIC_EXCH(T, )                                                                             \
  KJH_ATOMIC_EXCH(T, _block)                                                                       \
  KJH_ATOMIC_EXCH(T, _system)
KJH_ATOMIC_CAS_AND_EXCH(int)
KJH_ATOMIC_CAS_AND_EXCH(unsigned int)
KJH_ATOMIC_CAS_AND_EXCH(unsigned long long int)
KJH_ATOMIC_CAS(unsigned short int, )
KJH_ATOMIC_EXCH(float, )
KJH_ATOMIC_EXCH(float, _block)
KJH_ATOMIC_EXCH(float, _system)
#undef KJH_ATOMIC_CAS_AND_EXCH
#undef KJH_ATOMIC_EXCH
#undef KJH_ATOMIC_CAS
template <class T>
T atomicMax(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (old < v && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
template <class T>
T atomicMin(T* p, T v) {
  std::atomic_ref<T> a(*p);
  T old = a.load();
  while (v < old && !a.compare_exchange_weak(old, v)) {
  }
  return old;
}
template <class T>
T atomicAnd(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_and(v);
}
template <class T>
T atomicOr(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_or(v);
}
template <class T>
T atomicXor(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_xor(v);
}

// CUDA's wrapping counters: atomicInc stores 0 once the old value reached `limit`, else old + 1;
// atomicDec stores `limit` when the old value is 0 or above it, else old - 1. Both return the old
// value (the "last block done" pattern counts blocks with atomicInc).
inline unsigned atomicInc(unsigned* p, unsigned limit) {
  std::atomic_ref<unsigned> a(*p);
  unsigned old = a.load();
  while (!a.compare_exchange_weak(old, old >= limit ? 0u : old + 1u)) {
  }
  return old;
}
inline unsigned atomicDec(unsigned* p, unsigned limit) {
  std::atomic_ref<unsigned> a(*p);
  unsigned old = a.load();
  while (!a.compare_exchange_weak(old, old == 0u || old > limit ? limit : old - 1u)) {
  }
  return old;
}

// Loads through the read-only cache, and loads and stores with a cache hint (streaming, global
// only, write-through, ...), are plain loads and stores here: the hint changes where a line is
// kept, never a value.
#define KJH_PLAIN_LOAD(name)                                                                   \
  template <class T>                                                                           \
  T name(const T* p) {                                                                         \
    return *p;                                                                                 \
  }
#define KJH_PLAIN_STORE(name)                                                                  \
  template <class T>                                                                           \
  void name(T* p, T v) {                                                                       \
    *p = v;                                                                                    \
  }
KJH_PLAIN_LOAD(__ldg)
KJH_PLAIN_LOAD(__ldca)
KJH_PLAIN_LOAD(__ldcg)
KJH_PLAIN_LOAD(__ldcs)
KJH_PLAIN_LOAD(__ldlu)
KJH_PLAIN_LOAD(__ldcv)
KJH_PLAIN_STORE(__stwb)
KJH_PLAIN_STORE(__stcg)
KJH_PLAIN_STORE(__stcs)
KJH_PLAIN_STORE(__stwt)
#undef KJH_PLAIN_LOAD
#undef KJH_PLAIN_STORE

// ---- math ----------------------------------------------------------------------------------------

using std::ceil;
using std::exp;
using std::fabs;
using std::floor;
using std::fma;
using std::log;
using std::sqrt;
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

// ---- approximate intrinsics -------------------------------------------------------------------
// What nvcc/NVRTC make of them with default flags on sm_90, so a fast-math kernel shows its real
// error on the host. Each is the instruction sequence the compiler emits, with the special
// function unit's (MUFU) approximation modelled as the exact function in double rounded to f32:
// the rounding of the scaled argument (x * log2e, x / 2pi), the large-divisor rule and the
// special values are the hardware's, the MUFU's own last-bit error is not. Agreement with the
// H200, measured by tests/unit/host/host_intrinsics_test.cpp over tools/intrinsics-sweep's
// data, is tabled in docs/cli.md ("Approximate intrinsics"). NaN results are the GPU's
// canonical 0x7fffffff.
namespace kjh::approx {
inline float bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline float nan() { return bits(0x7fffffffu); }
inline float canon(float r) { return r != r ? nan() : r; }
// MUFU.EX2 (ex2.approx.f32): no flush to zero without -ftz, so subnormal results stay.
inline float ex2(float t) { return t != t ? nan() : static_cast<float>(std::exp2(double(t))); }
// MUFU.LG2 (lg2.approx.f32). The GPU's absolute error near x = 1 (2^-22) is not modelled.
inline float lg2(float x) {
  if (x != x || x < 0.0f) return nan();
  if (x == 0.0f) return -INFINITY;
  return static_cast<float>(std::log2(double(x)));
}
// MUFU.RCP / MUFU.RSQ.
inline float rcp(float x) { return x != x ? nan() : static_cast<float>(1.0 / double(x)); }
inline float rsqrt(float x) {
  if (x != x || x < 0.0f) return nan();
  if (x == 0.0f) return std::copysign(INFINITY, x);
  return static_cast<float>(1.0 / std::sqrt(double(x)));
}
// sin/cos.approx: the argument in revolutions, x * 1/(2pi) rounded toward zero (FMUL.RZ), of
// which only the fraction counts: past 2^23 revolutions sin is 0 and cos 1, as on the GPU.
inline double revolution_fraction(float x) {
  const double p = double(x) * double(bits(0x3e22f983u));
  float r = static_cast<float>(p);
  if (std::fabs(double(r)) > std::fabs(p)) r = std::nextafter(r, 0.0f);
  return double(r) - std::nearbyint(double(r));
}
inline float sin(float x) {
  if (!std::isfinite(x)) return nan();
  return static_cast<float>(std::sin(6.283185307179586 * revolution_fraction(x)));
}
inline float cos(float x) {
  if (!std::isfinite(x)) return nan();
  return static_cast<float>(std::cos(6.283185307179586 * revolution_fraction(x)));
}
// div.approx.f32: x * rcp(y); for 2^126 < |y| < 2^128 the GPU gives x * 0 (0, or NaN for an
// infinite or NaN x); a subnormal y is scaled by 2^24 with x first (no flush without -ftz).
inline float div(float x, float y) {
  const float ay = std::fabs(y);
  if (ay > 0x1p126f && ay < INFINITY) return canon(x * std::copysign(0.0f, y));
  if (ay > 0.0f && ay < 0x1p-126f) x *= 0x1p24f, y *= 0x1p24f;
  return canon(x * rcp(y));
}
} // namespace kjh::approx

inline float __expf(float x) { return kjh::approx::ex2(x * kjh::approx::bits(0x3fb8aa3bu)); }
inline float __exp10f(float x) { return kjh::approx::ex2(x * kjh::approx::bits(0x40549a78u)); }
inline float __log2f(float x) { return kjh::approx::lg2(x); }
inline float __logf(float x) { return kjh::approx::lg2(x) * kjh::approx::bits(0x3f317218u); }
inline float __log10f(float x) { return kjh::approx::lg2(x) * kjh::approx::bits(0x3e9a209bu); }
inline float __powf(float x, float y) { return kjh::approx::ex2(y * kjh::approx::lg2(x)); }
inline float __sinf(float x) { return kjh::approx::sin(x); }
inline float __cosf(float x) { return kjh::approx::cos(x); }
inline float __tanf(float x) { return kjh::approx::div(kjh::approx::sin(x), kjh::approx::cos(x)); }
inline float __fdividef(float x, float y) { return kjh::approx::div(x, y); }
inline float rsqrtf(float x) { return kjh::approx::rsqrt(x); }
// Correctly rounded on the GPU (exact here): long double leaves no double-rounding case.
inline float __frsqrt_rn(float x) {
  if (x != x || x < 0.0f) return kjh::approx::nan();
  if (x == 0.0f) return std::copysign(INFINITY, x);
  return static_cast<float>(1.0L / std::sqrt(static_cast<long double>(x)));
}
inline float __frcp_rn(float x) { return kjh::approx::canon(1.0f / x); }
inline float __fsqrt_rn(float x) { return kjh::approx::canon(std::sqrt(x)); }
// cvt.sat: NaN and -0 give +0.
inline float __saturatef(float x) { return !(x > 0.0f) ? 0.0f : (x > 1.0f ? 1.0f : x); }
// ---- end of approximate intrinsics ------------------------------------------------------------

inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline int __float2int_rn(float x) { return static_cast<int>(std::nearbyint(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline int __float_as_int(float x) {
  int i;
  std::memcpy(&i, &x, 4);
  return i;
}
inline float __int_as_float(int i) {
  float x;
  std::memcpy(&x, &i, 4);
  return x;
}
inline unsigned __float_as_uint(float x) {
  unsigned i;
  std::memcpy(&i, &x, 4);
  return i;
}
inline float __uint_as_float(unsigned i) {
  float x;
  std::memcpy(&x, &i, 4);
  return x;
}
inline long long __double_as_longlong(double x) {
  long long i;
  std::memcpy(&i, &x, 8);
  return i;
}
inline double __longlong_as_double(long long i) {
  double x;
  std::memcpy(&x, &i, 8);
  return x;
}
// CUDA's global min and max for arithmetic types (fmin/fmax semantics for floats).
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline auto min(A a, B b) {
  using R = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<R>) return std::fmin(R(a), R(b));
  else return R(a) < R(b) ? R(a) : R(b);
}
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline auto max(A a, B b) {
  using R = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<R>) return std::fmax(R(a), R(b));
  else return R(a) < R(b) ? R(b) : R(a);
}

// ---- the shared object's entry point ---------------------------------------------------------------

namespace kjh {

struct KernelEntry {
  const char* expression;
  Entry entry;
};

namespace shadow {
// Checked build only: a launch begins with nothing remembered; a CPU thread's shared memory
// gets its shadow.
void begin_launch(const unsigned grid[3], const unsigned block[3]);
void map_shared(Block& b);
} // namespace shadow

// The CPU time the calling thread has used, in nanoseconds.
inline unsigned long long thread_cpu_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<unsigned long long>(t.tv_sec) * 1000000000ull +
         static_cast<unsigned long long>(t.tv_nsec);
}
// The CPU time of the last launch: the sum over the CPU threads that ran its blocks (what
// `kjudge bench` reports on the host backend; wall time would depend on the machine's load).
inline unsigned long long last_launch_cpu_ns = 0;

// Runs the grid: blocks in order, spread over `workers` CPU threads (each takes the next block).
// The checked build uses one: its shadow memory is then one thread's, and what it finds does
// not depend on how the blocks happened to interleave.
// kjudge's block threads (run_on_block_threads): a module starts no thread of its own, so the
// host worker can refuse new threads before the module is loaded.
using Parallel = void (*)(unsigned count, void (*work)(void*), void* context);

inline void launch(Entry entry, const unsigned grid[3], const unsigned block[3],
                   unsigned shared_bytes, void** args, unsigned workers, Parallel parallel) {
  const unsigned long long blocks =
      static_cast<unsigned long long>(grid[0]) * grid[1] * grid[2];
  std::atomic<unsigned long long> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
#if KJ_SHADOW
  workers = 1;
  shadow::begin_launch(grid, block);
#endif
  std::atomic<unsigned long long> cpu_ns{0};
  auto work = [&] {
    const unsigned long long started = thread_cpu_ns();
    struct AddCpuTime { // on every way out
      std::atomic<unsigned long long>& total;
      unsigned long long started;
      ~AddCpuTime() { total += thread_cpu_ns() - started; }
    } add_cpu_time{cpu_ns, started};
    Block b;
    b.block_dim = dim3(block[0], block[1], block[2]);
    b.grid_dim = dim3(grid[0], grid[1], grid[2]);
    b.dynamic_bytes = shared_bytes;
    // Room for the dynamic part, 48 KiB of static declarations and their alignment.
    b.shared_capacity = (shared_bytes + kSharedAlign - 1) / kSharedAlign * kSharedAlign +
                        kStaticSharedLimit + 64 * kSharedAlign;
    b.shared_region = std::make_unique<unsigned char[]>(b.shared_capacity + kSharedAlign);
    const auto region = reinterpret_cast<std::uintptr_t>(b.shared_region.get());
    b.shared_base = b.shared_region.get() + ((kSharedAlign - region % kSharedAlign) % kSharedAlign);
#if KJ_SHADOW
    shadow::map_shared(b);
#endif
    for (;;) {
      const unsigned long long i = next.fetch_add(1);
      if (i >= blocks || failed.load()) return;
      b.linear = static_cast<std::uint32_t>(i);
      b.block_idx = uint3{static_cast<unsigned>(i % grid[0]),
                          static_cast<unsigned>(i / grid[0] % grid[1]),
                          static_cast<unsigned>(
                              i / (static_cast<unsigned long long>(grid[0]) * grid[1]))};
      try {
        run_block(entry, args, b);
      } catch (...) {
        if (!failed.exchange(true)) failure = std::current_exception();
        return;
      }
    }
  };
  workers = std::max(1u, std::min<unsigned>(workers, static_cast<unsigned>(std::min<unsigned long long>(blocks, 64))));
  // On kjudge's threads: what escapes `work` (no memory for shared memory) fails the launch.
  auto guarded = [&] {
    try {
      work();
    } catch (...) {
      if (!failed.exchange(true)) failure = std::current_exception();
    }
  };
  parallel(workers, [](void* c) { (*static_cast<decltype(guarded)*>(c))(); }, &guarded);
  last_launch_cpu_ns = cpu_ns.load();
  if (failure) std::rethrow_exception(failure);
}

} // namespace kjh

// ---- the checked build: kjudge's shadow memory behind the compiler's hooks ----------------------
//
// Every load and store of the candidate's code calls a hook (__tsan_read4(address), ...) that
// looks the address up in shadow memory, one Cell per byte, kept for the launch's buffers (and
// the red zones and guard regions around them, which are never valid) and for the running
// block's shared memory:
// - bounds: a byte that is not valid is an exact out-of-bounds report (which buffer, how far);
// - races: two accesses to a byte by different threads, at least one a write and not both
//   atomic, race unless something orders them. Within a block __syncthreads orders everything
//   before it before everything after it (the block's barrier epoch), and a warp barrier (also
//   every shuffle and vote) does the same for its warp. No timing is involved: blocks run one
//   after another on one CPU thread and the verdict is the same on every run and machine.
// - across blocks only a fenced hand-off orders (CUDA's "last block done"). A global atomic
//   write after its thread's __threadfence is a release of the block's accesses before that
//   fence: the thread's own, and every thread's of earlier barrier epochs (the fence is
//   cumulative); when every thread fenced its accesses before a barrier, all of those too. A
//   global atomic that reads (a load or read-modify-write) acquires the releases on its address
//   that its chain of read-modify-writes reaches (a plain or atomic store to the address cuts
//   it), for its thread and, past the next __syncthreads, its block; an earlier block's atomic
//   on that address is ordered before it too (coherence: the chain ends in this atomic). As in
//   the guide's threadFenceReduction, the reading side needs no fence; warp barriers pass on no
//   acquire. What overflows the bounded bookkeeping (16 addresses, 2^20 releases, blocks of
//   1024 threads) orders nothing, so it can only add a report, never hide one.
// The first finding is written to stderr as one line the host runner reads back, and the
// process ends with status 66: the rest of the run would only repeat it. Code addresses are
// offsets in the module; the runner turns them into source lines with the module's debug
// information.
#if KJ_SHADOW
extern "C" const char __ehdr_start[] __attribute__((visibility("hidden")));

namespace kjh::shadow {

inline constexpr int kFoundStatus = 66;
inline constexpr unsigned kMaxSpans = 256;

struct State {
  Cells global;                    // the arena with its guard regions
  std::uintptr_t origin = 0;       // the arena's start: reports give offsets from it
  unsigned long spans[2 * kMaxSpans] = {}; // valid (offset from global.lo, bytes) pairs
  unsigned span_count = 0;
  bool races = true;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
};
inline State state;

KJ_UNCHECKED inline bool map_cells(Cells& c, std::uintptr_t lo, std::size_t bytes) {
  const std::size_t need = (bytes + 1) * sizeof(Cell);
  if (need > c.mapped) {
    if (c.cells) ::munmap(c.cells, c.mapped);
    void* p = ::mmap(nullptr, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                     -1, 0);
    c.cells = p == MAP_FAILED ? nullptr : static_cast<Cell*>(p);
    c.mapped = c.cells ? need : 0;
  }
  c.lo = lo;
  c.bytes = c.cells ? bytes : 0;
  return c.cells != nullptr;
}

// Cells [from, from + bytes) of `c` valid and with nothing remembered.
KJ_UNCHECKED inline void reset(Cells& c, std::size_t first, std::size_t bytes, bool valid) {
  std::memset(static_cast<void*>(c.cells + first), 0, bytes * sizeof(Cell));
  if (valid)
    for (std::size_t i = first; i < first + bytes; ++i) c.cells[i].valid = 1;
}

KJ_UNCHECKED inline void allow(Cells& c, std::uintptr_t from, std::size_t bytes) {
  if (c.cells && bytes > 0) reset(c, from - c.lo, bytes, true);
}

KJ_UNCHECKED inline void map_shared(Block& b) {
  if (!map_cells(b.shared_shadow, reinterpret_cast<std::uintptr_t>(b.shared_base), b.shared_capacity))
    throw LaunchFailure("no memory for the shared memory's shadow");
}

// ---- order across blocks: fences, releases, acquires (the model above) ----

inline constexpr unsigned kMaxVars = 16;          // addresses written by global atomics
inline constexpr unsigned kOrderThreads = 1024;   // a bigger block releases and acquires nothing
inline constexpr std::uint32_t kMaxReleases = 1u << 20;
inline constexpr std::uint32_t kMaxBlockReleases = 2 * kOrderThreads;
inline constexpr unsigned kMaxFences = (1u << 14) - 1; // Side::fence; saturated: not released

// An address global atomics write. `chain`: the first release its atomics still read from.
struct Var {
  std::uintptr_t address = 0;
  std::uint32_t size = 0, chain = 0;
};

// A global atomic write on `var`: it releases its block's accesses of epochs before `epoch`,
// and thread `thread`'s made before its fence number `fence`.
struct Release {
  std::uint32_t block = 0, epoch = 0;
  std::uint16_t thread = 0, fence = 0;
  std::uint8_t var = 0;
};

// Releases held: on var v (bit v of mask), those from index from[v] on.
struct Acquired {
  std::uint32_t mask = 0;
  std::uint32_t from[kMaxVars] = {};
};

struct ThreadOrder {
  std::uint16_t fences = 0;          // its __threadfence calls (saturating)
  bool dirty = false;                // a global access since its last fence
  std::uint32_t fence_epoch = 0;     // the barrier epoch of its last fence
  std::uint32_t last_release = 0;    // index of its last release + 1; 0: none in this block
  Acquired acquired;
};

struct Order {
  bool on = false; // the running block is tracked (releases mapped, at most kOrderThreads)
  Var vars[kMaxVars];
  unsigned var_count = 0;
  Release* releases = nullptr; // kMaxReleases, in block order (blocks run in order)
  std::uint32_t release_count = 0;
  // The running block. fenced_epoch: its accesses of earlier epochs were all fenced by their
  // own threads before a barrier. pending: acquired in the epoch seen_epoch, the block's once a
  // barrier passes.
  std::uint32_t first_release = 0, threads = 0, seen_epoch = 0, fenced_epoch = 0;
  bool any_fence = false;
  Acquired block_acquired, pending;
  ThreadOrder thread[kOrderThreads];
};
inline Order order;

KJ_UNCHECKED inline void hold(Acquired& a, unsigned v, std::uint32_t from) {
  if (!(a.mask >> v & 1u) || from < a.from[v]) a.from[v] = from;
  a.mask |= 1u << v;
}

KJ_UNCHECKED inline bool holds(const Acquired& a, unsigned v, std::uint32_t index) {
  return (a.mask >> v & 1u) && a.from[v] <= index;
}

KJ_UNCHECKED inline void begin_block_order(const Block& b) {
  const unsigned n = b.block_dim.x * b.block_dim.y * b.block_dim.z;
  order.on = order.releases != nullptr && n <= kOrderThreads;
  order.threads = order.on ? n : 0;
  order.first_release = order.release_count;
  order.seen_epoch = order.fenced_epoch = 0;
  order.any_fence = false;
  order.block_acquired.mask = order.pending.mask = 0;
  for (unsigned i = 0; i < order.threads; ++i) {
    ThreadOrder& t = order.thread[i];
    t.fences = 0;
    t.dirty = false;
    t.fence_epoch = t.last_release = 0;
    t.acquired.mask = 0;
  }
}

// Brings the block's state up to its barrier epoch. Called before any thread's state changes,
// so what it reads is what held when the barriers released.
KJ_UNCHECKED inline void catch_up(const Block& b) {
  if (order.seen_epoch == b.barrier_epoch) return;
  order.seen_epoch = b.barrier_epoch;
  if (order.any_fence) {
    bool clean = true;
    for (unsigned i = 0; i < order.threads && clean; ++i)
      clean = !order.thread[i].dirty;
    if (clean) order.fenced_epoch = b.barrier_epoch;
  }
  for (unsigned v = 0; v < kMaxVars; ++v)
    if (order.pending.mask >> v & 1u) hold(order.block_acquired, v, order.pending.from[v]);
  order.pending.mask = 0;
}

KJ_UNCHECKED inline void thread_fence() {
  const Thread* t = current_thread;
  if (t == nullptr || !order.on || !state.races) return;
  catch_up(*t->block);
  ThreadOrder& mine = order.thread[t->linear];
  if (mine.fences < kMaxFences) ++mine.fences;
  mine.dirty = false;
  mine.fence_epoch = t->block->barrier_epoch;
  order.any_fence = true;
}

// A global atomic on [address, address + size): its var (registered by a write), after the
// acquire a read makes; -1 when untracked. `cells`: the access's shadow, still holding the
// last write.
KJ_UNCHECKED inline int atomic_order(std::uintptr_t address, std::size_t size, bool write,
                                     bool rmw, const Cell* cells, std::size_t count,
                                     const Thread& t) {
  int v = -1;
  for (unsigned i = 0; i < order.var_count && v < 0; ++i)
    if (order.vars[i].address == address && order.vars[i].size == size) v = static_cast<int>(i);
  if (v < 0) {
    if (!write || order.var_count == kMaxVars) return -1; // a read with nothing released
    v = static_cast<int>(order.var_count++);
    order.vars[v] = Var{address, static_cast<std::uint32_t>(size), order.release_count};
  }
  Var& var = order.vars[v];
  // A plain store since the last atomic, or this atomic store, starts a new chain.
  bool cut = write && !rmw;
  for (std::size_t i = 0; i < count && !cut; ++i)
    cut = cells[i].write.thread != 0 && !cells[i].write.atomic;
  if (cut) var.chain = order.release_count;
  if (!write || rmw) {
    hold(order.thread[t.linear].acquired, static_cast<unsigned>(v), var.chain);
    hold(order.pending, static_cast<unsigned>(v), var.chain);
  }
  return v;
}

// After a global atomic write on var v by a thread with fenced accesses behind it.
KJ_UNCHECKED inline void release(unsigned v, const Thread& t) {
  ThreadOrder& mine = order.thread[t.linear];
  const std::uint32_t epoch =
      mine.fence_epoch > order.fenced_epoch ? mine.fence_epoch : order.fenced_epoch;
  const Release r{t.block->linear, epoch, static_cast<std::uint16_t>(t.linear + 1), mine.fences,
                  static_cast<std::uint8_t>(v)};
  // Its last release on the same var and chain covers less and is held whenever this one is.
  if (mine.last_release != 0) {
    Release& last = order.releases[mine.last_release - 1];
    if (last.var == v && order.vars[v].chain < mine.last_release) {
      last = r;
      return;
    }
  }
  if (order.release_count == kMaxReleases ||
      order.release_count - order.first_release == kMaxBlockReleases)
    return;
  order.releases[order.release_count++] = r;
  mine.last_release = order.release_count;
}

// Is `a`, an earlier block's access to the byte at `at`, ordered before thread t's now?
KJ_UNCHECKED inline bool ordered_across(const Side& a, const Thread& t, std::uintptr_t at) {
  if (!order.on) return false;
  const Acquired& mine = order.thread[t.linear].acquired;
  const Acquired& block = order.block_acquired;
  if ((mine.mask | block.mask) == 0) return false;
  if (a.atomic)
    for (unsigned v = 0; v < order.var_count; ++v)
      if (at - order.vars[v].address < order.vars[v].size && ((mine.mask | block.mask) >> v & 1u))
        return true;
  std::uint32_t lo = 0, hi = order.first_release; // the releases of a's block
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (order.releases[mid].block < a.block)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (std::uint32_t i = lo; i < order.first_release && order.releases[i].block == a.block; ++i) {
    const Release& r = order.releases[i];
    if ((a.epoch < r.epoch || (a.thread == r.thread && a.fence < r.fence)) &&
        (holds(mine, r.var, i) || holds(block, r.var, i)))
      return true;
  }
  return false;
}

KJ_UNCHECKED inline void begin_block(Block& b) {
  if (b.shared_shadow.cells) reset(b.shared_shadow, 0, b.shared_used, false);
  begin_block_order(b);
}

KJ_UNCHECKED inline void begin_launch(const unsigned grid[3], const unsigned block[3]) {
  for (int d = 0; d < 3; ++d) {
    state.grid[d] = grid[d];
    state.block[d] = block[d];
  }
  for (unsigned s = 0; s < state.span_count; ++s)
    reset(state.global, state.spans[2 * s], state.spans[2 * s + 1], true);
  order.var_count = 0;
  order.release_count = 0;
  if (order.releases == nullptr) {
    void* p = ::mmap(nullptr, kMaxReleases * sizeof(Release), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    order.releases = p == MAP_FAILED ? nullptr : static_cast<Release*>(p);
  }
}

// A happened before the access `t` is making now to the byte at `at` (same thread, a barrier
// between them, or across blocks a release and acquire)?
KJ_UNCHECKED inline bool ordered(const Side& a, const Thread& t, std::uintptr_t at) {
  const Block& b = *t.block;
  if (a.block != b.linear) return ordered_across(a, t, at);
  if (a.thread == t.linear + 1) return true;
  if (a.epoch != b.barrier_epoch) return true;
  const unsigned warp = t.linear / kWarp;
  return (a.thread - 1u) / kWarp == warp && a.warp_epoch != b.warp_epoch[warp];
}

KJ_UNCHECKED inline bool clashes(const Side& a, bool atomic, const Thread& t, std::uintptr_t at) {
  return a.thread != 0 && !(a.atomic && atomic) && !ordered(a, t, at);
}

KJ_UNCHECKED inline const char* access_name(bool write, bool atomic) {
  return write ? (atomic ? "atomic-write" : "write") : (atomic ? "atomic-read" : "read");
}

KJ_UNCHECKED inline void index3(unsigned long long linear, const unsigned dims[3], unsigned out[3]) {
  out[0] = static_cast<unsigned>(linear % dims[0]);
  out[1] = static_cast<unsigned>(linear / dims[0] % dims[1]);
  out[2] = static_cast<unsigned>(linear / (static_cast<unsigned long long>(dims[0]) * dims[1]));
}

[[noreturn]] KJ_UNCHECKED inline void report(const char* line, int length) {
  if (length > 0) (void)!::write(2, line, static_cast<std::size_t>(length));
  ::_exit(kFoundStatus);
}

// "kjudge-shadow: <race|bounds> space=<global|shared> offset=N size=N access=A pc=0xN
//  block=x,y,z thread=x,y,z [shared_bytes=N] [prev_access=A prev_pc=0xN prev_block=x,y,z
//  prev_thread=x,y,z]"; offsets are from the arena's start (global) or the block's shared
// memory (shared).
[[noreturn]] KJ_UNCHECKED inline void found(const char* what, bool shared, long long offset,
                                            std::size_t size, bool write, bool atomic,
                                            std::uint32_t pc, const Thread& t, const Side* earlier) {
  const Block& b = *t.block;
  char line[768];
  int n = std::snprintf(line, sizeof line,
                        "kjudge-shadow: %s space=%s offset=%lld size=%zu access=%s pc=%#x "
                        "block=%u,%u,%u thread=%u,%u,%u shared_bytes=%zu",
                        what, shared ? "shared" : "global", offset, size, access_name(write, atomic),
                        pc, b.block_idx.x, b.block_idx.y, b.block_idx.z, t.thread_idx.x,
                        t.thread_idx.y, t.thread_idx.z, b.shared_used);
  if (earlier && n > 0 && n < static_cast<int>(sizeof line)) {
    unsigned block[3], thread[3];
    index3(earlier->block, state.grid, block);
    index3(earlier->thread - 1u, state.block, thread);
    n += std::snprintf(line + n, sizeof line - static_cast<std::size_t>(n),
                       " prev_access=%s prev_pc=%#x prev_block=%u,%u,%u prev_thread=%u,%u,%u",
                       access_name(earlier->write != 0, earlier->atomic != 0),
                       earlier->pc, block[0], block[1], block[2], thread[0], thread[1], thread[2]);
  }
  if (n > 0 && n < static_cast<int>(sizeof line) - 1) line[n++] = '\n';
  report(line, n);
}

// rmw: an atomic write that reads too (all but an atomic store).
KJ_UNCHECKED inline void on_access(const void* address, std::size_t size, bool write, bool atomic,
                                   const void* pc, bool rmw = true) {
  const Thread* t = current_thread;
  if (t == nullptr || size == 0) return; // the runtime's own bookkeeping, outside any thread
  const Block& b = *t->block;
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  Cells* cells;
  bool shared;
  if (state.global.holds(a)) {
    cells = &state.global;
    shared = false;
  } else if (b.shared_shadow.holds(a)) {
    cells = const_cast<Cells*>(&b.shared_shadow);
    shared = true;
  } else {
    return; // the stack, the runtime's memory: not the kernel's buffers
  }
  const std::size_t first = a - cells->lo;
  const std::size_t end = first + size < cells->bytes ? first + size : cells->bytes;
  Side now;
  now.block = b.linear;
  now.thread = static_cast<std::uint16_t>(t->linear + 1);
  now.atomic = atomic;
  now.write = write;
  now.epoch = b.barrier_epoch;
  now.warp_epoch = b.warp_epoch[t->linear / kWarp];
  now.pc = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(pc) - 1 -
                                      reinterpret_cast<std::uintptr_t>(__ehdr_start));
  const long long offset = shared ? static_cast<long long>(first)
                                  : static_cast<long long>(a - state.origin);
  int var = -1;
  if (!shared && state.races && order.on) {
    catch_up(b);
    ThreadOrder& mine = order.thread[t->linear];
    mine.dirty = true;
    now.fence = mine.fences;
    if (atomic) var = atomic_order(a, size, write, rmw, cells->cells + first, end - first, *t);
  }
  for (std::size_t i = first; i < end; ++i) {
    Cell& c = cells->cells[i];
    if (!c.valid) found("bounds", shared, offset, size, write, atomic, now.pc, *t, nullptr);
    if (!state.races) continue;
    const std::uintptr_t at = cells->lo + i;
    const Side* earlier = nullptr;
    if (clashes(c.write, atomic, *t, at))
      earlier = &c.write;
    else if (write && clashes(c.read, atomic, *t, at))
      earlier = &c.read;
    else if (write && clashes(c.other_read, atomic, *t, at))
      earlier = &c.other_read;
    if (earlier) found("race", shared, offset, size, write, atomic, now.pc, *t, earlier);
    if (write) {
      c.write = now;
      if (!atomic) c.read = c.other_read = Side{}; // all ordered before this write
    } else if (c.read.thread == 0 || ordered(c.read, *t, at)) {
      if (c.other_read.thread != 0 && ordered(c.other_read, *t, at)) c.other_read = Side{};
      c.read = now;
    } else if (c.other_read.thread == 0 || ordered(c.other_read, *t, at)) {
      c.other_read = now; // a second reader no barrier orders with the first
    }
  }
  // A release once the thread (or every thread, before a barrier) fenced what came before.
  if (var >= 0 && write &&
      (order.thread[t->linear].fences > 0 || order.fenced_epoch > 0))
    release(static_cast<unsigned>(var), *t);
}

} // namespace kjh::shadow

// The hooks the instrumentation calls: hidden, so the module's own calls bind to them directly.
#define KJ_HOOK extern "C" KJ_UNCHECKED __attribute__((visibility("hidden")))
#define KJ_ACCESS_HOOKS(N)                                                                          \
  KJ_HOOK void __tsan_read##N(void* p) {                                                          \
    ::kjh::shadow::on_access(p, N, false, false, __builtin_return_address(0));                     \
  }                                                                                                 \
  KJ_HOOK void __tsan_write##N(void* p) {                                                         \
    ::kjh::shadow::on_access(p, N, true, false, __builtin_return_address(0));                      \
  }                                                                                                 \
  KJ_HOOK void __tsan_unaligned_read##N(void* p) {                                                \
    ::kjh::shadow::on_access(p, N, false, false, __builtin_return_address(0));                     \
  }                                                                                                 \
  KJ_HOOK void __tsan_unaligned_write##N(void* p) {                                               \
    ::kjh::shadow::on_access(p, N, true, false, __builtin_return_address(0));                      \
  }                                                                                                 \
  KJ_HOOK void __tsan_volatile_read##N(void* p) {                                                 \
    ::kjh::shadow::on_access(p, N, false, false, __builtin_return_address(0));                     \
  }                                                                                                 \
  KJ_HOOK void __tsan_volatile_write##N(void* p) {                                                \
    ::kjh::shadow::on_access(p, N, true, false, __builtin_return_address(0));                      \
  }
KJ_ACCESS_HOOKS(1)
KJ_ACCESS_HOOKS(2)
KJ_ACCESS_HOOKS(4)
KJ_ACCESS_HOOKS(8)
KJ_ACCESS_HOOKS(16)
KJ_HOOK void __tsan_read_range(void* p, unsigned long n) {
  ::kjh::shadow::on_access(p, n, false, false, __builtin_return_address(0));
}
KJ_HOOK void __tsan_write_range(void* p, unsigned long n) {
  ::kjh::shadow::on_access(p, n, true, false, __builtin_return_address(0));
}
KJ_HOOK void __tsan_init() {}
KJ_HOOK void __tsan_func_entry(void*) {}
KJ_HOOK void __tsan_func_exit() {}
KJ_HOOK void __tsan_vptr_update(void**, void*) {}
KJ_HOOK void __tsan_vptr_read(void**) {}
KJ_HOOK void __tsan_atomic_thread_fence(int) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
KJ_HOOK void __tsan_atomic_signal_fence(int) {}

// Atomics: done (sequentially consistent, whatever order was asked), and remembered as atomic
// accesses, which never race with each other.
#define KJ_ATOMIC_RMW(N, T, OP)                                                                     \
  KJ_HOOK T __tsan_atomic##N##_##OP(volatile T* p, T v, int) {                                     \
    ::kjh::shadow::on_access(const_cast<T*>(p), sizeof(T), true, true, __builtin_return_address(0)); \
    return __atomic_##OP(p, v, __ATOMIC_SEQ_CST);                                                   \
  }
#define KJ_ATOMIC_HOOKS(N, T)                                                                       \
  KJ_HOOK T __tsan_atomic##N##_load(const volatile T* p, int) {                                    \
    ::kjh::shadow::on_access(const_cast<T*>(p), sizeof(T), false, true,                             \
                             __builtin_return_address(0));                                          \
    return __atomic_load_n(p, __ATOMIC_SEQ_CST);                                                    \
  }                                                                                                 \
  KJ_HOOK void __tsan_atomic##N##_store(volatile T* p, T v, int) {                                 \
    ::kjh::shadow::on_access(const_cast<T*>(p), sizeof(T), true, true, __builtin_return_address(0), \
                             false);                                                                \
    __atomic_store_n(p, v, __ATOMIC_SEQ_CST);                                                       \
  }                                                                                                 \
  KJ_HOOK T __tsan_atomic##N##_exchange(volatile T* p, T v, int) {                                 \
    ::kjh::shadow::on_access(const_cast<T*>(p), sizeof(T), true, true, __builtin_return_address(0)); \
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);                                             \
  }                                                                                                 \
  KJ_ATOMIC_RMW(N, T, fetch_add)                                                                    \
  KJ_ATOMIC_RMW(N, T, fetch_sub)                                                                    \
  KJ_ATOMIC_RMW(N, T, fetch_and)                                                                    \
  KJ_ATOMIC_RMW(N, T, fetch_or)                                                                     \
  KJ_ATOMIC_RMW(N, T, fetch_xor)                                                                    \
  KJ_ATOMIC_RMW(N, T, fetch_nand)                                                                   \
  KJ_HOOK int __tsan_atomic##N##_compare_exchange_strong(volatile T* p, T* expected, T v, int, int) { \
    ::kjh::shadow::on_access(const_cast<T*>(p), sizeof(T), true, true, __builtin_return_address(0)); \
    return __atomic_compare_exchange_n(p, expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);  \
  }                                                                                                 \
  KJ_HOOK int __tsan_atomic##N##_compare_exchange_weak(volatile T* p, T* expected, T v, int, int) { \
    ::kjh::shadow::on_access(const_cast<T*>(p), sizeof(T), true, true, __builtin_return_address(0)); \
    return __atomic_compare_exchange_n(p, expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);  \
  }                                                                                                 \
  KJ_HOOK T __tsan_atomic##N##_compare_exchange_val(volatile T* p, T expected, T v, int, int) {    \
    ::kjh::shadow::on_access(const_cast<T*>(p), sizeof(T), true, true, __builtin_return_address(0)); \
    __atomic_compare_exchange_n(p, &expected, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);        \
    return expected;                                                                                \
  }
KJ_ATOMIC_HOOKS(8, std::uint8_t)
KJ_ATOMIC_HOOKS(16, std::uint16_t)
KJ_ATOMIC_HOOKS(32, std::uint32_t)
KJ_ATOMIC_HOOKS(64, std::uint64_t)

// Called by the host worker before each run: the tracked range [lo, lo + bytes) (the arena and
// its guards), the arena's start (`origin`), and `count` valid spans as (offset from lo, bytes)
// pairs: the buffers, without their red zones. `races` off leaves only the bounds checks.
// Nonzero when the shadow cannot be made.
extern "C" KJ_UNCHECKED int kj_host_track(const void* lo, unsigned long bytes, const void* origin,
                                          const unsigned long* spans, unsigned count, int races) {
  using ::kjh::shadow::state;
  if (count > ::kjh::shadow::kMaxSpans) return 1;
  const bool remapped = (bytes + 1) * sizeof(::kjh::shadow::Cell) > state.global.mapped;
  if (!remapped)
    for (unsigned s = 0; s < state.span_count; ++s)
      ::kjh::shadow::reset(state.global, state.spans[2 * s], state.spans[2 * s + 1], false);
  state.span_count = 0;
  if (!::kjh::shadow::map_cells(state.global, reinterpret_cast<std::uintptr_t>(lo), bytes)) return 2;
  for (unsigned s = 0; s < count; ++s) {
    if (spans[2 * s] + spans[2 * s + 1] > bytes) return 3;
    state.spans[2 * s] = spans[2 * s];
    state.spans[2 * s + 1] = spans[2 * s + 1];
    ::kjh::shadow::reset(state.global, spans[2 * s], spans[2 * s + 1], true);
  }
  state.span_count = count;
  state.origin = reinterpret_cast<std::uintptr_t>(origin);
  state.races = races != 0;
  return 0;
}
#endif
