// CUDA C++ on the CPU: the header a kernel source is compiled against by the host backend
// (DESIGN.md "Backends"), after src/backend/host/rewrite.cpp has turned its `__shared__`
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

// Race detection: compiled with -fsanitize=thread, each CUDA thread is a ThreadSanitizer fiber
// switched to without synchronisation, so only what CUDA orders is ordered: a barrier is a
// release by every arriving thread and an acquire by every leaving one (per block, or per warp),
// the launch orders the host's writes before the kernel and the kernel before the host's reads,
// and atomics are atomics. Blocks get no order among themselves. The runtime's own bookkeeping
// runs inside ignore regions. A conflicting pair of accesses is then a ThreadSanitizer report
// naming both places in the candidate's source; without the sanitizer these hooks are empty.
#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
extern "C" void __tsan_ignore_thread_begin(void);
extern "C" void __tsan_ignore_thread_end(void);
namespace kjh::race {
inline void* current_fiber() { return __tsan_get_current_fiber(); }
inline void* create_fiber() { return __tsan_create_fiber(0); }
inline void destroy_fiber(void* f) { __tsan_destroy_fiber(f); }
inline void switch_to(void* f) { __tsan_switch_to_fiber(f, __tsan_switch_to_fiber_no_sync); }
inline void ignore_begin() { __tsan_ignore_thread_begin(); }
inline void ignore_end() { __tsan_ignore_thread_end(); }
inline void release(void* token) { __tsan_release(token); }
inline void acquire(void* token) { __tsan_acquire(token); }
// Reports name a CUDA thread by where it is: "block (1,0,0) thread (3,0,0)".
inline void name_fiber(void* f, uint3 block, uint3 thread) {
  char name[96];
  std::snprintf(name, sizeof name, "block (%u,%u,%u) thread (%u,%u,%u)", block.x, block.y, block.z,
                thread.x, thread.y, thread.z);
  __tsan_set_fiber_name(f, name);
}
} // namespace kjh::race
#else
namespace kjh::race {
inline void* current_fiber() { return nullptr; }
inline void* create_fiber() { return nullptr; }
inline void destroy_fiber(void*) {}
inline void switch_to(void*) {}
inline void ignore_begin() {}
inline void ignore_end() {}
inline void release(void*) {}
inline void acquire(void*) {}
template <class U>
inline void name_fiber(void*, U, U) {}
} // namespace kjh::race
#endif
namespace kjh::race {
#if defined(__SANITIZE_THREAD__)
inline constexpr bool enabled = true;
#else
inline constexpr bool enabled = false;
#endif
// The runtime's bookkeeping, for the scope of one of these.
struct Ignored {
  Ignored() { ignore_begin(); }
  ~Ignored() { ignore_end(); }
  Ignored(const Ignored&) = delete;
  Ignored& operator=(const Ignored&) = delete;
};
} // namespace kjh::race

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

enum class Wait : std::uint8_t { none, block, warp };

struct Thread {
  uint3 thread_idx{};
  unsigned linear = 0; // x + y*bx + z*bx*by
  Block* block = nullptr;
  boost::context::fiber fiber;
  boost::context::fiber scheduler; // where a barrier returns to
  Wait wait = Wait::none;
  unsigned warp_mask = 0; // lanes a warp barrier waits for
  bool done = false;
  void* race_fiber = nullptr; // its ThreadSanitizer fiber (race detection only)
};

// Shared memory is aligned like the GPU's widest vector loads want, and wider.
inline constexpr std::size_t kSharedAlign = 64;
struct AlignedDelete {
  void operator()(unsigned char* p) const { ::operator delete[](p, std::align_val_t(kSharedAlign)); }
};
using SharedStorage = std::unique_ptr<unsigned char[], AlignedDelete>;

inline std::size_t fiber_stack_bytes() { return 256 * 1024; }

