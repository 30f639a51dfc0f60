// Host entry points of the Philox stream. The arithmetic lives in detail/philox_impl.hpp so the
// device compiles the very same code; these wrappers only translate to the std types of
// inputs.hpp.
#include "kjudge/detail/philox_impl.hpp"
#include "kjudge/inputs.hpp"

namespace kj {

std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter,
                                           std::array<std::uint32_t, 2> key) {
  const detail::philox_block in{{counter[0], counter[1], counter[2], counter[3]}};
  const detail::philox_block out = detail::philox4x32_10(in, key[0], key[1]);
  return {out.w[0], out.w[1], out.w[2], out.w[3]};
}

std::array<std::uint32_t, 4> element_words(StreamId stream, std::int64_t element) {
  KJ_EXPECTS(element >= 0, "element index is a flat offset");
  const detail::philox_block b = detail::element_block(
      stream.seed, stream.input_index, stream.visit, static_cast<unsigned long long>(element));
  return {b.w[0], b.w[1], b.w[2], b.w[3]};
}

double uniform_open01(std::uint32_t hi, std::uint32_t lo) { return detail::uniform_open(hi, lo); }

}  // namespace kj
