// Text that came from the candidate, made safe to put in a verdict message. A failed device
// assertion carries the candidate's own words (its condition, the file name its #line gave)
// into the message, and from there into the console, JSON, JUnit and JSON Lines reports: quoted
// and escaped here, one place for every backend, so no candidate can start a line of kjudge's
// output (a fake "PASS"), close a quote it did not open, or put bytes in a report that are not
// printable ASCII.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace kj {

// The most bytes of a candidate's text a message shows, escapes counted.
inline constexpr std::size_t kCandidateTextBytes = 200;

// `text` between double quotes: `"` and `\` backslashed, every byte outside printable ASCII
// (0x20 to 0x7e) as \xNN (lower-case hex), newlines too. Longer than kCandidateTextBytes
// between the quotes, it is cut at the last whole escape that fits and the closing quote is
// followed by " (cut to 200 bytes)".
std::string quote_candidate_text(std::string_view text);

// A file name from the candidate (its #line can say anything): as it is when it holds only
// letters, digits and `._/+-`, else quoted as above.
std::string candidate_file_name(std::string_view file);

// What a failed device assertion says on either backend. The location is known when the
// assertion's file is not empty.
struct DeviceAssertion {
  std::string condition; // the candidate's text: what assert() stringified, or __assertfail got
  std::string file;
  unsigned line = 0;
  std::array<unsigned, 3> block{}, thread{};
};

// "device assertion failed (candidate's text: "i < n" at k.cu:12, block [0,0,0] thread
// [3,0,0])"; without a file, the condition alone.
std::string device_assertion_message(const DeviceAssertion& assertion);

} // namespace kj
