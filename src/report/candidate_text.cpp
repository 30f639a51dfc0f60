// The quoting of a candidate's text for verdict messages (kjudge/candidate_text.hpp).
#include "kjudge/candidate_text.hpp"

#include <fmt/format.h>

namespace kj {

namespace {

// One byte as it appears between the quotes.
std::string escaped(unsigned char c) {
  if (c == '"') return "\\\"";
  if (c == '\\') return "\\\\";
  if (c < 0x20 || c > 0x7e) return fmt::format("\\x{:02x}", c);
  return std::string(1, static_cast<char>(c));
}

} // namespace

std::string quote_candidate_text(std::string_view text) {
  std::string inner;
  bool cut = false;
  for (const char ch : text) {
    const std::string e = escaped(static_cast<unsigned char>(ch));
    // Whole escapes only: half of one could read as another.
    if (inner.size() + e.size() > kCandidateTextBytes) {
      cut = true;
      break;
    }
    inner += e;
  }
  std::string out = "\"" + inner + "\"";
  if (cut) out += fmt::format(" (cut to {} bytes)", kCandidateTextBytes);
  return out;
}

std::string candidate_file_name(std::string_view file) {
  const bool plain = !file.empty() && file.size() <= kCandidateTextBytes &&
                     file.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                            "0123456789._/+-") == std::string_view::npos;
  return plain ? std::string(file) : quote_candidate_text(file);
}

std::string device_assertion_message(const DeviceAssertion& a) {
  std::string out =
      "device assertion failed (candidate's text: " + quote_candidate_text(a.condition);
  if (!a.file.empty())
    out += fmt::format(" at {}:{}, block [{},{},{}] thread [{},{},{}]", candidate_file_name(a.file),
                       a.line, a.block[0], a.block[1], a.block[2], a.thread[0], a.thread[1],
                       a.thread[2]);
  return out + ")";
}

} // namespace kj