struct Block {
  uint3 block_idx{};
  dim3 block_dim, grid_dim;
  std::vector<std::unique_ptr<Thread>> threads;
  // Static __shared__ variables, one slot per declaration (keyed by a tag's address), and the
  // dynamic shared memory of the launch.
  std::vector<std::pair<const void*, SharedStorage>> shared_slots;
  std::vector<unsigned char> dynamic_shared;
  // Per warp: the values the lanes exchange, 16 bytes a lane.
  std::vector<unsigned char> warp_slots;
  // Race detection: the scheduler's fiber, the barriers' and the launch's tokens.
  void* scheduler_fiber = nullptr;
  // Fresh storage for each block (run_block renews it): the sanitizer keys a sync object by its
  // address and forgets it when the memory is freed, so no block's barriers order it with an
  // earlier block run by the same CPU thread.
  std::unique_ptr<char[]> tokens; // [0]: the block barrier, [1 + w]: warp w
  char* barrier_token = nullptr;
  char* warp_tokens = nullptr;
  char* launch_start = nullptr;
  char* launch_done = nullptr;
  // Race detection: sanitizer fibers, each with its own stack, reused by the CUDA threads of the
  // blocks this CPU thread runs (a sanitizer fiber costs far more to make than a CUDA thread
  // takes to run). A stack only ever serves one sanitizer fiber, so its reuse is never a race.
  struct RaceSlot {
    void* fiber = nullptr;
    boost::context::stack_context stack;
  };
  std::vector<RaceSlot> race_slots;
  unsigned blocks_run = 0;
  Block() = default;
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;
  ~Block() {
    threads.clear();
    boost::context::protected_fixedsize_stack stacks{fiber_stack_bytes()};
    for (auto& slot : race_slots) {
      race::destroy_fiber(slot.fiber);
      stacks.deallocate(slot.stack);
    }
  }
};

inline thread_local Thread* current_thread = nullptr;

inline Thread& self() { return *current_thread; }

// Back to the scheduler, waiting as `wait` says, until it resumes this fiber.
inline void yield_to_scheduler(Wait wait, unsigned warp_mask = 0) {
  Thread& t = self();
  const race::Ignored bookkeeping;
  t.wait = wait;
  t.warp_mask = warp_mask;
  race::switch_to(t.block->scheduler_fiber);
  t.scheduler = std::move(t.scheduler).resume();
  current_thread = &t; // the scheduler ran others meanwhile
}

inline void syncthreads() {
  Block& b = *self().block;
  race::release(b.barrier_token);
  yield_to_scheduler(Wait::block);
  race::acquire(b.barrier_token);
}

inline unsigned lane_id() { return self().linear % kWarp; }

// Wait until every live lane of `mask` in this warp has arrived here.
inline void warp_barrier(unsigned mask) {
  Thread& t = self();
  char* token = &t.block->warp_tokens[t.linear / kWarp];
  race::release(token);
  yield_to_scheduler(Wait::warp, mask | (1u << (t.linear % kWarp)));
  race::acquire(token);
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
  {
    const race::Ignored slots; // reused by the next block's warps: runtime memory
    std::memcpy(warp_slot(lane_id()), &value, sizeof(T));
  }
  warp_barrier(mask);
  T out;
  {
    const race::Ignored slots;
    std::memcpy(&out, warp_slot(from % kWarp), sizeof(T));
  }
  warp_barrier(mask);
  return out;
}

// Per-block storage of one static __shared__ declaration (ID: the rewrite's number for it).
// CUDA does not zero shared memory, so it is filled with 0xFF bytes (NaN for floats, -1 for
// integers): a kernel that reads it before writing shows it.
template <class T, int ID>
T& block_shared() {
  static const char key = 0;
  const race::Ignored bookkeeping; // the slot list, and the fill, are the runtime's
  Block& b = *self().block;
  for (auto& [k, p] : b.shared_slots)
    if (k == &key) return *reinterpret_cast<T*>(p.get());
  auto storage = SharedStorage(
      static_cast<unsigned char*>(::operator new[](sizeof(T), std::align_val_t(kSharedAlign))));
  std::memset(storage.get(), 0xFF, sizeof(T));
  b.shared_slots.emplace_back(&key, std::move(storage));
  return *reinterpret_cast<T*>(b.shared_slots.back().second.get());
}

