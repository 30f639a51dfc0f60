// HostTensor: a zero-filled row-major buffer whose elements move in and out as double. Each
// element is read and written with memcpy, so the byte vector needs no particular alignment and
// no type punning is involved; narrow floats are stored as their bit patterns, which is what a
// device buffer of __half, __nv_bfloat16 or __nv_fp8_* holds.
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "kjudge/error.hpp"
#include "kjudge/rounding.hpp"
#include "kjudge/tensor.hpp"

namespace kj {

namespace {

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void store(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// An int64 as a double rounded to odd (truncate, then set the last bit when inexact). Rounding
// that once more to a narrower format is correct rounding of the integer itself; a plain
// conversion would round twice for values beyond 2^53.
double int64_to_double_odd(std::int64_t v) {
  const std::uint64_t mag = v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v)
                                  : static_cast<std::uint64_t>(v);
  int shift = 0;
  while ((mag >> shift) >= (std::uint64_t{1} << 53)) ++shift;
  std::uint64_t kept = mag >> shift;
  if (shift > 0 && (mag & ((std::uint64_t{1} << shift) - 1u)) != 0u) kept |= 1u;
  const double a = std::ldexp(static_cast<double>(kept), shift);
  return v < 0 ? -a : a;
}

}  // namespace

HostTensor::HostTensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)), numel_(checked_numel(shape_)) {
  const std::size_t size = dtype_size(dtype_);
  const auto n = static_cast<std::size_t>(numel_);
  if (n > std::numeric_limits<std::size_t>::max() / size)
    throw SizeOverflow(
        fmt::format("a {} tensor of shape {} overflows the byte count", dtype_name(dtype_),
                    shape_string(shape_)));
  bytes_.assign(n * size, std::byte{0});
}

double HostTensor::get(std::int64_t i) const {
  KJ_EXPECTS(i >= 0 && i < numel_, fmt::format("index {} below numel {}", i, numel_));
  const std::byte* p = bytes_.data() + static_cast<std::size_t>(i) * dtype_size(dtype_);
  switch (dtype_) {
    case DType::f64: return load<double>(p);
    case DType::f32: return static_cast<double>(load<float>(p));
    // rounding.hpp's decoders are exact and cheaper than the generic decode_bits.
    case DType::f16: return static_cast<double>(f16_bits_to_float(load<std::uint16_t>(p)));
    case DType::bf16: return static_cast<double>(bf16_bits_to_float(load<std::uint16_t>(p)));
    case DType::fp8e4m3:
    case DType::fp8e5m2: return decode_bits(dtype_, load<std::uint8_t>(p));
    case DType::i64: return static_cast<double>(load<std::int64_t>(p));
    case DType::i32: return static_cast<double>(load<std::int32_t>(p));
    case DType::i16: return static_cast<double>(load<std::int16_t>(p));
    case DType::i8: return static_cast<double>(load<std::int8_t>(p));
    case DType::u8: return static_cast<double>(load<std::uint8_t>(p));
    case DType::boolean: return load<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
  }
  KJ_EXPECTS(false, "a DType value from the enum");
  return 0.0;
}

void HostTensor::set(std::int64_t i, double v) {
  KJ_EXPECTS(i >= 0 && i < numel_, fmt::format("index {} below numel {}", i, numel_));
  std::byte* p = bytes_.data() + static_cast<std::size_t>(i) * dtype_size(dtype_);
  // encode_bits rounds by itself; round_to leaves a value that the storage type holds
  // exactly, so the casts below are exact.
  switch (dtype_) {
    case DType::f16:
    case DType::bf16: return store(p, static_cast<std::uint16_t>(encode_bits(dtype_, v)));
    case DType::fp8e4m3:
    case DType::fp8e5m2: return store(p, static_cast<std::uint8_t>(encode_bits(dtype_, v)));
    default: break;
  }
  const double r = round_to(dtype_, v);
  switch (dtype_) {
    case DType::f64: return store(p, r);
    case DType::f32: return store(p, static_cast<float>(r));
    case DType::i64: return store(p, static_cast<std::int64_t>(r));
    case DType::i32: return store(p, static_cast<std::int32_t>(r));
    case DType::i16: return store(p, static_cast<std::int16_t>(r));
    case DType::i8: return store(p, static_cast<std::int8_t>(r));
    case DType::u8: return store(p, static_cast<std::uint8_t>(r));
    case DType::boolean: return store(p, static_cast<std::uint8_t>(r != 0.0 ? 1 : 0));
    default: break;  // the narrow floats, stored above
  }
}

HostTensor HostTensor::converted(DType to) const {
  HostTensor out(to, shape_);
  if (to == dtype_) {  // bit copy: keeps NaN payloads and i64 values beyond 2^53
    out.bytes_ = bytes_;
    return out;
  }
  for (std::int64_t i = 0; i < numel_; ++i) {
    if (dtype_ == DType::i64 && to != DType::f64) {
      const auto v = load<std::int64_t>(bytes_.data() + static_cast<std::size_t>(i) * 8u);
      out.set(i, int64_to_double_odd(v));
    } else {
      out.set(i, get(i));
    }
  }
  return out;
}

}  // namespace kj
