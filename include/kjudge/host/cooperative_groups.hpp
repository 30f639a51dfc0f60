// Cooperative groups at block and warp level for the host backend: what `#include
// <cooperative_groups.h>` (and cooperative_groups/reduce.h, scan.h) gives a kernel built by the
// host compiler; kjudge/host/toolkit/ holds the stand-ins by those names. The toolkit's headers
// are device code, so this is the same API over cuda_emulation.hpp: a block's sync is
// __syncthreads, and every tile or coalesced-group operation is a warp exchange or barrier whose
// mask names the group's lanes alone (a tile of 8 never waits for the rest of its warp). Reduce and
// scan combine values in the order the toolkit's headers do (a butterfly for tiles, a scan by rank
// for partial coalesced groups), so floating-point results agree with the GPU's. Grid,
// multi-grid and cluster groups, and tiles of more than 32 threads, are not here: the rewrite
// refuses them with their place (a grid barrier cannot be met by blocks that run one after
// another).
#pragma once

#include <array>
#include <bit>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kjudge/host/cuda_emulation.hpp"

// The warp-level pieces the group classes are made of.
namespace kjh::groups {

inline unsigned lane() {
  return lane_id();
}
inline unsigned lanes_below() {
  return (1u << lane()) - 1u;
}
inline unsigned block_rank() {
  return self().linear;
}
inline unsigned block_threads() {
  const dim3& d = self().block->block_dim;
  return d.x * d.y * d.z;
}

// The lanes of the `size`-thread tile holding this lane (size a power of two up to 32).
inline unsigned tile_mask(unsigned size) {
  return size >= kWarp ? 0xffffffffu : ((1u << size) - 1u) << (lane() & ~(size - 1u));
}

// PTX's fns: the bit of the |offset|-th set bit of `mask` counted from `base` (itself included),
// upwards for offset > 0 and downwards for offset < 0; 0xffffffff when there is none.
inline unsigned nth_set_bit(unsigned mask, unsigned base, int offset) {
  if (offset == 0) return (mask >> base & 1u) ? base : 0xffffffffu;
  if (offset > 0) {
    for (unsigned b = base; b < kWarp; ++b)
      if ((mask >> b & 1u) && --offset == 0) return b;
  } else {
    for (int b = static_cast<int>(base); b >= 0; --b)
      if ((mask >> b & 1u) && ++offset == 0) return static_cast<unsigned>(b);
  }
  return 0xffffffffu;
}

// Lane `from`'s `v` for every lane of `mask`: the emulation's exchange carries 16 bytes, so a
// larger value goes in pieces (the toolkit shuffles any trivially copyable type).
template <class T>
T shuffle(unsigned mask, const T& v, unsigned from) {
  static_assert(std::is_trivially_copyable_v<T>,
                "a shuffle of a type that is not trivially copyable");
  if constexpr (sizeof(T) <= 16) {
    return exchange(mask, v, from);
  } else {
    struct Piece {
      unsigned char bytes[16];
    };
    std::array<unsigned char, sizeof(T)> in, out;
    std::memcpy(in.data(), &v, sizeof(T));
    for (std::size_t at = 0; at < sizeof(T); at += 16) {
      const std::size_t n = sizeof(T) - at < 16 ? sizeof(T) - at : 16;
      Piece p{};
      std::memcpy(p.bytes, in.data() + at, n);
      p = exchange(mask, p, from);
      std::memcpy(out.data() + at, p.bytes, n);
    }
    return std::bit_cast<T>(out);
  }
}

// The lanes of this warp still running: a lane that returned never deposits again, so its slot
// holds an old value that no vote may count.
inline unsigned live_lanes() {
  return __activemask();
}

// Every live lane of `mask` sees every other's `v`: deposit, meet, read, meet again.
template <class T, class Read>
void gather(unsigned mask, const T& v, Read&& read) {
  static_assert(sizeof(T) <= 16 && std::is_trivially_copyable_v<T>, "a warp vote on this type");
  std::memcpy(warp_slot(lane()), &v, sizeof(T));
  warp_barrier(mask);
  const unsigned from = mask & live_lanes();
  for (unsigned l = 0; l < kWarp; ++l) {
    if (!(from >> l & 1u)) continue;
    T x;
    std::memcpy(&x, warp_slot(l), sizeof(T));
    read(l, x);
  }
  warp_barrier(mask);
}

inline unsigned ballot(unsigned mask, bool p) {
  unsigned out = 0;
  gather(mask, static_cast<unsigned char>(p), [&](unsigned l, unsigned char x) {
    if (x) out |= 1u << l;
  });
  return out;
}

// The lanes of `mask` holding the same value as this one.
template <class T>
unsigned match_any(unsigned mask, T v) {
  unsigned out = 0;
  gather(mask, v, [&](unsigned l, const T& x) {
    if (x == v) out |= 1u << l;
  });
  return out;
}

// `mask` if every live lane of it holds the same value (pred 1), else 0 (pred 0).
template <class T>
unsigned match_all(unsigned mask, T v, int& pred) {
  bool same = true;
  gather(mask, v, [&](unsigned, const T& x) { same = same && x == v; });
  pred = same;
  return same ? mask : 0u;
}

// The rendezvous of coalesced_threads(): this lane waits (Wait::converge) until nothing else in
// its block can run; the lanes of its warp then waiting at the same call site are the group, as a
// branch's lanes are on the GPU.
inline unsigned converged_lanes(const void* site) {
  Thread& t = self();
  t.converge_site = site;
  yield_to_scheduler(Wait::converge);
  return self().warp_mask;
}

[[noreturn]] inline void invalid_tile_size() {
  throw LaunchFailure("cooperative_groups::tiled_partition: a tile size that is not a power of "
                      "two from 1 to 32 (the GPU traps)");
}

} // namespace kjh::groups

