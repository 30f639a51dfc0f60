// The one error idiom of kjudge (docs/design.md "Conventions"): every exception kjudge throws is a
// kj::Error with a kind saying whose fault it is. spec: bad input from a user (a problem, an
// argument, a file, a request), SpecError naming where, exit 2. candidate: the candidate's code
// (it does not compile, its plan does not fit), a FAIL. internal: kjudge's own fault, exit 3.
// cuda: the driver's error (CudaError, kjudge/cuda.hpp). unsupported: a backend cannot run this
// (a SKIP, never a verdict). Each type is defined where its lowest user needs it; the pipelines
// classify what reaches them by kind().
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

enum class ErrorKind { spec, candidate, internal, cuda, unsupported };

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

private:
  ErrorKind kind_;
};

// An error of one kind, for the types that carry nothing but their message.
template <ErrorKind K> class ErrorOfKind : public Error {
public:
  explicit ErrorOfKind(const std::string& message) : Error(K, message) {}
};

// A problem with the user's input: exit 2.
class SpecError : public Error {
public:
  SpecError(Location where, const std::string& message)
      : Error(ErrorKind::spec,
              where.describe().empty() ? message : where.describe() + ": " + message),
        where_(std::move(where)), message_(message) {}
  const Location& where() const { return where_; }
  // The message without the location.
  const std::string& bare_message() const { return message_; }

private:
  Location where_;
  std::string message_;
};

// A fault of kjudge itself (a broken precondition, an exhausted resource, a sandbox the machine
// cannot give, a malformed message between kjudge's processes): exit 3.
class InternalError : public ErrorOfKind<ErrorKind::internal> {
  using ErrorOfKind::ErrorOfKind;
};

// A size that does not fit 64 bits (an element or byte count): the input's fault, so the module
// that reads the shape turns it into a SpecError naming where.
class SizeOverflow : public ErrorOfKind<ErrorKind::spec> {
  using ErrorOfKind::ErrorOfKind;
};

// A compile that failed for a reason of the source (the candidate's compile_error; for a
// reference, the problem's), on either backend.
class CompileError : public Error {
public:
  CompileError(std::string message, std::string log)
      : Error(ErrorKind::candidate, message), log_(std::move(log)) {}
  // The compiler's log, trimmed to the first errors (a few dozen lines at most).
  const std::string& log() const { return log_; }

private:
  std::string log_;
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
