// The defences' constants and test switches (defences.hpp).
#include "judge/defences.hpp"

#include <algorithm>
#include <atomic>

#include "kjudge/test_switches.hpp"

namespace kj::judge {

std::uint8_t redzone_byte(int run) {
  return run == 0 ? 0xA5 : 0x5A;
}

std::uint32_t poison_pattern(int run, DType dtype) {
  if (run == 0) return 0xFFFFFFFFu;
  return dtype_size(dtype) == 1 ? 0x7F7F7F7Fu : 0x7FFF7FFFu;
}

bool holds_pattern(const HostTensor& t, std::int64_t i, std::uint32_t pattern) {
  const std::size_t size = dtype_size(t.dtype());
  const std::size_t offset = static_cast<std::size_t>(i) * size;
  const auto bytes = t.bytes();
  for (std::size_t j = 0; j < size; ++j) {
    const auto expected = static_cast<std::byte>((pattern >> (8 * ((offset + j) % 4))) & 0xFFu);
    if (bytes[offset + j] != expected) return false;
  }
  return true;
}

void fill_pattern(std::span<std::byte> bytes, std::uint32_t pattern) {
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<std::byte>((pattern >> (8 * (i % 4))) & 0xFFu);
}

std::uint64_t count_changed_bytes(std::span<const std::byte> now, std::span<const std::byte> was) {
  std::uint64_t changed = 0;
  for (std::size_t i = 0; i < now.size() && i < was.size(); ++i)
    changed += now[i] != was[i];
  return changed;
}

double run_deadline_s(double reference_s, double factor, double min_s, std::uint64_t bytes) {
  const double launches = std::max(factor * std::max(reference_s, 0.0), min_s);
  return launches + 1.0 + static_cast<double>(bytes) / 1e9;
}

double host_wall_backstop_s(double cpu_deadline_s) {
  return std::max(4.0 * cpu_deadline_s, cpu_deadline_s + 10.0);
}

std::set<std::string> parse_disabled(std::string_view value) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t end = value.find(',', start);
    if (end == std::string_view::npos) end = value.size();
    std::string_view item = value.substr(start, end - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t'))
      item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t'))
      item.remove_suffix(1);
    if (!item.empty()) out.emplace(item);
    start = end + 1;
  }
  return out;
}

std::set<std::string> unknown_defences(const std::set<std::string>& names) {
  std::set<std::string> out;
  for (const auto& n : names)
    if (std::find(std::begin(kDefences), std::end(kDefences), n) == std::end(kDefences))
      out.insert(n);
  return out;
}

Defences Defences::all_but(const std::set<std::string>& disabled) {
  auto on = [&](const char* name) { return !disabled.contains(name); };
  Defences d;
  d.isolation = on("isolation");
  d.redzone = on("redzone");
  d.poison = on("poison");
  d.input_hash = on("input_hash");
  d.rerun = on("rerun");
  d.static_scan = on("static_scan");
  d.one_program = on("one_program");
  d.regenerate = on("regenerate");
  return d;
}

} // namespace kj::judge

namespace kj {

namespace {
std::atomic<bool> g_switches_allowed{false};
} // namespace

void allow_test_switches(bool allowed) { g_switches_allowed = allowed; }
bool test_switches_allowed() { return g_switches_allowed; }

} // namespace kj
