// Input generation. Values come from counter-based Philox4x32-10 streams, so any element of any
// case can be produced on its own, on the host or the device, with the same bits. Float
// distributions (Box-Muller, Pareto) use kjudge's own log and sincos built only from + - * and
// fma (this module is compiled with -ffp-contract=off), so the device reproduces them exactly.
// Also: transforms, special values, saturation to the dtype's finite range, and .npy files.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include "kjudge/rounding.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"

namespace kj {

// One Philox4x32-10 block: 4 random words from a 128-bit counter and a 64-bit key.
std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter,
                                           std::array<std::uint32_t, 2> key);

// kjudge's own elementary functions, in double, from + - * and fma only; the device build uses
// the same source (detail/kjmath_impl.hpp), so results are bit-identical. Accuracy: a few ulp.
double kj_log(double x);                          // x > 0
void kj_sincos(double x, double* s, double* c);   // |x| <= 2*pi is the range used

// Where a tensor's random words come from: the stream of (seed, input index, visit).
// Element e uses word e % 4 of block e / 4 with counter {e/4 lo, e/4 hi, input_index, visit}
// and key {seed lo, seed hi}. `visit` is the Philox offset bench bumps to regenerate inputs.
struct StreamId {
  std::uint64_t seed = 0;
  std::uint32_t input_index = 0;
  std::uint32_t visit = 0;
};

// A transform of one float input: x -> factor * x (3, 0.01, -1), or identity.
struct Transform {
  std::string input;   // empty = identity
  double factor = 1;
  std::string label() const;  // "id", "x*3", "x*0.01", "x*-1"
};

// Special values planted in one float input for a special-value case.
enum class SpecialKind { nan, pos_inf, neg_inf, neg_zero, subnormal, dtype_max };
std::string_view special_kind_name(SpecialKind k);
// Whether a domain admits the special value (NaN and -Inf only in `any`, ...).
bool domain_admits(Domain domain, SpecialKind kind);

struct SpecialValues {
  std::string input;
  SpecialKind kind;
  // Planted at a deterministic, spread set of positions (first, last, and every stride-th).
};

// Generate one input tensor: draw from the distribution (widened to double), apply the
// transform, saturate to the dtype's finite range, round to the dtype, then plant special
// values. `dir` resolves file("x.npy") distributions.
HostTensor generate_input(const InputSpec& spec, const Shape& shape, StreamId stream,
                          const Transform& transform = {},
                          const SpecialValues* special = nullptr,
                          const std::filesystem::path& dir = {});

// .npy (format 1.0/2.0/3.0, little-endian, C order) for every dtype of tensor.hpp; bf16 and fp8
// are written with numpy-compatible descriptors used by ml_dtypes ("<V2" is not used: bf16 is
// stored as '<u2' with a "kjudge_dtype" note only when asked). Throws SpecError naming the file.
HostTensor read_npy(const std::filesystem::path& path);
void write_npy(const std::filesystem::path& path, const HostTensor& tensor);

}  // namespace kj
