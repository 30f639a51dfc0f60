// The one error idiom of kjudge. Bad input from a user (a spec, a candidate, an expression, a file,
// an argument) throws SpecError naming where; a broken promise inside kjudge throws InternalError.
// The CLI maps them to docs/design.md's exit codes: a user's mistake is never a crash.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace kj {

// Exit codes of docs/design.md's verdict table.
enum class ExitCode : int { pass = 0, fail = 1, spec_error = 2, internal = 3 };

// Where in a user's input something was found. Empty parts are left out of the message.
struct Location {
  std::string file;   // path as the user gave it
  std::string field;  // e.g. "input[1].shape[0]" or "reference.launch[0].grid"
  int line = 0;       // 1-based, 0 = unknown
  int column = 0;     // 1-based, 0 = unknown

  // "file:line:col: field" with the empty parts left out.
  std::string describe() const;
};

// A problem with the user's input: exit 2.
class SpecError : public std::runtime_error {
public:
  SpecError(Location where, const std::string& message)
      : std::runtime_error(where.describe().empty() ? message
                                                    : where.describe() + ": " + message),
        where_(std::move(where)), message_(message) {}
  const Location& where() const { return where_; }
  // The message without the location.
  const std::string& bare_message() const { return message_; }

private:
  Location where_;
  std::string message_;
};

// A fault of kjudge itself (a broken precondition, an exhausted resource): exit 3.
class InternalError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

inline std::string Location::describe() const {
  std::string out = file;
  if (!file.empty() && line > 0) {
    out += fmt::format(":{}", line);
    if (column > 0) out += fmt::format(":{}", column);
  }
  if (!field.empty()) out += out.empty() ? field : ": " + field;
  return out;
}

}  // namespace kj

// Precondition inside kjudge; a failure is kjudge's fault, never the user's.
#define KJ_EXPECTS(cond, why)                                                                  \
  do {                                                                                         \
    if (!(cond))                                                                               \
      throw ::kj::InternalError(                                                               \
          ::fmt::format("{}:{}: expected {}: {}", __FILE__, __LINE__, #cond, (why)));          \
  } while (0)
