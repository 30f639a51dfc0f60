// A child process that speaks a line protocol on its standard streams (serve's, to a judge
// command or the Python adapter): its standard input a socket this side writes, so that writing
// to a child that died is an error returned (MSG_NOSIGNAL), never a SIGPIPE that ends kjudge; its
// standard output a pipe this side reads; no other descriptor of kjudge's.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kj::util {

struct LineChild {
  pid_t pid = -1;
  int input = -1;              // the child's standard input
  std::FILE* output = nullptr; // its standard output
};

// `argv` started (found on PATH as posix_spawnp finds it); nullopt when it cannot be.
std::optional<LineChild> spawn_line_child(const std::vector<std::string>& argv);

// All of `text` written to `fd`; false once the reader is gone.
bool send_all(int fd, std::string_view text);

// The next line of `in` without its newline; nullopt at its end.
std::optional<std::string> read_line(std::FILE* in);

} // namespace kj::util
