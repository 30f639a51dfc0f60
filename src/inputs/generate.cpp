// generate_input: one input tensor of one case. Draws come from the Philox stream of
// detail/philox_impl.hpp (each element its own block, so the device can reproduce any element
// alone), then the case's transform, saturation to the dtype's finite range, rounding to the
// dtype, and the special values of special-value cases. Also the small vocabulary around it:
// transform labels, special kinds and which domains and dtypes admit them.
#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "kjudge/detail/philox_impl.hpp"
#include "kjudge/inputs.hpp"

namespace kj {
namespace {

using Kind = Distribution::Kind;

// A distribution with its parameters checked once, drawing element by element.
class Drawer {
public:
  Drawer(const Distribution& dist, StreamId stream, const Location& where)
      : dist_(dist), stream_(stream) {
    switch (dist.kind) {
      case Kind::integer: {
        // 2^63 is exact in double; the range of i64 is [-2^63, 2^63).
        const auto is_i64 = [](double v) {
          return std::floor(v) == v && v >= -0x1p63 && v < 0x1p63;
        };
        if (!is_i64(dist.a) || !is_i64(dist.b))
          throw SpecError(where, fmt::format("{}: the bounds must be integers within 64 bits",
                                             dist.text));
        if (dist.b < dist.a)
          throw SpecError(where, fmt::format("{}: the upper bound is below the lower bound",
                                             dist.text));
        lo_ = static_cast<long long>(dist.a);
        const auto hi = static_cast<long long>(dist.b);
        // Wraps to 0 for the full 64-bit range, which draw_int reads as 2^64.
        span_ = static_cast<unsigned long long>(hi) - static_cast<unsigned long long>(lo_) + 1;
        break;
      }
      case Kind::pareto:
        if (!(dist.a > 0) || !std::isfinite(dist.a))
          throw SpecError(where, fmt::format("{}: alpha must be positive and finite", dist.text));
        break;
      case Kind::file:
        throw InternalError("Drawer: file() inputs are read, not drawn");
      default:
        break;
    }
  }

