// Landlock (the kernel's unprivileged access control) for the host backend's two untrusted
// processes: the candidate's compile and the host worker. A ruleset names what stays reachable
// (folders or files, to read, write or execute); everything else of the file system, TCP, and
// signals or abstract sockets outside the process's domain, is refused by the kernel.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kj::landlock {

struct Access {
  std::filesystem::path path; // a folder (and all beneath it) or one file
  bool write = false;         // create, write, truncate and remove files
  bool execute = false;
  bool everything = false; // every right Landlock handles (a build folder, a GPU's device file)
};

// The kernel's Landlock ABI version; 0 where Landlock is missing or disabled.
int abi_version();

// A ruleset's descriptor, made before the process it confines exists (the child of a fork
// then only calls restrict_self, which is async-signal-safe). A path that does not exist is
// left out. Throws InternalError naming what failed.
class Ruleset {
public:
  explicit Ruleset(const std::vector<Access>& allowed);
  ~Ruleset();
  Ruleset(const Ruleset&) = delete;
  Ruleset& operator=(const Ruleset&) = delete;
  // Confines the calling thread and what it starts from now on (sets no_new_privs first).
  // 0 or an errno.
  int restrict_self() const noexcept;

private:
  int fd_ = -1;
};

} // namespace kj::landlock
