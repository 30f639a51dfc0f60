// What the comparator's two halves share for their findings: how values, indices, counts and
// percentages read in a message, the log error ratio's clamp, and the SpecError of a bad policy.
// policies.cpp (the policies judged on the host element by element) and pass.cpp (the policies
// judged from one pass, on the host or the GPU) write their messages with these.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "kjudge/error.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"

namespace kj::compare_format {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// log_error_ratio is clamped to this range: log10(0) for an error-free output would be -inf,
// and a non-finite failure has no finite ratio; JSON and rewards need finite numbers.
inline constexpr double kLogRatioMin = -12.0;
inline constexpr double kLogRatioMax = 12.0;
inline constexpr std::size_t kReportMax = 10; // first mismatches and worst slices kept

[[noreturn]] inline void spec_fail(const OutputSpec& spec, const std::string& what) {
  throw SpecError(spec.where, fmt::format("output '{}': {}", spec.name, what));
}

// error / allowed, with 0 for no error and Inf for an error where nothing (or NaN) is allowed;
// a NaN error is the worst case.
inline double safe_ratio(double error, double allowed) {
  if (std::isnan(error)) return kInf;
  if (error == 0) return 0;
  if (!(allowed > 0)) return kInf;
  return error / allowed;
}

inline double clamp_log_ratio(double ratio) {
  if (!(ratio > 0)) return kLogRatioMin;
  return std::clamp(std::log10(ratio), kLogRatioMin, kLogRatioMax);
}

// The finding's log10(error / allowed): +max for a non-finite failure, and its sign always the
// verdict's (<= 0 passes), whatever rounding did.
inline double log_error_ratio(double ratio, bool nonfinite_failure, bool pass) {
  double l = nonfinite_failure ? kLogRatioMax : clamp_log_ratio(ratio);
  if (pass)
    l = std::min(l, 0.0);
  else if (!(l > 0))
    l = std::numeric_limits<double>::min();
  return l;
}

// A value as a reader wants it: a float value in float's shortest form (so 0.1f reads "0.1"),
// anything else in double's.
inline std::string show(double v) {
  if (std::isfinite(v) && std::fabs(v) <= static_cast<double>(std::numeric_limits<float>::max())) {
    const float f = static_cast<float>(v);
    if (static_cast<double>(f) == v) return fmt::format("{}", f);
  }
  return fmt::format("{}", v);
}

inline std::string show_index(const Shape& shape, std::int64_t flat) {
  const auto idx = unravel(shape, flat);
  std::string out = "[";
  for (std::size_t d = 0; d < idx.size(); ++d)
    out += fmt::format("{}{}", d ? ", " : "", idx[d]);
  return out + "]";
}

inline std::string show_percent(std::int64_t part, std::int64_t whole) {
  const double pct = whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
  return pct < 10 ? fmt::format("{:.2g}%", pct) : fmt::format("{:.1f}%", pct);
}

inline std::string plural(std::int64_t count, const char* one, const char* many) {
  return fmt::format("{} {}", count, count == 1 ? one : many);
}

// The non-finite rules' message parts, worded alike by both halves: non-finite candidate values
// where the rounded golden allows none (where the first is, what was found and what was
// expected: the expected value, not a bound, which says nothing of an element no finite value
// could meet), and finite values where the rounded golden is not finite (`first`: "index: c vs e").
inline std::string nonfinite_part(std::int64_t count, const std::string& first_index, double found,
                                  double expected, bool against_golden, DType dtype,
                                  std::string_view reference_name) {
  return fmt::format(
      "{} where the rounded golden does not allow {}; first at {}: found {}, expected {} ({})",
      plural(count, "non-finite value", "non-finite values"), count == 1 ? "it" : "them",
      first_index, show(found), show(expected),
      against_golden ? fmt::format("the golden rounded to {}", dtype_name(dtype))
                     : fmt::format("the {}", reference_name));
}
inline std::string finite_where_not_part(std::int64_t count, const std::string& first) {
  return fmt::format("{} where the rounded golden is not finite; first at {}",
                     plural(count, "finite value", "finite values"), first);
}

} // namespace kj::compare_format