namespace cooperative_groups {

namespace details {
inline constexpr unsigned int coalesced_group_id = 1;
inline constexpr unsigned int grid_group_id = 3;
inline constexpr unsigned int thread_block_id = 4;
inline constexpr unsigned int multi_tile_group_id = 5;
inline constexpr unsigned int cluster_group_id = 6;

template <class T>
using remove_qual = std::remove_cv_t<std::remove_reference_t<T>>;

struct access; // builds groups from masks, for the free functions below
} // namespace details

// The type-erased group: a thread_block, or the lanes of a tile or coalesced group.
class thread_group {
protected:
  struct data {
    unsigned int type = 0;
    unsigned int mask = 0; // coalesced kinds: the group's lanes in the warp
    unsigned int size = 0;
    unsigned int meta_group_rank = 0, meta_group_size = 1;
    bool is_tiled = false;
  } _data;
  explicit thread_group(unsigned int type) { _data.type = type; }
  friend struct details::access;

public:
  unsigned long long size() const;
  unsigned long long num_threads() const { return size(); }
  unsigned long long thread_rank() const;
  void sync() const;
  unsigned int get_type() const { return _data.type; }
};

template <unsigned int Id>
struct thread_group_base : public thread_group {
  thread_group_base() : thread_group(Id) {}
  static constexpr unsigned int id = Id;
};

class thread_block : public thread_group_base<details::thread_block_id> {
  friend thread_block this_thread_block();
  thread_block() = default;

public:
  static constexpr unsigned int _group_id = details::thread_block_id;
  struct arrival_token {};

  static void sync() { __syncthreads(); }
  arrival_token barrier_arrive() const { return {}; }
  void barrier_wait(arrival_token&&) const { __syncthreads(); }
  static unsigned int size() { return ::kjh::groups::block_threads(); }
  static unsigned int num_threads() { return ::kjh::groups::block_threads(); }
  static unsigned int thread_rank() { return ::kjh::groups::block_rank(); }
  static dim3 group_index() {
    const uint3 b = ::kjh::self().block->block_idx;
    return dim3(b.x, b.y, b.z);
  }
  static dim3 thread_index() {
    const uint3 t = ::kjh::self().thread_idx;
    return dim3(t.x, t.y, t.z);
  }
  static dim3 group_dim() { return ::kjh::self().block->block_dim; }
  static dim3 dim_threads() { return ::kjh::self().block->block_dim; }
};

inline thread_block this_thread_block() {
  return thread_block();
}

// Any set of lanes of one warp, ranked by lane.
class coalesced_group : public thread_group_base<details::coalesced_group_id> {
  friend struct details::access;
  friend coalesced_group coalesced_threads();

protected:
  explicit coalesced_group(unsigned int mask) {
    _data.mask = mask;
    _data.size = static_cast<unsigned int>(__builtin_popcount(mask));
  }
  // Bits by lane to bits by rank in the group.
  unsigned int pack(unsigned int lanes) const {
    unsigned int out = 0, rank = 0;
    for (unsigned int l = 0; l < 32; ++l) {
      if (!(_data.mask >> l & 1u)) continue;
      if (lanes >> l & 1u) out |= 1u << rank;
      ++rank;
    }
    return out;
  }

public:
  static constexpr unsigned int _group_id = details::coalesced_group_id;

