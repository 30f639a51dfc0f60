// enter_host_sandbox (kjudge/host_backend.hpp): the seccomp filter of the host worker. On the
// host backend a candidate is native code in the worker's process, so after the worker has
// opened everything it needs (its socket, its shared buffers, the candidate's shared object),
// the filter leaves it the system calls a running kernel needs and nothing that reaches
// outside: no open, no exec, no new process, no socket. A refused call fails with EPERM (a
// candidate that tries gets an error, not a silent success), so the oracle sees a crash or a
// wrong output, never a changed file.
#include <linux/sched.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <seccomp.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "kjudge/host_backend.hpp"

namespace kj {

namespace {

// Calls on what is already open or mapped, on the process's own threads, and on time.
constexpr int kAllowed[] = {
    SCMP_SYS(read),           SCMP_SYS(write),          SCMP_SYS(readv),
    SCMP_SYS(writev),         SCMP_SYS(pread64),        SCMP_SYS(pwrite64),
    SCMP_SYS(close),          SCMP_SYS(fstat),          SCMP_SYS(newfstatat),
    SCMP_SYS(lseek),          SCMP_SYS(poll),           SCMP_SYS(ppoll),
    SCMP_SYS(mmap),           SCMP_SYS(munmap),         SCMP_SYS(mprotect),
    SCMP_SYS(mremap),         SCMP_SYS(madvise),        SCMP_SYS(brk),
    SCMP_SYS(futex),          SCMP_SYS(sched_yield),    SCMP_SYS(sched_getaffinity),
    SCMP_SYS(getpid),         SCMP_SYS(gettid),         SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres),   SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
    SCMP_SYS(gettimeofday),   SCMP_SYS(rt_sigaction),   SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),   SCMP_SYS(sigaltstack),    SCMP_SYS(exit),
    SCMP_SYS(exit_group),     SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
    SCMP_SYS(getrandom),      SCMP_SYS(membarrier),     SCMP_SYS(tgkill),
    // The worker's protocol socket is already connected (a socketpair): send and recv on it
    // reach the oracle only, and no new socket can be made.
    SCMP_SYS(sendto),         SCMP_SYS(recvfrom),
};

} // namespace

void enter_host_sandbox(SandboxStage stage) {
  scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (!filter) throw std::runtime_error("seccomp_init failed");
  auto fail = [&](const char* what, int rc) {
    seccomp_release(filter);
    throw std::runtime_error(fmt::format("cannot build the host worker's seccomp filter: {}: {}",
                                         what, std::strerror(-rc)));
  };
  for (const int call : kAllowed)
    if (const int rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, call, 0); rc != 0)
      fail("a rule", rc);
  // New threads of this process (the launch's CPU threads), never a new process.
  if (const int rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                      SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
      rc != 0)
    fail("clone", rc);
  if (stage == SandboxStage::loading) {
    // dlopen of the candidate's shared object runs its static initialisers, which are the
    // candidate's code: files may be opened to read (the object and the libraries it needs),
    // never to write or create.
    constexpr scmp_datum_t writing = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE;
    if (const int rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                                        SCMP_A2(SCMP_CMP_MASKED_EQ, writing, 0));
        rc != 0)
      fail("openat", rc);
    // And the running stage must still be loadable on top of this one. A filter the candidate
    // adds can only take more away: the kernel applies the strictest.
    for (const int call : {SCMP_SYS(readlink), SCMP_SYS(getcwd), SCMP_SYS(access),
                           SCMP_SYS(faccessat), SCMP_SYS(stat), SCMP_SYS(lstat), SCMP_SYS(seccomp)})
      if (const int rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, call, 0); rc != 0)
        fail("a loading rule", rc);
    for (const int option : {PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_GET_SECCOMP})
      if (const int rc = seccomp_rule_add(filter, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
                                          SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(option)));
          rc != 0)
        fail("prctl", rc);
  }
  // clone3 passes its flags in memory the filter cannot read: ENOSYS makes the C library fall
  // back to clone, which the rule above judges.
  if (const int rc = seccomp_rule_add(filter, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc != 0)
    fail("clone3", rc);
  const int rc = seccomp_load(filter);
  seccomp_release(filter);
  if (rc != 0)
    throw std::runtime_error(
        fmt::format("cannot load the host worker's seccomp filter: {}", std::strerror(-rc)));
}

} // namespace kj
