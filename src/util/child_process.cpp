#include "util/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

extern char** environ;

namespace kj::util {

std::optional<LineChild> spawn_line_child(const std::vector<std::string>& argv) {
  int input[2], output[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, input) != 0) return std::nullopt;
  if (::pipe2(output, O_CLOEXEC) != 0) {
    ::close(input[0]);
    ::close(input[1]);
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, input[0], 0);
  ::posix_spawn_file_actions_adddup2(&actions, output[1], 1);
  // Nothing else of kjudge's: not a results file's descriptor, which a child could write to.
  ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  std::vector<std::string> args = argv;
  std::vector<char*> pointers;
  for (std::string& a : args)
    pointers.push_back(a.data());
  pointers.push_back(nullptr);
  LineChild child;
  const int spawned =
      ::posix_spawnp(&child.pid, pointers[0], &actions, nullptr, pointers.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(input[0]);
  ::close(output[1]);
  if (spawned != 0) {
    ::close(input[1]);
    ::close(output[0]);
    return std::nullopt;
  }
  ::shutdown(input[1], SHUT_RD);
  child.input = input[1];
  child.output = ::fdopen(output[0], "r");
  return child;
}

bool send_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    if (n > 0) text.remove_prefix(static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR) continue;
    else return false;
  }
  return true;
}

std::optional<std::string> read_line(std::FILE* in) {
  std::string line;
  for (int c; (c = std::fgetc(in)) != EOF;) {
    if (c == '\n') return line;
    line += static_cast<char>(c);
  }
  if (line.empty()) return std::nullopt;
  return line;
}

} // namespace kj::util