  unsigned int num_threads() const { return _data.size; }
  unsigned int size() const { return _data.size; }
  unsigned int thread_rank() const {
    return static_cast<unsigned int>(__builtin_popcount(_data.mask & ::kjh::groups::lanes_below()));
  }
  unsigned int meta_group_rank() const { return _data.meta_group_rank; }
  unsigned int meta_group_size() const { return _data.meta_group_size; }
  void sync() const { ::kjh::warp_barrier(_data.mask); }

  // The lane choices are the toolkit's (fns over the mask; out of range: the own value).
  template <class T>
  T shfl(T v, int src_rank) const {
    const unsigned int lane =
        src_rank == 0  ? static_cast<unsigned int>(__builtin_ffs(static_cast<int>(_data.mask))) - 1u
        : size() == 32 ? static_cast<unsigned int>(src_rank)
                       : ::kjh::groups::nth_set_bit(_data.mask, 0, src_rank + 1);
    return ::kjh::groups::shuffle(_data.mask, v, lane % 32u);
  }
  template <class T>
  T shfl_down(T v, unsigned int delta) const {
    const unsigned int me = ::kjh::groups::lane();
    unsigned int lane;
    if (size() == 32)
      lane = me + delta < 32u ? me + delta : me;
    else {
      lane = ::kjh::groups::nth_set_bit(_data.mask, me, static_cast<int>(delta) + 1);
      if (lane >= 32u) lane = me;
    }
    return ::kjh::groups::shuffle(_data.mask, v, lane);
  }
  template <class T>
  T shfl_up(T v, int delta) const {
    const unsigned int me = ::kjh::groups::lane();
    unsigned int lane;
    if (size() == 32)
      lane = me >= static_cast<unsigned int>(delta) ? me - static_cast<unsigned int>(delta) : me;
    else {
      lane = ::kjh::groups::nth_set_bit(_data.mask, me, -(delta + 1));
      if (lane >= 32u) lane = me;
    }
    return ::kjh::groups::shuffle(_data.mask, v, lane);
  }
  int any(int predicate) const { return ::kjh::groups::ballot(_data.mask, predicate != 0) != 0; }
  int all(int predicate) const {
    return ::kjh::groups::ballot(_data.mask, predicate != 0) == _data.mask;
  }
  unsigned int ballot(int predicate) const {
    return pack(::kjh::groups::ballot(_data.mask, predicate != 0));
  }
  template <class T>
  unsigned int match_any(T v) const {
    static_assert(std::is_arithmetic_v<T>, "match_any of a type that is not arithmetic");
    return pack(::kjh::groups::match_any(_data.mask, v));
  }
  template <class T>
  unsigned int match_all(T v, int& pred) const {
    static_assert(std::is_arithmetic_v<T>, "match_all of a type that is not arithmetic");
    return pack(::kjh::groups::match_all(_data.mask, v, pred));
  }
};

// Not inlined: the call site (its return address) tells one branch's rendezvous from another's.
__attribute__((noinline)) inline coalesced_group coalesced_threads() {
  return coalesced_group(::kjh::groups::converged_lanes(__builtin_return_address(0)));
}

// ---- tiles of 1 to 32 threads -------------------------------------------------------------------

template <unsigned int Size>
class __static_size_thread_block_tile_base {
  static_assert(Size >= 1 && Size <= 32 && (Size & (Size - 1)) == 0,
                "kjudge's host backend: thread_block_tile sizes are 1, 2, 4, 8, 16 and 32 "
                "(tiles of more than one warp are not supported on the host)");

protected:
  static unsigned int build_mask() { return ::kjh::groups::tile_mask(Size); }
  static unsigned int base_lane() { return ::kjh::groups::lane() & ~(Size - 1u); }

public:
  static constexpr unsigned int _group_id = details::coalesced_group_id;

  static unsigned int thread_rank() { return ::kjh::groups::block_rank() & (Size - 1u); }
  static constexpr unsigned int num_threads() { return Size; }
  static constexpr unsigned int size() { return Size; }
  static void sync() { ::kjh::warp_barrier(build_mask()); }

