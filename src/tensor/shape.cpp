// Shapes: element counts that refuse to overflow, byte counts, printing, and
// flat-to-multi-dimensional indices for the mismatch reports.
#include <stdexcept>

#include "kjudge/error.hpp"
#include "kjudge/tensor.hpp"

namespace kj {

std::int64_t checked_numel(const Shape& shape) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d < 0)
      throw SizeOverflow(
          fmt::format("negative dimension {} in shape {}", d, shape_string(shape)));
    if (__builtin_mul_overflow(n, d, &n))
      throw SizeOverflow(
          fmt::format("element count of shape {} overflows 64 bits", shape_string(shape)));
  }
  return n;
}

std::size_t tensor_bytes(DType dtype, const Shape& shape) {
  return static_cast<std::size_t>(checked_numel(shape)) * dtype_size(dtype);
}

std::string shape_string(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::vector<std::int64_t> unravel(const Shape& shape, std::int64_t flat) {
  const std::int64_t n = checked_numel(shape);
  KJ_EXPECTS(flat >= 0 && flat < n,
             fmt::format("flat index {} inside shape {}", flat, shape_string(shape)));
  std::vector<std::int64_t> index(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    index[k] = flat % shape[k];
    flat /= shape[k];
  }
  return index;
}

}  // namespace kj