template <class T>
T* dynamic_shared() {
  const race::Ignored bookkeeping;
  return reinterpret_cast<T*>(self().block->dynamic_shared.data());
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

struct LaunchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Fiber stacks (with a guard page) kept for reuse: mapping and protecting a fresh stack per CUDA
// thread cost more than running most kernels' threads. Each CPU thread keeps its own list and
// hands it to the shared one when it ends, so the next launch's threads find them again.
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
    static Shared p;
    return p;
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

// Under race detection a fiber runs on the stack of its sanitizer fiber's slot (Block::RaceSlot),
// handed to Boost as is.
struct SlotStack {
  boost::context::stack_context stack;
  boost::context::stack_context allocate() { return stack; }
  void deallocate(boost::context::stack_context&) noexcept {}
};

// Runs one block to the end: every thread a fiber, resumed in thread order until it waits or
// returns; barriers release when every live thread (of the block, or of the warp's mask) waits.
inline void run_block(Entry entry, void** args, Block& b) {
  const race::Ignored scheduler; // everything the scheduler itself does
  const unsigned n = b.block_dim.x * b.block_dim.y * b.block_dim.z;
  b.threads.clear();
  // Race detection: thread i takes slot (i + shift) of n + 32, the shift a warp every other
  // block, so the same thread of two consecutive blocks is never the same sanitizer fiber (whose
  // accesses would be ordered). Slots live until the CPU thread ends: a sanitizer fiber's
  // destruction would order it before whoever destroys it.
  const std::size_t slots = race::enabled ? n + kWarp : 0;
  while (b.race_slots.size() < slots) {
    boost::context::protected_fixedsize_stack stacks{fiber_stack_bytes()};
    b.race_slots.push_back({race::create_fiber(), stacks.allocate()});
  }
  const unsigned shift = (b.blocks_run++ % 2) * kWarp;
  b.warp_slots.assign(((n + kWarp - 1) / kWarp) * kWarp * 16, 0);
  b.tokens.reset(); // freed first, so the sanitizer drops the last block's sync objects
  b.tokens = std::make_unique<char[]>(1 + (n + kWarp - 1) / kWarp);
  b.barrier_token = &b.tokens[0];
  b.warp_tokens = &b.tokens[1];
  b.scheduler_fiber = race::current_fiber();
  std::exception_ptr failure;
  for (unsigned i = 0; i < n; ++i) {
    auto t = std::make_unique<Thread>();
    t->linear = i;
    t->thread_idx = uint3{i % b.block_dim.x, (i / b.block_dim.x) % b.block_dim.y,
                          i / (b.block_dim.x * b.block_dim.y)};
    t->block = &b;
    Thread* raw = t.get();
    auto body = [raw, entry, args, &failure](boost::context::fiber&& scheduler) {
      race::ignore_begin();
      raw->scheduler = std::move(scheduler);
      current_thread = raw;
      race::ignore_end();
      race::acquire(raw->block->launch_start);
      try {
        entry(args);
      } catch (const boost::context::detail::forced_unwind&) {
        throw; // a suspended fiber destroyed (the block failed): let Boost unwind it
      } catch (...) {
        const race::Ignored bookkeeping;
        if (!failure) failure = std::current_exception();
      }
      race::release(raw->block->launch_done);
      // The scheduler switches the sanitizer back to its own fiber once this one has returned.
      race::ignore_begin();
      raw->done = true;
      raw->wait = Wait::none;
      boost::context::fiber back = std::move(raw->scheduler);
      race::ignore_end();
      return back;
    };
    if constexpr (race::enabled) {
      const Block::RaceSlot& slot = b.race_slots[(i + shift) % slots];
      t->race_fiber = slot.fiber;
      race::name_fiber(t->race_fiber, b.block_idx, t->thread_idx);
      t->fiber = boost::context::fiber(std::allocator_arg, SlotStack{slot.stack}, std::move(body));
    } else {
      t->fiber = boost::context::fiber(std::allocator_arg, PooledStack(), std::move(body));
    }
    b.threads.push_back(std::move(t));
  }
  for (;;) {
    bool ran = false;
    for (auto& t : b.threads) {
      if (t->done || t->wait != Wait::none) continue;
      current_thread = t.get();
      race::switch_to(t->race_fiber);
      boost::context::fiber next = std::move(t->fiber).resume();
      // Back on the scheduler's sanitizer fiber before anything here is recorded (a thread
      // that waits switched already; one that returned did not).
      race::switch_to(b.scheduler_fiber);
      t->fiber = std::move(next);
      current_thread = nullptr;
      ran = true;
      if (failure) std::rethrow_exception(failure);
    }
    if (ran) continue;
    // Nobody can run: release a barrier whose waiters are all there.
    bool released = false;
    // Warp barriers: every live lane of the mask waits at a warp barrier.
    for (unsigned w = 0; w * kWarp < n; ++w) {
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
        released = true;
      }
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
      continue;
    }
    throw LaunchFailure("threads of one block wait at different barriers (a __syncthreads or a "
                        "warp operation that not every thread reaches): the kernel would hang");
  }
}

} // namespace kjh

// ---- the CUDA names a kernel uses ---------------------------------------------------------------