  // The lanes __shfl*_sync(mask, v, x, Size) reads, as cuda_emulation.hpp's intrinsics choose.
  template <class T>
  T shfl(T v, int src_rank) const {
    return ::kjh::groups::shuffle(build_mask(), v,
                                  base_lane() + static_cast<unsigned int>(src_rank) % Size);
  }
  template <class T>
  T shfl_down(T v, unsigned int delta) const {
    const unsigned int me = ::kjh::groups::lane();
    return ::kjh::groups::shuffle(build_mask(), v,
                                  me + delta < base_lane() + Size ? me + delta : me);
  }
  template <class T>
  T shfl_up(T v, unsigned int delta) const {
    const unsigned int me = ::kjh::groups::lane();
    return ::kjh::groups::shuffle(build_mask(), v, me >= base_lane() + delta ? me - delta : me);
  }
  template <class T>
  T shfl_xor(T v, unsigned int lane_mask) const {
    const unsigned int me = ::kjh::groups::lane();
    unsigned int from = me ^ lane_mask;
    if (from >= base_lane() + Size) from = me;
    return ::kjh::groups::shuffle(build_mask(), v, from % 32u);
  }
  int any(int predicate) const { return ::kjh::groups::ballot(build_mask(), predicate != 0) != 0; }
  int all(int predicate) const {
    return ::kjh::groups::ballot(build_mask(), predicate != 0) == build_mask();
  }
  // Bits by rank in the tile: the warp's ballot shifted down to the tile's first lane.
  unsigned int ballot(int predicate) const {
    return ::kjh::groups::ballot(build_mask(), predicate != 0) >> base_lane();
  }
  template <class T>
  unsigned int match_any(T v) const {
    static_assert(std::is_arithmetic_v<T>, "match_any of a type that is not arithmetic");
    return ::kjh::groups::match_any(build_mask(), v) >> base_lane();
  }
  template <class T>
  unsigned int match_all(T v, int& pred) const {
    static_assert(std::is_arithmetic_v<T>, "match_all of a type that is not arithmetic");
    return ::kjh::groups::match_all(build_mask(), v, pred) >> base_lane();
  }
};

template <unsigned int Size, class ParentT = void>
class thread_block_tile;

// A tile of a known parent (what tiled_partition<Size>(parent) returns): its place among the
// parent's tiles follows from the thread's rank.
template <unsigned int Size, class ParentT>
class thread_block_tile : public __static_size_thread_block_tile_base<Size> {
  friend struct details::access;

protected:
  thread_block_tile() = default;

public:
  static unsigned int meta_group_rank() { return ParentT::thread_rank() / Size; }
  static unsigned int meta_group_size() { return (ParentT::size() + Size - 1) / Size; }
  operator thread_block_tile<Size, void>() const {
    return thread_block_tile<Size, void>(meta_group_rank(), meta_group_size());
  }
};

// A tile whose parent is forgotten (thread_block_tile<Size>): a thread_group too, keeping its
// place.
template <unsigned int Size>
class thread_block_tile<Size, void> : public __static_size_thread_block_tile_base<Size>,
                                      public thread_group {
  using base = __static_size_thread_block_tile_base<Size>;
  template <unsigned int, class>
  friend class thread_block_tile;
  friend struct details::access;

  thread_block_tile(unsigned int meta_rank, unsigned int meta_size)
      : thread_group(details::coalesced_group_id) {
    _data.mask = base::build_mask();
    _data.size = Size;
    _data.meta_group_rank = meta_rank;
    _data.meta_group_size = meta_size;
    _data.is_tiled = true;
  }

public:
  template <class ParentT>
  thread_block_tile(const thread_block_tile<Size, ParentT>& g)
      : thread_block_tile(g.meta_group_rank(), g.meta_group_size()) {}

  using base::num_threads;
  using base::size;
  using base::sync;
  using base::thread_rank;
  static constexpr unsigned int _group_id = details::coalesced_group_id;
  unsigned int meta_group_rank() const { return _data.meta_group_rank; }
  unsigned int meta_group_size() const { return _data.meta_group_size; }
};

namespace details {

template <class T>
struct is_tile : std::false_type {};
template <unsigned int Size, class P>
struct is_tile<thread_block_tile<Size, P>> : std::true_type {};

struct access {
  template <unsigned int Size, class ParentT>
  static thread_block_tile<Size, ParentT> tile() {
    return thread_block_tile<Size, ParentT>();
  }
  static thread_block_tile<1, void> single() { return thread_block_tile<1, void>(0, 1); }
  static coalesced_group coalesced(unsigned int mask, unsigned int meta_rank = 0,
                                   unsigned int meta_size = 1, bool tiled = false) {
    coalesced_group g(mask);
    g._data.meta_group_rank = meta_rank;
    g._data.meta_group_size = meta_size;
    g._data.is_tiled = tiled;
    return g;
  }
  static const thread_group::data& of(const thread_group& g) { return g._data; }
  template <unsigned int Size, class P>
  static unsigned int mask(const thread_block_tile<Size, P>&) {
    return ::kjh::groups::tile_mask(Size);
  }
  static unsigned int mask(const coalesced_group& g) { return g._data.mask; }

