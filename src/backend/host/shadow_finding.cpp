// ShadowFinding (kjudge/host_backend.hpp): the line a checked build's hooks write when they find
// a race or an out-of-bounds access, read back into its parts, and the sentence a kernel
// engineer reads in the verdict.
#include <charconv>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "kjudge/host_backend.hpp"

namespace kj {

namespace {

constexpr std::string_view kMarker = "kjudge-shadow: ";

// "read" from "read", "atomic read" from "atomic-read".
std::string access_kind(std::string kind) {
  for (char& c : kind)
    if (c == '-') c = ' ';
  return kind;
}

// "block (1,0,0)" from "1,0,0"; empty when the field is not three numbers.
std::string index_name(std::string_view prefix, const std::string& xyz) {
  unsigned v[3];
  const char* p = xyz.data();
  const char* end = xyz.data() + xyz.size();
  for (int d = 0; d < 3; ++d) {
    const auto r = std::from_chars(p, end, v[d]);
    if (r.ec != std::errc()) return {};
    p = r.ptr;
    if (d < 2) {
      if (p == end || *p != ',') return {};
      ++p;
    }
  }
  if (p != end) return {};
  return fmt::format("{} ({},{},{})", prefix, v[0], v[1], v[2]);
}

template <class T>
bool number(const std::map<std::string, std::string>& fields, const std::string& key, T& out) {
  const auto it = fields.find(key);
  if (it == fields.end()) return false;
  const std::string& s = it->second;
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  const char* begin = s.data() + (hex ? 2 : 0);
  const auto r = std::from_chars(begin, s.data() + s.size(), out, hex ? 16 : 10);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool read_access(const std::map<std::string, std::string>& fields, const std::string& prefix,
                 ShadowAccess& a) {
  const auto kind = fields.find(prefix + "access");
  const auto block = fields.find(prefix + "block");
  const auto thread = fields.find(prefix + "thread");
  if (kind == fields.end() || block == fields.end() || thread == fields.end()) return false;
  a.kind = access_kind(kind->second);
  a.block = index_name("block", block->second);
  a.thread = index_name("thread", thread->second);
  return !a.block.empty() && !a.thread.empty() && number(fields, prefix + "pc", a.pc);
}

} // namespace

std::string ShadowAccess::described() const {
  return fmt::format("{} {} by {} {}", kind,
                     place.empty() ? std::string("outside the kernel's source") : "at " + place,
                     block, thread);
}

std::optional<ShadowFinding> parse_shadow_finding(std::string_view log) {
  const std::size_t start = log.find(kMarker);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view line = log.substr(start + kMarker.size());
  line = line.substr(0, line.find('\n'));
  std::istringstream words{std::string(line)};
  std::string what;
  words >> what;
  if (what != "race" && what != "bounds") return std::nullopt;
  std::map<std::string, std::string> fields;
  for (std::string word; words >> word;)
    if (const std::size_t eq = word.find('='); eq != std::string::npos)
      fields[word.substr(0, eq)] = word.substr(eq + 1);
  ShadowFinding f;
  f.race = what == "race";
  const auto space = fields.find("space");
  if (space == fields.end() || (space->second != "global" && space->second != "shared"))
    return std::nullopt;
  f.shared = space->second == "shared";
  if (!number(fields, "offset", f.offset) || !number(fields, "size", f.size) ||
      !number(fields, "shared_bytes", f.shared_bytes) || !read_access(fields, "", f.current))
    return std::nullopt;
  if (f.race && !read_access(fields, "prev_", f.previous)) return std::nullopt;
  return f;
}

std::string ShadowFinding::message(std::string_view where) const {
  if (race)
    return fmt::format("data race on {} bytes {}: a {}, and an earlier {}, with no barrier or "
                       "atomic between them",
                       size, where, current.described(), previous.described());
  return fmt::format("out-of-bounds {} of {} bytes, {}, at {} by {} {}", current.kind, size, where,
                     current.place.empty() ? std::string("a place outside the kernel's source")
                                           : current.place,
                     current.block, current.thread);
}

std::string ShadowFinding::shared_where() const {
  if (!race && offset >= 0 && static_cast<std::uint64_t>(offset) >= shared_bytes)
    return fmt::format("{} bytes past the end of the block's {} bytes of shared memory",
                       static_cast<std::uint64_t>(offset) - shared_bytes, shared_bytes);
  return fmt::format("of shared memory (byte {})", offset);
}

std::string place_in_frame(const std::string& frame, std::string_view file_name) {
  const std::string needle = std::string(file_name) + ":";
  std::size_t at = frame.find(needle);
  while (at != std::string::npos) {
    const bool starts_name = at == 0 || frame[at - 1] == '/' || frame[at - 1] == ' ';
    if (starts_name) {
      std::size_t end = at + needle.size();
      while (end < frame.size() && std::isdigit(static_cast<unsigned char>(frame[end])))
        ++end;
      if (end > at + needle.size()) return frame.substr(at, end - at);
    }
    at = frame.find(needle, at + 1);
  }
  return {};
}

} // namespace kj
