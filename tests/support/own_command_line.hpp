// The command line of this process, read from /proc/self/cmdline. Test binaries that re-execute
// themselves as a child (a fake worker, a module run under a sanitizer) read it in a static
// initializer, before gtest's main has the arguments.
#pragma once

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace kj::test {

inline std::vector<std::string> own_command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (const char c : all) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return args;
}

} // namespace kj::test
