// Input generation. Values come from counter-based Philox4x32-10 streams, so any element of any
// case can be produced on its own, on the host or the device, with the same bits. Float
// distributions (Box-Muller, Pareto) use kjudge's own log and sincos built only from + - * and
// fma (this module is compiled with -ffp-contract=off), so the device reproduces them exactly.
// Also: transforms, special values, saturation to the dtype's finite range, and .npy files.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "kjudge/rounding.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"

namespace kj {

// One Philox4x32-10 block: 4 random words from a 128-bit counter and a 64-bit key.
std::array<std::uint32_t, 4> philox4x32_10(std::array<std::uint32_t, 4> counter,
                                           std::array<std::uint32_t, 2> key);

// kjudge's own elementary functions, in double, from + - *, correctly rounded / and sqrt, and
// bit manipulation; the device build uses the same source (detail/kjmath_impl.hpp), so results
// are bit-identical (checked on an H200 over 2^24 points each). Accuracy: within 1 ulp of glibc
// on 2e7 points each; the unit tests check 2 ulp over millions of points.
// kj_log: x > 0 (subnormals too); 0 -> -inf, +inf -> +inf, x < 0 or NaN -> NaN.
// kj_sincos: accurate for |x| <= 2^20 (the generator uses |x| < 2*pi); inf/NaN -> NaN.
// kj_exp: for Pareto draws; overflow -> +inf, underflow -> 0 (subnormal results may be off by
// one more ulp).
double kj_log(double x);
void kj_sincos(double x, double* s, double* c);
double kj_exp(double x);

// Where a tensor's random words come from: the stream of (seed, input index, visit).
// Element e (flat row-major index) owns one whole Philox block, with counter
// {e lo32, e hi32, input_index, visit} and key {seed lo32, seed hi32}; every distribution then
// uses words w0..w3 of that block as detail/philox_impl.hpp documents:
//   u(a, b)   = (2m + 1) / 2^53, m = top 52 bits of (a << 32 | b): in (0, 1), exact
//   normal    = mean + std * sqrt(-2 kj_log u(w0, w1)) * cos(2 pi u(w2, w3))   (Box-Muller)
//   uniform   = lo + (hi - lo) * u(w0, w1)
//   int       = lo + ((w0 << 32 | w1) mod (hi - lo + 1))
//   bernoulli = u(w0, w1) < p
//   pareto    = kj_exp(kj_log u(w0, w1) * (-1 / alpha))
//   const(v) = v, arange = e; neither uses the stream.
// `visit` is the Philox offset bench bumps to regenerate inputs.
struct StreamId {
  std::uint64_t seed = 0;
  std::uint32_t input_index = 0;
  std::uint32_t visit = 0;
};

// The four words of element `element`'s block.
std::array<std::uint32_t, 4> element_words(StreamId stream, std::int64_t element);
// u(hi, lo) above: a double in the open interval (0, 1).
double uniform_open01(std::uint32_t hi, std::uint32_t lo);
// The value element `element` draws from a distribution, in double, before transform,
// saturation and rounding (what generate_input starts from). Not for file(): throws
// InternalError. Bad parameters (int(a, b) with b < a or non-integers, pareto(alpha <= 0))
// throw SpecError at `where`.
double draw_element(const Distribution& dist, StreamId stream, std::int64_t element,
                    const Location& where = {});

// A transform of one float input: x -> factor * x + offset (x3, x0.01, x-1; the mutation
// pool's offsets), or identity.
// The spread a mean offset is measured in: normal's sigma, uniform's width; nullopt for the
// other distributions (no offset is drawn for them).
std::optional<double> distribution_spread(const Distribution& d);
// The default cases' mean offset, in spreads.
inline constexpr double kMeanOffsetSpreads = 10;

struct Transform {
  std::string input;   // empty = identity
  double factor = 1;
  double offset = 0;   // added after the factor: a mean far from zero against the spread
  // "id", "x*3", "x*0.01", "x*-1", "x+10", "x-8", "x*3+1" (numbers as printf %g)
  std::string label() const;
};

// Special values planted in one float input for a special-value case.
enum class SpecialKind { nan, pos_inf, neg_inf, neg_zero, subnormal, dtype_max };
std::string_view special_kind_name(SpecialKind k);
// Whether a domain admits the special value:
//   nan, neg_inf: any            pos_inf, dtype_max: any, positive, nonnegative
//   neg_zero: any, nonnegative   subnormal (smallest positive subnormal): all four domains
bool domain_admits(Domain domain, SpecialKind kind);
// Whether the dtype can hold it: float dtypes only, and no infinities in fp8 e4m3.
bool dtype_admits(DType dtype, SpecialKind kind);
// The value planted for `kind` in a tensor of `dtype` (precondition: dtype_admits).
double special_value(DType dtype, SpecialKind kind);

struct SpecialValues {
  std::string input;
  SpecialKind kind;
  // Planted at a deterministic, spread set of positions (first, last, and every stride-th).
};

// The positions special values go to: flat index 0, numel - 1, and every multiple of
// special_stride (a prime, so the positions walk across the columns of power-of-two rows
// instead of staying in one column); about 1/61 of the elements.
inline constexpr std::int64_t special_stride = 61;
bool is_special_position(std::int64_t index, std::int64_t numel);

// Generate one input tensor: draw from the distribution (widened to double), apply the
// transform, saturate to the dtype's finite range, round to the dtype, then plant special
// values. `dir` resolves file("x.npy") distributions.
//  - The transform applies when transform.input names this input and its dtype is a float.
//  - Saturation: floats to +-max finite (NaN kept; non-finite values read from a file are kept
//    too, the author put them there), integers to their range (NaN -> 0).
//  - Special values are planted only when special->input names this input and both
//    domain_admits and dtype_admits hold; otherwise the tensor is left as generated.
//  - file("x.npy"): the array's shape must equal `shape` and its dtype the input's dtype, except
//    that a '<f4' file serves a bf16/fp8 input when every value is exact in it (the form
//    write_npy gives those dtypes); anything else is a SpecError at spec.where.
HostTensor generate_input(const InputSpec& spec, const Shape& shape, StreamId stream,
                          const Transform& transform = {},
                          const SpecialValues* special = nullptr,
                          const std::filesystem::path& dir = {});

// .npy files, little-endian, C order. read_npy accepts format 1.0, 2.0 and 3.0 and the
// descriptors '<f8' '<f4' '<f2' '<i8' '<i4' '<i2' '|i1' '|u1' '|b1' (also '=' as native, '|' or
// '<' on one-byte types, '?' for bool; fortran_order True only where it equals C order, 0-d and
// 1-d); it never yields bf16 or fp8, which numpy has no dtype for. write_npy writes format 1.0
// (2.0 when the header outgrows 64 KiB) with the header padded to 64 bytes as numpy does; bf16
// and fp8 tensors are written as '<f4', which holds every one of their values exactly. Every
// problem (missing file, bad magic, unsupported version or dtype, big-endian data, a header
// numpy would not write, truncated or surplus data, bool bytes other than 0/1) throws SpecError
// whose location is the file.
HostTensor read_npy(const std::filesystem::path& path);
void write_npy(const std::filesystem::path& path, const HostTensor& tensor);

}  // namespace kj
