// Host-side conclusions from a worker's buffers (findings.hpp).
#include "judge/findings.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "judge/defences.hpp"

namespace kj::judge {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string index_text(const Shape& shape, std::int64_t flat) {
  if (shape.empty()) return fmt::format("#{}", flat);
  return fmt::format("[{}]", fmt::join(unravel(shape, flat), ", "));
}

ElementReport element(const Shape& shape, std::int64_t flat, double value, double expected) {
  ElementReport e;
  e.flat = flat;
  e.index = shape.empty() ? std::vector<std::int64_t>{} : unravel(shape, flat);
  e.value = value;
  e.expected = expected;
  e.error = std::isnan(value) || std::isnan(expected) ? kNaN : std::abs(value - expected);
  e.allowed = kNaN;
  return e;
}

OutputFinding structural(const OutputSpec& spec, const Shape& shape, Reason reason,
                         std::int64_t count, std::string message) {
  OutputFinding f;
  f.output = spec.name;
  f.reason = reason;
  f.message = std::move(message);
  f.count = checked_numel(shape);
  f.mismatches = count;
  f.mismatch_fraction = f.count > 0 ? static_cast<double>(count) / static_cast<double>(f.count) : 0;
  f.bound.policy = reason == Reason::unwritten_output ? "written" : "deterministic";
  f.bound.expected = "every element";
  f.bound.source = reason == Reason::unwritten_output ? "poison left in both runs of the case"
                                                      : "bytes of two runs of the case";
  f.bound.max_error = kNaN;
  f.bound.rms_error = kNaN;
  f.log_error_ratio = 12; // the clamp of a failure that has no error to measure
  return f;
}

} // namespace

RedzoneScan scan_redzones(std::span<const std::byte> before, std::span<const std::byte> after,
                          std::uint8_t fill) {
  RedzoneScan s;
  const auto f = static_cast<std::byte>(fill);
  for (std::size_t i = 0; i < before.size(); ++i) {
    if (before[i] != f) {
      ++s.before;
      s.nearest_before = before.size() - i; // the last damaged byte is the closest
    }
  }
  for (std::size_t i = 0; i < after.size(); ++i) {
    if (after[i] != f) {
      if (s.after == 0) s.first_after = i;
      ++s.after;
    }
  }
  return s;
}

std::string redzone_message(std::string_view role, std::string_view name, const RedzoneScan& s) {
  std::vector<std::string> parts;
  if (s.after > 0)
    parts.push_back(fmt::format("{} byte{} written past its end (the first {} byte{} after it)",
                                s.after, s.after == 1 ? "" : "s", s.first_after,
                                s.first_after == 1 ? "" : "s"));
  if (s.before > 0)
    parts.push_back(fmt::format("{} byte{} written before its start (the nearest {} byte{} "
                                "before it)",
                                s.before, s.before == 1 ? "" : "s", s.nearest_before,
                                s.nearest_before == 1 ? "" : "s"));
  return fmt::format("{} '{}': {}", role, name, fmt::join(parts, " and "));
}

Unwritten find_unwritten(const HostTensor& run0, std::uint32_t pattern0, const HostTensor* run1,
                         std::uint32_t pattern1) {
  Unwritten u;
  for (std::int64_t i = 0; i < run0.numel(); ++i) {
    if (!holds_pattern(run0, i, pattern0)) continue;
    if (run1 && !holds_pattern(*run1, i, pattern1)) continue;
    if (u.first.size() < kFirstShown) u.first.push_back(i);
    ++u.count;
  }
  return u;
}

OutputFinding unwritten_finding(const OutputSpec& spec, const Shape& shape, const Unwritten& u,
                                const HostTensor& actual, const HostTensor* golden) {
  const std::int64_t n = checked_numel(shape);
  OutputFinding f = structural(
      spec, shape, Reason::unwritten_output, u.count,
      fmt::format("{} of {} elements never written (first at {})", u.count, n,
                  u.first.empty() ? std::string("?") : index_text(shape, u.first.front())));
  for (const std::int64_t i : u.first)
    f.first.push_back(element(shape, i, actual.get(i), golden ? golden->get(i) : kNaN));
  if (!f.first.empty()) f.worst = f.first.front();
  return f;
}

Differences find_differences(const HostTensor& a, const HostTensor& b) {
  Differences d;
  const std::size_t size = dtype_size(a.dtype());
  const auto x = a.bytes(), y = b.bytes();
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const std::size_t o = static_cast<std::size_t>(i) * size;
    bool same = true;
    for (std::size_t j = 0; j < size && same; ++j)
      same = x[o + j] == y[o + j];
    if (same) continue;
    if (d.first.size() < kFirstShown) d.first.push_back(i);
    ++d.count;
  }
  return d;
}

OutputFinding nondeterministic_finding(const OutputSpec& spec, const Shape& shape,
                                       const Differences& d, const HostTensor& a,
                                       const HostTensor& b) {
  const std::int64_t n = checked_numel(shape);
  std::string first = "?";
  if (!d.first.empty()) {
    const std::int64_t i = d.first.front();
    first = fmt::format("{}: {:.9g} then {:.9g}", index_text(shape, i), a.get(i), b.get(i));
  }
  OutputFinding f = structural(
      spec, shape, Reason::nondeterministic, d.count,
      fmt::format("{} of {} elements differ between two runs of the same inputs (first at {})",
                  d.count, n, first));
  for (const std::int64_t i : d.first)
    f.first.push_back(element(shape, i, b.get(i), a.get(i)));
  if (!f.first.empty()) f.worst = f.first.front();
  return f;
}

ByteDiff diff_bytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  ByteDiff d;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      if (d.count == 0) d.first = i;
      ++d.count;
    }
  }
  const std::size_t extra = std::max(a.size(), b.size()) - n;
  if (extra > 0 && d.count == 0) d.first = n;
  d.count += extra;
  return d;
}

} // namespace kj::judge
