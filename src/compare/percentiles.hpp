// exact_percentiles on a vector it may reorder, so a caller can keep the vector's memory.
#pragma once

#include <vector>

#include "kjudge/compare.hpp"

namespace kj {

Percentiles exact_percentiles_in_place(std::vector<double>& values);

} // namespace kj
