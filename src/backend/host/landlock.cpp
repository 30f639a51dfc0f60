// Landlock rulesets (landlock.hpp) through the raw system calls: glibc has no wrappers, and the
// build machine's kernel headers may predate the ABI versions used here, so the few constants
// past ABI 1 are spelled out with their upstream values.
#include "backend/host/landlock.hpp"
#include "kjudge/error.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace kj::landlock {

namespace {

// The ruleset attribute as of ABI 6; older kernels take a prefix of it.
struct RulesetAttr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net; // ABI 4
  std::uint64_t scoped;             // ABI 6
};

constexpr std::uint64_t kRefer = 1ull << 13;    // ABI 2
constexpr std::uint64_t kTruncate = 1ull << 14; // ABI 3
constexpr std::uint64_t kIoctlDev = 1ull << 15; // ABI 5
constexpr std::uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;           // ABI 4
constexpr std::uint64_t kScopeAbstractUnixSocket = 1ull << 0, kScopeSignal = 1ull << 1; // ABI 6

constexpr std::uint64_t kAbi1 = (1ull << 13) - 1; // EXECUTE .. MAKE_SYM

std::uint64_t handled_fs(int abi) {
  std::uint64_t fs = kAbi1;
  if (abi >= 2) fs |= kRefer;
  if (abi >= 3) fs |= kTruncate;
  if (abi >= 5) fs |= kIoctlDev;
  return fs;
}

constexpr std::uint64_t kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                      LANDLOCK_ACCESS_FS_READ_FILE | kTruncate | kIoctlDev;

std::uint64_t rights_of(const Access& a, bool folder, int abi) {
  if (a.everything) return (folder ? handled_fs(abi) : kFileRights & handled_fs(abi));
  std::uint64_t r = LANDLOCK_ACCESS_FS_READ_FILE;
  if (folder) r |= LANDLOCK_ACCESS_FS_READ_DIR;
  if (a.execute) r |= LANDLOCK_ACCESS_FS_EXECUTE;
  if (a.write) {
    r |= LANDLOCK_ACCESS_FS_WRITE_FILE | kTruncate;
    if (folder) r |= LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE;
  }
  if (!folder) r &= kFileRights;
  return r & handled_fs(abi);
}

} // namespace

int abi_version() {
  const long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return v < 0 ? 0 : static_cast<int>(v);
}

Ruleset::Ruleset(const std::vector<Access>& allowed) {
  const int abi = abi_version();
  if (abi < 1)
    throw InternalError("Landlock is not available in this kernel (it needs Linux 5.13 "
                             "with landlock among the enabled security modules)");
  RulesetAttr attr{handled_fs(abi), 0, 0};
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof attr;
  }
  fd_ = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (fd_ < 0)
    throw InternalError(fmt::format("landlock_create_ruleset: {}", std::strerror(errno)));
  for (const Access& a : allowed) {
    const int path_fd = ::open(a.path.c_str(), O_PATH | O_CLOEXEC);
    if (path_fd < 0) continue; // nothing there to reach
    struct stat st {};
    const bool folder = ::fstat(path_fd, &st) == 0 && S_ISDIR(st.st_mode);
    landlock_path_beneath_attr rule{rights_of(a, folder, abi), path_fd};
    const long rc = ::syscall(SYS_landlock_add_rule, fd_, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    const int error = errno;
    ::close(path_fd);
    if (rc != 0) {
      ::close(fd_);
      throw InternalError(
          fmt::format("landlock_add_rule for {}: {}", a.path.string(), std::strerror(error)));
    }
  }
}

Ruleset::~Ruleset() {
  if (fd_ >= 0) ::close(fd_);
}

int Ruleset::restrict_self() const noexcept {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_landlock_restrict_self, fd_, 0) != 0) return errno;
  return 0;
}

} // namespace kj::landlock
