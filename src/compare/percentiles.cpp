// Exact percentiles by selection: the host definition of p50/p99/p99.9/max that the GPU
// comparator's binned histogram approximates, so the two can be tested against each other.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kjudge/compare.hpp"
#include "percentiles.hpp"

namespace kj {

namespace {

// Rank ceil(q*n) - 1 for q = num/den, in integers: q is not exact in binary, and the rank at an
// exact multiple (q*n an integer) must not depend on which way q*n rounds.
std::size_t rank_of(std::size_t n, std::uint64_t num, std::uint64_t den) {
  const std::uint64_t r = (static_cast<std::uint64_t>(n) * num + den - 1) / den;
  return r == 0 ? 0 : static_cast<std::size_t>(r - 1);
}

// A double's place in the order of doubles as an unsigned integer: negatives have all bits
// flipped, the rest their sign bit set. Integer order is then value order (with -0 just below
// +0, which compare equal, so either is a correct answer).
std::uint64_t key_of(double v) {
  const auto u = std::bit_cast<std::uint64_t>(v);
  return (u >> 63) != 0 ? ~u : u | (std::uint64_t{1} << 63);
}

double value_of(std::uint64_t k) {
  return std::bit_cast<double>((k >> 63) != 0 ? k & ~(std::uint64_t{1} << 63) : ~k);
}

constexpr int kDigitBits = 16;
constexpr std::size_t kBuckets = std::size_t{1} << kDigitBits;
constexpr std::size_t kSmall = 4096; // below this, plain nth_element

// The key of rank `rank` (0-based, ascending) among keys, which it reorders: each pass counts
// one 16-bit digit below `shift` and keeps only the bucket holding the rank at the front.
std::uint64_t select_key(std::vector<std::uint64_t>& keys, std::size_t rank, int shift) {
  std::vector<std::size_t> count(kBuckets);
  std::size_t size = keys.size();
  for (; shift >= 0 && size > kSmall; shift -= kDigitBits) {
    std::fill(count.begin(), count.end(), 0);
    for (std::size_t i = 0; i < size; ++i)
      ++count[(keys[i] >> shift) & (kBuckets - 1)];
    std::size_t b = 0;
    while (rank >= count[b])
      rank -= count[b++];
    if (count[b] == size) continue; // one bucket holds them all: nothing to drop
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size; ++i)
      if (((keys[i] >> shift) & (kBuckets - 1)) == b) keys[kept++] = keys[i];
    size = kept;
  }
  const auto first = keys.begin();
  std::nth_element(first, first + static_cast<std::ptrdiff_t>(rank),
                   first + static_cast<std::ptrdiff_t>(size));
  return keys[rank];
}

Percentiles small_percentiles(std::vector<double>& values) {
  Percentiles p;
  const std::size_t n = values.size();
  const std::size_t r50 = rank_of(n, 50, 100);
  const std::size_t r99 = rank_of(n, 99, 100);
  const std::size_t r999 = rank_of(n, 999, 1000);
  // Each selection narrows the range of the next: ranks only grow.
  auto first = values.begin();
  std::nth_element(first, first + static_cast<std::ptrdiff_t>(r50), values.end());
  p.p50 = values[r50];
  std::nth_element(first + static_cast<std::ptrdiff_t>(r50),
                   first + static_cast<std::ptrdiff_t>(r99), values.end());
  p.p99 = values[r99];
  std::nth_element(first + static_cast<std::ptrdiff_t>(r99),
                   first + static_cast<std::ptrdiff_t>(r999), values.end());
  p.p999 = values[r999];
  p.max = *std::max_element(first + static_cast<std::ptrdiff_t>(r999), values.end());
  return p;
}

} // namespace

Percentiles exact_percentiles(std::vector<double> values) {
  return exact_percentiles_in_place(values);
}

Percentiles exact_percentiles_in_place(std::vector<double>& values) {
  Percentiles p;
  if (values.empty()) return p;
  // A strict weak order needs no NaN; a NaN counts as the largest value so a broken
  // measurement shows at the top instead of vanishing.
  for (double& v : values)
    if (std::isnan(v)) v = std::numeric_limits<double>::infinity();
  const std::size_t n = values.size();
  if (n <= kSmall) return small_percentiles(values);

  // Large inputs: repeated nth_element over millions of doubles took most of the comparator's
  // time, so select by radix instead. One pass counts the top 16 bits of every key and keeps
  // each bucket's smallest and largest key; a rank whose bucket holds one value (all-zero
  // errors, the common case) is answered from that, otherwise the bucket's keys are gathered
  // and narrowed further by select_key.
  std::vector<std::size_t> count(kBuckets, 0);
  std::vector<std::uint64_t> lo(kBuckets, ~std::uint64_t{0}), hi(kBuckets, 0);
  const int top = 64 - kDigitBits;
  for (const double v : values) {
    const std::uint64_t k = key_of(v);
    const std::size_t b = static_cast<std::size_t>(k >> top);
    ++count[b];
    lo[b] = std::min(lo[b], k);
    hi[b] = std::max(hi[b], k);
  }
  const std::array<std::size_t, 3> ranks = {rank_of(n, 50, 100), rank_of(n, 99, 100),
                                            rank_of(n, 999, 1000)};
  std::array<std::size_t, 3> bucket{}, rank_in{};
  std::array<double, 3> result{};
  std::array<bool, 3> done{};
  for (std::size_t q = 0; q < ranks.size(); ++q) {
    std::size_t b = 0, r = ranks[q];
    while (r >= count[b])
      r -= count[b++];
    bucket[q] = b;
    rank_in[q] = r;
    done[q] = lo[b] == hi[b];
    if (done[q]) result[q] = value_of(lo[b]);
  }
  for (std::size_t q = 0; q < ranks.size(); ++q) {
    if (done[q]) continue;
    std::vector<std::uint64_t> keys;
    keys.reserve(count[bucket[q]]);
    for (const double v : values) {
      const std::uint64_t k = key_of(v);
      if ((k >> top) == bucket[q]) keys.push_back(k);
    }
    result[q] = value_of(select_key(keys, rank_in[q], top - kDigitBits));
  }
  p.p50 = result[0];
  p.p99 = result[1];
  p.p999 = result[2];
  std::size_t b = kBuckets - 1;
  while (count[b] == 0)
    --b;
  p.max = value_of(hi[b]);
  return p;
}

} // namespace kj