  // tiled_partition(parent, n) of a block: the toolkit's masks and places.
  static thread_group block_tile(unsigned int tilesz) {
    if (tilesz == 0 || tilesz > 32 || (tilesz & (tilesz - 1)) != 0)
      ::kjh::groups::invalid_tile_size();
    const unsigned int rank = ::kjh::groups::block_rank(), size = ::kjh::groups::block_threads();
    const unsigned int base_offset = rank & ~(tilesz - 1);
    const unsigned int length = size - base_offset < tilesz ? size - base_offset : tilesz;
    const unsigned int mask = (0xffffffffu >> (32 - length))
                              << (::kjh::groups::lane() & ~(tilesz - 1));
    thread_group tile(coalesced_group_id);
    tile._data.mask = mask;
    tile._data.size = static_cast<unsigned int>(__builtin_popcount(mask));
    tile._data.meta_group_size = (size + tilesz - 1) / tilesz;
    tile._data.meta_group_rank = rank / tilesz;
    tile._data.is_tiled = true;
    return tile;
  }

  // tiled_partition(parent, n) of a coalesced group, as the toolkit splits one.
  static coalesced_group coalesced_tile(const coalesced_group& parent, unsigned int tilesz) {
    if (tilesz == 0 || tilesz > 32 || (tilesz & (tilesz - 1)) != 0)
      ::kjh::groups::invalid_tile_size();
    if (parent.size() <= tilesz) return parent;
    const unsigned int rank = parent.thread_rank();
    if (parent._data.is_tiled) {
      const unsigned int base_offset = rank & ~(tilesz - 1);
      const unsigned int length =
          parent.size() - base_offset < tilesz ? parent.size() - base_offset : tilesz;
      const unsigned int mask = (0xffffffffu >> (32 - length))
                                << (::kjh::groups::lane() & ~(tilesz - 1));
      return coalesced(mask, rank / tilesz, parent.size() / tilesz, true);
    }
    unsigned int mask = 0, member_rank = 0;
    int seen = static_cast<int>(rank / tilesz * tilesz);
    for (unsigned int bit = 0; bit < 32; ++bit) {
      if (!(parent._data.mask >> bit & 1u)) continue;
      if (seen <= 0 && member_rank < tilesz) {
        mask |= 1u << bit;
        ++member_rank;
      }
      --seen;
    }
    return coalesced(mask, rank / tilesz, (parent.size() + tilesz - 1) / tilesz, false);
  }
};

} // namespace details

inline unsigned long long thread_group::size() const {
  if (_data.type == details::thread_block_id) return thread_block::size();
  return _data.size;
}
inline unsigned long long thread_group::thread_rank() const {
  if (_data.type == details::thread_block_id) return thread_block::thread_rank();
  return static_cast<unsigned int>(__builtin_popcount(_data.mask & ::kjh::groups::lanes_below()));
}
inline void thread_group::sync() const {
  if (_data.type == details::thread_block_id)
    __syncthreads();
  else
    ::kjh::warp_barrier(_data.mask);
}

inline thread_block_tile<1, void> this_thread() {
  return details::access::single();
}

template <class GroupT>
void sync(const GroupT& g) {
  g.sync();
}
template <class GroupT>
auto thread_rank(const GroupT& g) -> decltype(g.thread_rank()) {
  return g.thread_rank();
}
template <class GroupT>
auto group_size(const GroupT& g) -> decltype(g.num_threads()) {
  return g.num_threads();
}

template <unsigned int Size, class ParentT>
thread_block_tile<Size, ParentT> tiled_partition(const ParentT&) {
  static_assert(std::is_same_v<ParentT, thread_block> || details::is_tile<ParentT>::value,
                "tiled_partition<Size> of a group that is not a thread_block or a "
                "thread_block_tile");
  if constexpr (details::is_tile<ParentT>::value)
    static_assert(Size < ParentT::size(), "Tile size bigger or equal to the parent group size");
  return details::access::tile<Size, ParentT>();
}

inline thread_group tiled_partition(const thread_block&, unsigned int tilesz) {
  return details::access::block_tile(tilesz);
}
inline coalesced_group tiled_partition(const coalesced_group& parent, unsigned int tilesz) {
  return details::access::coalesced_tile(parent, tilesz);
}
inline thread_group tiled_partition(const thread_group& parent, unsigned int tilesz) {
  const auto& d = details::access::of(parent);
  if (d.type == details::coalesced_group_id)
    return details::access::coalesced_tile(
        details::access::coalesced(d.mask, d.meta_group_rank, d.meta_group_size, d.is_tiled),
        tilesz);
  return details::access::block_tile(tilesz);
}

// binary_partition and labeled_partition (details/partitioning.h): the lanes of a tile or
// coalesced group split by a predicate or label, with the toolkit's places.
namespace details {
template <class Group>
coalesced_group binary_partition(const Group& g, bool pred) {
  const unsigned int mine = access::mask(g);
  const unsigned int set = ::kjh::groups::ballot(mine, pred);
  if (set == mine || set == 0) return access::coalesced(mine, 0, 1);
  return access::coalesced(mine & (pred ? set : ~set), pred ? 1u : 0u, 2);
}
template <class Group, class Label>
coalesced_group labeled_partition(const Group& g, Label label) {
  if constexpr (std::is_same_v<Label, bool>) {
    return binary_partition(g, label);
  } else if constexpr (std::is_pointer_v<Label>) {
    return labeled_partition(g, reinterpret_cast<unsigned long long>(label));
  } else {
    const unsigned int mine = access::mask(g);
    const unsigned int sub = ::kjh::groups::match_any(mine, label);
    const unsigned int leader =
        static_cast<unsigned int>(__builtin_ffs(static_cast<int>(sub))) - 1u;
    const unsigned int leaders = ::kjh::groups::ballot(mine, leader == ::kjh::groups::lane());
    return access::coalesced(
        sub, static_cast<unsigned int>(__builtin_popcount(leaders & ((1u << leader) - 1u))),
        static_cast<unsigned int>(__builtin_popcount(leaders)));
  }
}
} // namespace details

inline coalesced_group binary_partition(const coalesced_group& g, bool pred) {
  return details::binary_partition(g, pred);
}
template <unsigned int Size, class ParentT>
coalesced_group binary_partition(const thread_block_tile<Size, ParentT>& g, bool pred) {
  return details::binary_partition(g, pred);
}
template <class Label>
coalesced_group labeled_partition(const coalesced_group& g, Label label) {
  static_assert(std::is_integral_v<Label> || std::is_pointer_v<Label>,
                "labeled_partition predicate must be an integral or pointer type");
  return details::labeled_partition(g, label);
}
template <class Label, unsigned int Size, class ParentT>
coalesced_group labeled_partition(const thread_block_tile<Size, ParentT>& g, Label label) {
  static_assert(std::is_integral_v<Label> || std::is_pointer_v<Label>,
                "labeled_partition predicate must be an integral or pointer type");
  return details::labeled_partition(g, label);
}

// invoke_one (details/invoke.h): the group's first lane calls, and the broadcast comes from it.
template <class Group, class Fn, class... Args>
void invoke_one(const Group& g, Fn&& fn, Args&&... args) {
  if (g.thread_rank() == 0) std::forward<Fn>(fn)(std::forward<Args>(args)...);
}
template <class Group, class Fn, class... Args>
auto invoke_one_broadcast(const Group& g, Fn&& fn, Args&&... args)
    -> std::remove_reference_t<decltype(std::forward<Fn>(fn)(std::forward<Args>(args)...))> {
  using Result = details::remove_qual<decltype(std::forward<Fn>(fn)(std::forward<Args>(args)...))>;
  static_assert(!std::is_void_v<Result>,
                "For invocables returning void invoke_one should be used instead");
  Result r{};
  if (g.thread_rank() == 0) r = std::forward<Fn>(fn)(std::forward<Args>(args)...);
  return g.shfl(r, 0);
}

} // namespace cooperative_groups

// reduce and scan, included here so <cooperative_groups.h> alone gives them too.
#include "kjudge/host/cooperative_groups_reduce.hpp"
