// Reading the CUDA driver's assertion lines (driver_assertion.hpp).
#include "worker/driver_assertion.hpp"

#include <array>
#include <charconv>
#include <string>

namespace kj::judge {

namespace {

// Takes `word` from the front of `s`.
bool take(std::string_view& s, std::string_view word) {
  if (s.substr(0, word.size()) != word) return false;
  s.remove_prefix(word.size());
  return true;
}

// Takes a decimal number from the front of `s`.
bool take_number(std::string_view& s, unsigned& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || end == s.data()) return false;
  s.remove_prefix(static_cast<std::size_t>(end - s.data()));
  return true;
}

bool take_triple(std::string_view& s, std::array<unsigned, 3>& out) {
  return take(s, "[") && take_number(s, out[0]) && take(s, ",") && take_number(s, out[1]) &&
         take(s, ",") && take_number(s, out[2]) && take(s, "]");
}

// "<file>:<line>: <function>: block: [x,y,z], thread: [x,y,z] ", the text before "Assertion `".
// The function or the file may hold ": block: [" too: the last one is the driver's.
bool read_head(std::string_view head, DeviceAssertion& a) {
  const std::size_t at = head.rfind(": block: ");
  if (at == std::string_view::npos) return false;
  std::string_view rest = head.substr(at);
  if (!(take(rest, ": block: ") && take_triple(rest, a.block) && take(rest, ", thread: ") &&
        take_triple(rest, a.thread) && take(rest, " ") && rest.empty()))
    return false;
  // The file ends at the first ":<digits>: " (a function's name has no such colon).
  const std::string_view where = head.substr(0, at);
  for (std::size_t colon = where.find(':'); colon != std::string_view::npos;
       colon = where.find(':', colon + 1)) {
    std::string_view after = where.substr(colon + 1);
    unsigned line = 0;
    if (take_number(after, line) && take(after, ": ")) {
      a.file = std::string(where.substr(0, colon));
      a.line = line;
      return true;
    }
  }
  return true; // the numbers without a place
}

} // namespace

std::optional<DeviceAssertion> parse_driver_assertion(std::string_view printed) {
  constexpr std::string_view marker = "Assertion `";
  for (std::size_t at = printed.find(marker); at != std::string_view::npos;
       at = printed.find(marker, at + 1)) {
    const std::size_t newline = at == 0 ? std::string_view::npos : printed.rfind('\n', at - 1);
    const std::size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
    DeviceAssertion a;
    if (!read_head(printed.substr(line_start, at - line_start), a)) continue;
    const std::size_t from = at + marker.size();
    std::size_t end = printed.find("` failed.\n", from);
    constexpr std::string_view last = "` failed."; // the output's end, with no newline
    if (end == std::string_view::npos && printed.size() >= from + last.size() &&
        printed.ends_with(last))
      end = printed.size() - last.size();
    a.condition = std::string(
        printed.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from));
    return a;
  }
  return std::nullopt;
}

} // namespace kj::judge