#define threadIdx (::kjh::self().thread_idx)
#define blockIdx (::kjh::self().block->block_idx)
#define blockDim (::kjh::self().block->block_dim)
#define gridDim (::kjh::self().block->grid_dim)
#define warpSize 32

inline void __syncthreads() { ::kjh::syncthreads(); }
inline int __syncthreads_count(int p) {
  (void)p;
  throw ::kjh::LaunchFailure("__syncthreads_count is not supported on the host backend");
}
inline void __syncwarp(unsigned mask = 0xffffffffu) { ::kjh::warp_barrier(mask); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }

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
  return std::atomic_ref<T>(*p).fetch_add(v);
}
template <class T>
T atomicSub(T* p, T v) {
  return std::atomic_ref<T>(*p).fetch_sub(v);
}
template <class T>
T atomicExch(T* p, T v) {
  return std::atomic_ref<T>(*p).exchange(v);
}
template <class T>
T atomicCAS(T* p, T expected, T desired) {
  std::atomic_ref<T>(*p).compare_exchange_strong(expected, desired);
  return expected;
}
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

// Loads through the read-only cache are plain loads here.
template <class T>
T __ldg(const T* p) {
  return *p;
}

// ---- math ----------------------------------------------------------------------------------------

using std::ceil;
using std::exp;
using std::fabs;
using std::floor;
using std::fma;
using std::log;
using std::sqrt;
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return std::fma(a, b, c); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
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

// Runs the grid: blocks in order, spread over `workers` CPU threads (each takes the next block).
inline void launch(Entry entry, const unsigned grid[3], const unsigned block[3],
                   unsigned shared_bytes, void** args, unsigned workers) {
  const unsigned long long blocks =
      static_cast<unsigned long long>(grid[0]) * grid[1] * grid[2];
  std::atomic<unsigned long long> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  char launch_start = 0, launch_done = 0;
  race::release(&launch_start); // the host's writes come before the kernel
  // Race detection: shared memory the kernel touched is freed only when the launch is over
  // (after the acquire of every thread's release), since freeing it sooner, unordered with the
  // kernel's accesses, is itself a race, and reusing it would make two blocks' shared memory one.
  std::mutex retired_mutex;
  std::vector<SharedStorage> all_retired_slots;
  std::vector<std::vector<unsigned char>> all_retired_dynamic;
  // One CPU thread's share of the grid: the next block, until none is left.
  auto blocks_of_one_thread = [&](Block& b) {
    for (;;) {
      const unsigned long long i = next.fetch_add(1);
      if (i >= blocks || failed.load()) return;
      {
        const race::Ignored setup; // the block's description, rewritten for each block
        if (race::enabled) { // shared memory retires instead of being freed or reused
          const std::lock_guard lock(retired_mutex);
          for (auto& slot : b.shared_slots)
            all_retired_slots.push_back(std::move(slot.second));
          all_retired_dynamic.push_back(std::move(b.dynamic_shared));
        }
        b.block_idx = uint3{static_cast<unsigned>(i % grid[0]),
                            static_cast<unsigned>(i / grid[0] % grid[1]),
                            static_cast<unsigned>(
                                i / (static_cast<unsigned long long>(grid[0]) * grid[1]))};
        b.shared_slots.clear();
        b.dynamic_shared = std::vector<unsigned char>(shared_bytes, 0xFF);
      }
      try {
        run_block(entry, args, b);
      } catch (...) {
        if (!failed.exchange(true)) failure = std::current_exception();
        return;
      }
    }
  };
  auto work = [&] {
    const race::Ignored runtime; // this CPU thread only schedules; the fibers run the kernel
    Block b;
    b.block_dim = dim3(block[0], block[1], block[2]);
    b.grid_dim = dim3(grid[0], grid[1], grid[2]);
    b.launch_start = &launch_start;
    b.launch_done = &launch_done;
    blocks_of_one_thread(b);
    if (race::enabled) {
      const std::lock_guard lock(retired_mutex);
      for (auto& slot : b.shared_slots)
        all_retired_slots.push_back(std::move(slot.second));
      all_retired_dynamic.push_back(std::move(b.dynamic_shared));
    }
  };
  workers = std::max(1u, std::min<unsigned>(workers, static_cast<unsigned>(std::min<unsigned long long>(blocks, 64))));
  if (workers == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  race::acquire(&launch_done); // and the kernel before the host's reads
  all_retired_slots.clear();
  all_retired_dynamic.clear();
  if (failure) std::rethrow_exception(failure);
}

} // namespace kjh
