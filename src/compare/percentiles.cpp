// Exact percentiles by selection: the host definition of p50/p99/p99.9/max that the GPU
// comparator's binned histogram approximates, so the two can be tested against each other.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kjudge/compare.hpp"

namespace kj {

namespace {

// Rank ceil(q*n) - 1 for q = num/den, in integers: q is not exact in binary, and the rank at an
// exact multiple (q*n an integer) must not depend on which way q*n rounds.
std::size_t rank_of(std::size_t n, std::uint64_t num, std::uint64_t den) {
  const std::uint64_t r = (static_cast<std::uint64_t>(n) * num + den - 1) / den;
  return r == 0 ? 0 : static_cast<std::size_t>(r - 1);
}

} // namespace

Percentiles exact_percentiles(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  // nth_element needs a strict weak order, which NaN breaks; a NaN counts as the largest value
  // so a broken measurement shows at the top instead of vanishing.
  for (double& v : values)
    if (std::isnan(v)) v = std::numeric_limits<double>::infinity();

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

} // namespace kj
