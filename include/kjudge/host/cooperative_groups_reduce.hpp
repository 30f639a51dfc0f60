// cooperative_groups/reduce.h and scan.h for the host backend: reduce, the scans and their
// operators over the groups of cooperative_groups.hpp, combining values in the order the
// toolkit's headers do, so floating-point results agree with the GPU's.
#pragma once

#include "kjudge/host/cooperative_groups.hpp"

namespace cooperative_groups {


template <class Ty>
struct plus {
  Ty operator()(Ty a, Ty b) const { return a + b; }
};
template <class Ty>
struct less {
  Ty operator()(Ty a, Ty b) const { return (b < a) ? b : a; }
};
template <class Ty>
struct greater {
  Ty operator()(Ty a, Ty b) const { return (a < b) ? b : a; }
};
template <class Ty>
struct bit_and {
  Ty operator()(Ty a, Ty b) const { return a & b; }
};
template <class Ty>
struct bit_or {
  Ty operator()(Ty a, Ty b) const { return a | b; }
};
template <class Ty>
struct bit_xor {
  Ty operator()(Ty a, Ty b) const { return a ^ b; }
};

namespace details {

template <class G>
inline constexpr bool is_collective_group =
    is_tile<remove_qual<G>>::value || std::is_same_v<remove_qual<G>, coalesced_group>;

// The toolkit's scans (coalesced_scan.h): Hillis-Steele by rank, each step op(own, lower).
template <class Group, class T, class Op>
auto scan_contiguous(const Group& g, T val, Op& op) -> decltype(op(val, val)) {
  auto out = val;
  for (unsigned int step = 1; step < g.size(); step <<= 1) {
    auto lower = g.shfl_up(out, step);
    if (step <= g.thread_rank()) out = op(out, lower);
  }
  return out;
}
template <class T, class Op>
auto scan_non_contiguous(const coalesced_group& g, T val, Op& op) -> decltype(op(val, val)) {
  const unsigned int mask = access::mask(g), rank = g.thread_rank(), me = ::kjh::groups::lane();
  auto out = val;
  for (unsigned int step = 1; step < g.size(); step <<= 1) {
    // The member `step` ranks below: the toolkit's binary search finds the same lane.
    const unsigned int from =
        step <= rank ? ::kjh::groups::nth_set_bit(mask, me, -static_cast<int>(step) - 1) : me;
    auto lower = ::kjh::groups::shuffle(mask, out, from);
    if (step <= rank) out = op(out, lower);
  }
  return out;
}
template <unsigned int Size, class P, class T, class Op>
auto inclusive(const thread_block_tile<Size, P>& g, T val, Op& op) -> decltype(op(val, val)) {
  return details::scan_contiguous(g, val, op);
}
template <class T, class Op>
auto inclusive(const coalesced_group& g, T val, Op& op) -> decltype(op(val, val)) {
  if (g.size() == 32) return details::scan_contiguous(g, val, op);
  return details::scan_non_contiguous(g, val, op);
}

// Tiles: a butterfly of shfl_xor from half the tile down (coalesced_reduce.h). A partial
// coalesced group: the inclusive scan's last value.
template <unsigned int Size, class P, class T, class Op>
auto reduce(const thread_block_tile<Size, P>& g, T val, Op& op) -> decltype(op(val, val)) {
  auto out = val;
  for (int m = Size >> 1; m > 0; m >>= 1)
    out = op(out, g.shfl_xor(out, static_cast<unsigned int>(m)));
  return out;
}
template <class T, class Op>
auto reduce(const coalesced_group& g, T val, Op& op) -> decltype(op(val, val)) {
  if (g.size() == 32) return details::reduce(access::tile<32, thread_block>(), val, op);
  const auto scanned = scan_non_contiguous(g, val, op);
  const unsigned int mask = access::mask(g);
  return ::kjh::groups::shuffle(mask, scanned,
                                31u - static_cast<unsigned int>(__builtin_clz(mask)));
}

} // namespace details

template <class TyGroup, class TyVal, class TyFn>
auto reduce(const TyGroup& group, TyVal&& val, TyFn&& op) -> decltype(op(val, val)) {
  static_assert(details::is_collective_group<TyGroup>,
                "This group does not exclusively represent a tile");
  return details::reduce(group, static_cast<details::remove_qual<TyVal>>(val), op);
}

template <class TyGroup, class TyVal, class TyFn>
auto inclusive_scan(const TyGroup& group, TyVal&& val, TyFn&& op) -> decltype(op(val, val)) {
  static_assert(details::is_collective_group<TyGroup>,
                "This group does not exclusively represent a tile");
  return details::inclusive(group, static_cast<details::remove_qual<TyVal>>(val), op);
}
template <class TyGroup, class TyVal>
details::remove_qual<TyVal> inclusive_scan(const TyGroup& group, TyVal&& val) {
  return inclusive_scan(group, std::forward<TyVal>(val), plus<details::remove_qual<TyVal>>());
}

// Exclusive: integers under plus subtract their own value; anything else takes the lower rank's
// inclusive result, the first rank a value-initialised one.
template <class TyGroup, class TyVal, class TyFn>
auto exclusive_scan(const TyGroup& group, TyVal&& val, TyFn&& op) -> decltype(op(val, val)) {
  using T = details::remove_qual<TyVal>;
  auto result = inclusive_scan(group, val, op);
  if constexpr (std::is_same_v<details::remove_qual<TyFn>, plus<T>> && std::is_integral_v<T>) {
    return result - val;
  } else {
    auto lower = group.shfl_up(result, 1);
    if (group.thread_rank() == 0) return decltype(result){};
    return lower;
  }
}
template <class TyGroup, class TyVal>
details::remove_qual<TyVal> exclusive_scan(const TyGroup& group, TyVal&& val) {
  return exclusive_scan(group, std::forward<TyVal>(val), plus<details::remove_qual<TyVal>>());
}

template <class TyGroup, class TyVal, class TyInputVal, class TyFn>
void reduce_store_async(const TyGroup& group, TyVal* dst, TyInputVal&& val, TyFn&& op) {
  auto result = reduce(group, std::forward<TyInputVal>(val), op);
  if (group.thread_rank() == 0) *dst = result;
}

} // namespace cooperative_groups
