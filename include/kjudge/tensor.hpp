// Dtypes, shapes and host tensors: the vocabulary every other module speaks. A HostTensor is a
// typed, row-major block of bytes; values move in and out of it as double, rounded to the
// tensor's dtype to nearest even (overflow to Inf where the dtype has one, saturating for fp8
// e4m3, which has none). Rounding goes from double straight to the target format, never
// through f32, so there is no double rounding, and it does not depend on the FPU's rounding
// mode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kj {

enum class DType { f64, f32, f16, bf16, fp8e4m3, fp8e5m2, i64, i32, i16, i8, u8, boolean };

// "f32" -> DType::f32; nullopt for an unknown name. `bool` is spelled "bool".
std::optional<DType> parse_dtype(std::string_view name);
std::string_view dtype_name(DType t);
std::size_t dtype_size(DType t);
bool is_float(DType t);    // f64 f32 f16 bf16 fp8*
bool is_integer(DType t);  // i* u8 bool
// The C++ parameter type a kernel uses for a tensor of this dtype ("float", "__half",
// "__nv_bfloat16", "__nv_fp8_e4m3", "long long"...); for the launch-plan ABI checks.
std::string_view dtype_cxx_name(DType t);

// Properties of a float dtype's format, for floors, ulps and rounding.
struct FloatFormat {
  int mantissa_bits;  // explicit fraction bits: f32 23, f16 10, bf16 7, e4m3 3, e5m2 2, f64 52
  int exponent_bits;
  bool has_inf;       // false for fp8 e4m3 (NaN only)
  double max_finite;  // largest finite value
  double min_normal;  // smallest positive normal
  double min_subnormal;
};
FloatFormat float_format(DType t);  // precondition: is_float(t)
// TF32, which is not a storage dtype but a rounding of f32 values (tensor cores, the audit's
// downgrades): 10 mantissa bits, f32's exponent range, subnormals and Inf.
FloatFormat tf32_format();

// Round a double to the dtype's value set, to nearest even, without double rounding (never via
// f32 for the narrow types). -0 stays -0 and NaN stays NaN.
// - Float formats with Inf (f64 f32 f16 bf16 e5m2): values at or above max + half an ulp at
//   max round to ±Inf, as IEEE does; values between max and that threshold round to ±max.
// - fp8 e4m3 (OCP FP8: bias 7, max 448, no Inf, NaN = S.1111.111): anything that rounds above
//   448, ±Inf included, saturates to ±448 (CUDA's __NV_SATFINITE behaviour), so a finite golden
//   never becomes NaN by rounding.
// - Integers: round to nearest even, then saturate to the dtype's range (a wrap would be
//   undefined); NaN gives 0 and -0 gives +0. i64 saturates to [-2^63, 2^63 - 1024], the
//   doubles in its range.
// - bool: 1 where x != 0 (NaN included, as a C++ conversion does), else 0.
double round_to(DType t, double x);
// The same for any binary format described by a FloatFormat (e.g. tf32_format()); overflow per
// f.has_inf as above.
double round_to_format(const FloatFormat& f, double x);
// round_to_format, but a finite value that would overflow gives ±max_finite.
double round_to_format_saturating(const FloatFormat& f, double x);
// The same, in place, on f32 values (for a format of fewer mantissa bits): whether any changed.
// Formats with f32's exponent range (tf32, bf16) round by the bits, exactly as the scalar form;
// the audit rounds 131M-element inputs this way.
bool round_to_format_saturating(const FloatFormat& f, std::span<float> values);

// Bit patterns of the float dtypes up to 32 bits (f32 f16 bf16 fp8e4m3 fp8e5m2), in the low
// bits of the result. encode_bits rounds first (round_to), then encodes exactly; a NaN encodes
// as the quiet NaN of its sign (e4m3: S.1111.111). decode_bits is exact; precondition: the
// pattern fits the dtype's width.
std::uint32_t encode_bits(DType t, double x);
double decode_bits(DType t, std::uint32_t bits);

// One unit in the last place of the dtype at magnitude |x|: the spacing of representable values
// around x (for x = 0, the smallest subnormal): for |x| in [2^e, 2^(e+1)) it is
// 2^(e - mantissa_bits), never below the smallest subnormal. Always finite and > 0 for float
// dtypes. Integers: 1. Inf, NaN and values beyond max take the spacing at max.
double ulp_of(DType t, double x);

// Number of representable values of dtype t between a and b (both finite, already in t's value
// set); the "ulp distance" of numerics.md. Signed zeros count as one value. ±Inf (for dtypes
// that have it) counts as one step beyond ±max; a NaN argument gives NaN, so a check written
// `!(d <= bound)` fails. Integers: |a - b|. Precondition: a and b are in t's value set.
double ulp_distance(DType t, double a, double b);

using Shape = std::vector<std::int64_t>;

// Product of the dims; throws SizeOverflow (kjudge/error.hpp) on 64-bit overflow or a negative
// dim, so callers can attach a location.
std::int64_t checked_numel(const Shape& shape);
// Bytes of a dense tensor of this dtype and shape (checked_numel's throws).
std::size_t tensor_bytes(DType dtype, const Shape& shape);
std::string shape_string(const Shape& shape);  // "[4096, 4096]"
// Multi-dimensional index of a flat row-major offset.
std::vector<std::int64_t> unravel(const Shape& shape, std::int64_t flat);

class HostTensor {
public:
  HostTensor() = default;
  HostTensor(DType dtype, Shape shape);  // zero-filled

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::int64_t numel() const { return numel_; }
  std::size_t nbytes() const { return bytes_.size(); }
  std::span<std::byte> bytes() { return bytes_; }
  std::span<const std::byte> bytes() const { return bytes_; }

  // Element i as double (exact for every dtype but i64 beyond 2^53). Storage: f16/bf16 as
  // their uint16 bits, fp8 as uint8 bits, bool as one byte 0/1, the rest as the C++ type.
  // Precondition for get/set: 0 <= i < numel().
  double get(std::int64_t i) const;
  // Store round_to(dtype, v).
  void set(std::int64_t i, double v);
  // Raw access; T must have the dtype's size.
  template <class T>
  T* data() { return reinterpret_cast<T*>(bytes_.data()); }
  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(bytes_.data()); }

  // A copy of this tensor's values in another dtype (each value through round_to, rounded
  // once: i64 values beyond 2^53 go through a round-to-odd double first).
  HostTensor converted(DType to) const;

private:
  DType dtype_ = DType::f32;
  Shape shape_;
  std::int64_t numel_ = 0;
  std::vector<std::byte> bytes_;
};

}  // namespace kj