  double operator()(std::int64_t element) const {
    switch (dist_.kind) {
      case Kind::constant: return dist_.a;
      case Kind::arange: return static_cast<double>(element);
      default: break;
    }
    const detail::philox_block b =
        detail::element_block(stream_.seed, stream_.input_index, stream_.visit,
                              static_cast<unsigned long long>(element));
    switch (dist_.kind) {
      case Kind::normal: return detail::draw_normal(b, dist_.a, dist_.b);
      case Kind::uniform: return detail::draw_uniform(b, dist_.a, dist_.b);
      case Kind::integer: return static_cast<double>(detail::draw_int(b, lo_, span_));
      case Kind::bernoulli: return detail::draw_bernoulli(b, dist_.a);
      case Kind::pareto: return detail::draw_pareto(b, dist_.a);
      default: break;
    }
    throw InternalError("Drawer: unhandled distribution kind");
  }

private:
  const Distribution& dist_;
  StreamId stream_;
  long long lo_ = 0;
  unsigned long long span_ = 0;
};

// The dtype's finite range, for saturation: generated values never overflow to Inf.
struct Range {
  bool floating = true;
  double lo = 0, hi = 0;
  double clamp(double v) const {
    if (std::isnan(v)) return floating ? v : 0.0;
    return v < lo ? lo : (v > hi ? hi : v);
  }
};

Range finite_range(DType t) {
  if (is_float(t)) {
    const double max = float_format(t).max_finite;
    return {true, -max, max};
  }
  switch (t) {
    case DType::i64: return {false, -0x1p63, 0x1.fffffffffffffp62};  // largest double < 2^63
    case DType::i32: return {false, -2147483648.0, 2147483647.0};
    case DType::i16: return {false, -32768.0, 32767.0};
    case DType::i8: return {false, -128.0, 127.0};
    case DType::u8: return {false, 0.0, 255.0};
    case DType::boolean: return {false, 0.0, 1.0};
    default: break;
  }
  KJ_EXPECTS(false, "an integer dtype");
  return {};
}

// Runs body(begin, end) over [0, n) in contiguous chunks on several threads. Every element is
// computed from its own index alone, so the result is the same whatever the split; threads
// only pay off on large tensors (a 4096 x 4096 normal input is ~5 s on one core).
template <class Body>
void parallel_chunks(std::int64_t n, const Body& body) {
  constexpr std::int64_t min_chunk = std::int64_t{1} << 16;
  const auto hw = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t workers = std::min({hw, std::int64_t{32}, (n + min_chunk - 1) / min_chunk});
  if (workers <= 1) {
    body(std::int64_t{0}, n);
    return;
  }
  const std::int64_t per = (n + workers - 1) / workers;
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto run = [&](std::int64_t w) {
    try {
      body(w * per, std::min(n, (w + 1) * per));
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (std::int64_t w = 1; w < workers; ++w) pool.emplace_back(run, w);
    run(0);
  }  // joined here
  if (error) std::rethrow_exception(error);
}

bool is_narrow_float(DType t) {
  return t == DType::bf16 || t == DType::fp8e4m3 || t == DType::fp8e5m2;
}

// The array of a file("x.npy") input, checked against the input's shape and dtype.
HostTensor load_file_input(const InputSpec& spec, const Shape& shape,
                           const std::filesystem::path& dir) {
  const std::filesystem::path path = dir / spec.dist.file;
  HostTensor t = read_npy(path);
  if (t.shape() != shape)
    throw SpecError(spec.where,
                    fmt::format("{} holds an array of shape {}, but input '{}' has shape {} here",
                                path.string(), shape_string(t.shape()), spec.name,
                                shape_string(shape)));
  if (t.dtype() == spec.dtype) return t;
  if (!(is_narrow_float(spec.dtype) && t.dtype() == DType::f32))
    throw SpecError(spec.where, fmt::format("{} holds {} values, but input '{}' is {}",
                                            path.string(), dtype_name(t.dtype()), spec.name,
                                            dtype_name(spec.dtype)));
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get(i);
    if (!std::isnan(v) && round_to(spec.dtype, v) != v)
      throw SpecError(spec.where,
                      fmt::format("{}: element {} ({}) is not a {} value; an f32 file serves a "
                                  "{} input only when every value is exact in {}",
                                  path.string(), i, v, dtype_name(spec.dtype),
                                  dtype_name(spec.dtype), dtype_name(spec.dtype)));
  }
  return t;
}

}  // namespace

std::optional<double> distribution_spread(const Distribution& d) {
  if (d.kind == Kind::normal && d.b > 0) return d.b;
  if (d.kind == Kind::uniform && d.b > d.a) return d.b - d.a;
  return std::nullopt;
}

std::string Transform::label() const {
  if (input.empty()) return "id";
  const std::string scaled = factor == 1 && offset != 0 ? input : fmt::format("{}*{:g}", input, factor);
  if (offset == 0) return scaled;
  return fmt::format("{}{}{:g}", scaled, offset > 0 ? "+" : "", offset);
}

std::string_view special_kind_name(SpecialKind k) {
  switch (k) {
    case SpecialKind::nan: return "nan";
    case SpecialKind::pos_inf: return "pos_inf";
    case SpecialKind::neg_inf: return "neg_inf";
    case SpecialKind::neg_zero: return "neg_zero";
    case SpecialKind::subnormal: return "subnormal";
    case SpecialKind::dtype_max: return "dtype_max";
  }
  return "?";
}

bool domain_admits(Domain domain, SpecialKind kind) {
  switch (kind) {
    case SpecialKind::nan:
    case SpecialKind::neg_inf:
      return domain == Domain::any;
    case SpecialKind::pos_inf:
    case SpecialKind::dtype_max:
      return domain != Domain::unit;
    case SpecialKind::neg_zero:
      return domain == Domain::any || domain == Domain::nonnegative;
    case SpecialKind::subnormal:
      return true;
  }
  return false;
}

bool dtype_admits(DType dtype, SpecialKind kind) {
  if (!is_float(dtype)) return false;
  if (kind == SpecialKind::pos_inf || kind == SpecialKind::neg_inf)
    return float_format(dtype).has_inf;
  return true;
}

double special_value(DType dtype, SpecialKind kind) {
  KJ_EXPECTS(dtype_admits(dtype, kind), "the dtype holds the special value");
  switch (kind) {
    case SpecialKind::nan: return detail::quiet_nan();
    case SpecialKind::pos_inf: return detail::infinity();
    case SpecialKind::neg_inf: return -detail::infinity();
    case SpecialKind::neg_zero: return -0.0;
    case SpecialKind::subnormal: return float_format(dtype).min_subnormal;
    case SpecialKind::dtype_max: return float_format(dtype).max_finite;
  }
  return 0;
}

bool is_special_position(std::int64_t index, std::int64_t numel) {
  if (index < 0 || index >= numel) return false;
  return index % special_stride == 0 || index == numel - 1;
}

double draw_element(const Distribution& dist, StreamId stream, std::int64_t element,
                    const Location& where) {
  KJ_EXPECTS(element >= 0, "element index is a flat offset");
  return Drawer(dist, stream, where)(element);
}

HostTensor generate_input(const InputSpec& spec, const Shape& shape, StreamId stream,
                          const Transform& transform, const SpecialValues* special,
                          const std::filesystem::path& dir) {
  HostTensor out;
  try {
    out = HostTensor(spec.dtype, shape);
  } catch (const SizeOverflow& e) {
    throw SpecError(spec.where, fmt::format("input '{}': {}", spec.name, e.what()));
  }
  const std::int64_t numel = out.numel();
  const DType t = spec.dtype;
  // Transforms are for float inputs only: scaling an index or a mask changes its meaning.
  const bool transformed = is_float(t) && !transform.input.empty() && transform.input == spec.name;
  const double factor = transformed ? transform.factor : 1.0;
  const double offset = transformed ? transform.offset : 0.0;

  const Range range = finite_range(t);
  if (spec.dist.kind == Kind::file) {
    const HostTensor src = load_file_input(spec, shape, dir);
    parallel_chunks(numel, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const double v = src.get(i);
        const double x = transformed ? v * factor + offset : v;
        out.set(i, std::isfinite(v) ? range.clamp(x) : x);
      }
    });
  } else {
    const Drawer draw(spec.dist, stream, spec.where);
    parallel_chunks(numel, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const double v = draw(i);
        out.set(i, range.clamp(transformed ? v * factor + offset : v));
      }
    });
  }

  if (special != nullptr && special->input == spec.name && domain_admits(spec.domain, special->kind) &&
      dtype_admits(t, special->kind) && numel > 0) {
    const double v = special_value(t, special->kind);
    for (std::int64_t i = 0; i < numel; i += special_stride) out.set(i, v);
    out.set(numel - 1, v);
  }
  return out;
}

}  // namespace kj
