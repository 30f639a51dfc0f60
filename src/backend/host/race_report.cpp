// parse_race_report (kjudge/host_backend.hpp): ThreadSanitizer's report of a race in a host
// module, read back into the two accesses and their places in the candidate's source, for a
// `nondeterministic` verdict a kernel engineer can act on.
#include <map>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "kjudge/host_backend.hpp"

namespace kj {

namespace {

// "race.cu:16" from a frame line holding ".../race.cu:16" (the path the compiler recorded may
// carry any folder in front of the candidate's file name); empty when the frame is elsewhere.
std::string place_in(const std::string& frame, std::string_view file_name) {
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

} // namespace

std::string RaceReport::message() const {
  auto who = [](const RaceAccess& a) { return a.thread.empty() ? std::string() : " by " + a.thread; };
  auto where = [](const RaceAccess& a) {
    return a.place.empty() ? std::string("outside the kernel's source") : "at " + a.place;
  };
  return fmt::format("data race on {} bytes: a {} {}{}, and an earlier {} {}{}, with no barrier or "
                     "atomic between them",
                     current.size, current.kind, where(current), who(current), previous.kind,
                     where(previous), who(previous));
}

std::optional<RaceReport> parse_race_report(std::string_view text, std::string_view file_name) {
  const std::size_t start = text.find("WARNING: ThreadSanitizer: data race");
  if (start == std::string_view::npos) return std::nullopt;
  std::istringstream lines{std::string(text.substr(start))};
  static const std::regex access_line(
      R"(^  (Previous )?((?:[Aa]tomic )?(?:[Rr]ead|[Ww]rite)) of size (\d+) at \S+ by (main thread|thread T\d+))");
  static const std::regex thread_line(R"(^  Thread (T\d+) '([^']*)')");
  RaceReport report;
  std::map<std::string, std::string> names; // "thread T65" -> its fiber's name
  RaceAccess* open = nullptr;                // the access whose frames are being read
  int accesses = 0;
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("SUMMARY:", 0) == 0) break;
    std::smatch m;
    if (std::regex_search(line, m, access_line)) {
      RaceAccess& a = m[1].matched ? report.previous : report.current;
      a.kind = m[2].str();
      for (char& c : a.kind)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      a.size = std::stoi(m[3].str());
      a.thread = m[4].str();
      open = &a;
      ++accesses;
      continue;
    }
    if (std::regex_search(line, m, thread_line)) {
      names["thread " + m[1].str()] = m[2].str();
      open = nullptr;
      continue;
    }
    if (line.empty()) {
      open = nullptr;
      continue;
    }
    if (open && open->place.empty() && line.find("    #") == 0) open->place = place_in(line, file_name);
  }
  if (accesses < 2) return std::nullopt;
  for (RaceAccess* a : {&report.current, &report.previous})
    if (const auto it = names.find(a->thread); it != names.end() && !it->second.empty())
      a->thread = it->second;
  return report;
}

} // namespace kj
