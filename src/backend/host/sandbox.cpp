// The host worker's confinement (kjudge/host_backend.hpp). On the host backend a candidate is
// native code in the worker's process, so the process is closed before any of that code runs,
// with the kernel's own mechanisms rather than a list of bad calls: a user namespace (no
// capability outside it, whatever uid kjudge runs as), Landlock (only the module cache and the
// libraries stay readable; no signal or abstract socket leaves the process), no capabilities,
// and a seccomp allow-list (no open, exec, new thread or process, socket, ptrace, and signals to
// the process itself only). kjudge's block threads start before the filter refuses new ones.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "backend/host/landlock.hpp"
#include "kjudge/error.hpp"
#include "kjudge/host_backend.hpp"

namespace kj {

namespace {

// Calls on what is already open or mapped, on the process's own threads, and on time.
constexpr int kAllowed[] = {
    SCMP_SYS(read),          SCMP_SYS(write),           SCMP_SYS(readv),
    SCMP_SYS(writev),        SCMP_SYS(pread64),         SCMP_SYS(pwrite64),
    SCMP_SYS(close),         SCMP_SYS(fstat),           SCMP_SYS(lseek),
    SCMP_SYS(poll),          SCMP_SYS(ppoll),           SCMP_SYS(mmap),
    SCMP_SYS(munmap),        SCMP_SYS(mprotect),        SCMP_SYS(mremap),
    SCMP_SYS(madvise),       SCMP_SYS(brk),             SCMP_SYS(futex),
    SCMP_SYS(sched_yield),   SCMP_SYS(sched_getaffinity), SCMP_SYS(getpid),
    SCMP_SYS(gettid),        SCMP_SYS(getppid),         SCMP_SYS(clock_gettime),
    SCMP_SYS(clock_getres),  SCMP_SYS(clock_nanosleep), SCMP_SYS(nanosleep),
    SCMP_SYS(gettimeofday),  SCMP_SYS(rt_sigaction),    SCMP_SYS(rt_sigprocmask),
    SCMP_SYS(rt_sigreturn),  SCMP_SYS(sigaltstack),     SCMP_SYS(exit),
    SCMP_SYS(exit_group),    SCMP_SYS(set_robust_list), SCMP_SYS(rseq),
    SCMP_SYS(getrandom),     SCMP_SYS(membarrier),      SCMP_SYS(capget),
    // The protocol socket is already connected (a socketpair): it reaches the oracle only.
    SCMP_SYS(sendto),        SCMP_SYS(recvfrom),
};

using Filter = scmp_filter_ctx;

void add_rule(Filter f, std::uint32_t action, int call, std::initializer_list<scmp_arg_cmp> args) {
  const int rc = seccomp_rule_add_array(f, action, call, static_cast<unsigned>(args.size()),
                                        args.size() ? args.begin() : nullptr);
  if (rc != 0)
    throw InternalError(
        fmt::format("seccomp: a rule for system call {}: {}", call, std::strerror(-rc)));
}

// The allow-list, for every thread of the process (they exist already: TSYNC). `loading` also
// lets files be opened to read (dlopen of the module; Landlock says which) and the next stage
// be loaded on top.
void load_syscall_filter(bool loading) {
  Filter f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (!f) throw InternalError("seccomp_init failed");
  struct Release {
    Filter f;
    ~Release() { seccomp_release(f); }
  } release{f};
  if (const int rc = seccomp_attr_set(f, SCMP_FLTATR_CTL_TSYNC, 1); rc != 0)
    throw InternalError(fmt::format("seccomp: thread sync: {}", std::strerror(-rc)));
  for (const int call : kAllowed)
    add_rule(f, SCMP_ACT_ALLOW, call, {});
  // Signals to this process only (abort, raise): never to the oracle or anyone else.
  const auto self = static_cast<scmp_datum_t>(::getpid());
  add_rule(f, SCMP_ACT_ALLOW, SCMP_SYS(kill), {SCMP_A0(SCMP_CMP_EQ, self)});
  add_rule(f, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), {SCMP_A0(SCMP_CMP_EQ, self)});
  // fstat of an open descriptor (glibc's fstat is fstatat(fd, "", AT_EMPTY_PATH)), no look-up
  // of a path.
  add_rule(f, SCMP_ACT_ALLOW, SCMP_SYS(newfstatat),
           {SCMP_A3(SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, AT_EMPTY_PATH)});
  // clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library fall
  // back to clone, which is refused like every other call not listed.
  add_rule(f, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), {});
  if (loading) {
    constexpr scmp_datum_t writing = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND | O_TMPFILE;
    add_rule(f, SCMP_ACT_ALLOW, SCMP_SYS(openat), {SCMP_A2(SCMP_CMP_MASKED_EQ, writing, 0)});
    add_rule(f, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), {});
    for (const int option : {PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, PR_GET_SECCOMP})
      add_rule(f, SCMP_ACT_ALLOW, SCMP_SYS(prctl),
               {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(option))});
  }
  if (const int rc = seccomp_load(f); rc != 0)
    throw InternalError(fmt::format("seccomp: cannot load the filter: {}", std::strerror(-rc)));
}

bool write_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// A user namespace of its own: the worker keeps its uid and gid (its files read as before) and
// holds no capability over anything outside, so a worker started as root cannot read another
// root process's memory or signal it by privilege. Single-threaded only (the kernel's rule).
void enter_user_namespace(int more_namespaces = 0) {
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWUSER | more_namespaces) != 0)
    throw InternalError(fmt::format("user namespace: unshare: {}", std::strerror(errno)));
  if (!write_file("/proc/self/setgroups", "deny") ||
      !write_file("/proc/self/uid_map", fmt::format("{} {} 1", uid, uid)) ||
      !write_file("/proc/self/gid_map", fmt::format("{} {} 1", gid, gid)))
    throw InternalError(fmt::format("user namespace: id maps: {}", std::strerror(errno)));
}

// No capability left, in any set, for this process or what it could start.
void drop_capabilities() {
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      throw InternalError(
          fmt::format("capabilities: bounding set: {}", std::strerror(errno)));
  (void)::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0)
    throw InternalError(fmt::format("capabilities: capset: {}", std::strerror(errno)));
}

bool holds_a_capability() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return true;
  for (const auto& d : data)
    if (d.effective || d.permitted || d.inheritable) return true;
  return false;
}

void* probe_thread(void*) { return nullptr; }

} // namespace

HostSandbox host_worker_sandbox(std::vector<std::filesystem::path> readable, unsigned block_threads) {
  HostSandbox s;
  s.readable = std::move(readable);
  for (const auto& dir : host_library_dirs())
    s.readable.push_back(dir);
  s.preload = host_module_libraries();
  s.block_threads = block_threads;
  return s;
}

std::string confine_host_worker(const HostSandbox& sandbox) {
  try {
    for (const auto& library : sandbox.preload)
      if (!::dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL))
        throw InternalError(fmt::format("cannot preload {}: {}", library.string(), ::dlerror()));
    enter_user_namespace();
    std::vector<landlock::Access> readable;
    for (const auto& path : sandbox.readable)
      readable.push_back({path});
    const landlock::Ruleset rules(readable);
    if (const int e = rules.restrict_self(); e != 0)
      throw InternalError(fmt::format("Landlock: restrict_self: {}", std::strerror(e)));
    drop_capabilities();
    start_block_threads(sandbox.block_threads);
    load_syscall_filter(true);
  } catch (const std::exception& e) {
    return e.what();
  }
  return confinement_gaps();
}

void seal_host_worker() { load_syscall_filter(false); }

namespace {

// A deny-list on top of Landlock, for the one thing Landlock below ABI 6 leaves open (signals
// to processes of the same uid) and for reaching another process's memory: the Python worker
// runs torch, the CUDA driver and compilers, too much to allow-list.
void load_python_worker_filter() {
  Filter f = seccomp_init(SCMP_ACT_ALLOW);
  if (!f) throw InternalError("seccomp_init failed");
  struct Release {
    Filter f;
    ~Release() { seccomp_release(f); }
  } release{f};
  const auto self = static_cast<scmp_datum_t>(::getpid());
  const auto refused = SCMP_ACT_ERRNO(EPERM);
  add_rule(f, refused, SCMP_SYS(kill), {SCMP_A0(SCMP_CMP_NE, self)});
  add_rule(f, refused, SCMP_SYS(tgkill), {SCMP_A0(SCMP_CMP_NE, self)});
  for (const int call : {SCMP_SYS(tkill), SCMP_SYS(pidfd_open), SCMP_SYS(pidfd_send_signal),
                         SCMP_SYS(pidfd_getfd), SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv),
                         SCMP_SYS(process_vm_writev), SCMP_SYS(setns), SCMP_SYS(unshare)})
    add_rule(f, refused, call, {});
  // The parent-death signal is what ends the namespace with the worker's parent: it stays.
  add_rule(f, refused, SCMP_SYS(prctl),
           {SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(PR_SET_PDEATHSIG))});
  if (const int rc = seccomp_load(f); rc != 0)
    throw InternalError(fmt::format("seccomp: cannot load the filter: {}", std::strerror(-rc)));
}

// The worker's /dev/shm: a tmpfs of its own mount namespace, capped, gone with the namespace (a
// file a candidate leaves there stays nowhere). The rest of the tree is the judge's, unchanged.
void mount_private_shm(std::uint64_t bytes) {
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    throw InternalError(fmt::format("mount namespace: make / private: {}", std::strerror(errno)));
  struct stat st {};
  if (::stat("/dev/shm", &st) != 0 || !S_ISDIR(st.st_mode)) return;
  const std::string options = fmt::format("size={},mode=1777", bytes);
  if (::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
    throw InternalError(fmt::format("mount namespace: tmpfs on /dev/shm: {}", std::strerror(errno)));
}

// Forks after unshare(CLONE_NEWPID): the child is the new namespace's first process and returns;
// this process never returns. It waits for the child and ends as the child ended, and kills the
// child when the judge that started it is gone. The child dies with this process
// (PR_SET_PDEATHSIG, which the seccomp filter then keeps from being cleared), and when the
// namespace's first process dies the kernel kills every process in it.
void become_namespace_init() {
  const pid_t judge = ::getppid();
  const pid_t child = ::fork();
  if (child < 0) throw InternalError(fmt::format("PID namespace: fork: {}", std::strerror(errno)));
  if (child == 0) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
      throw InternalError(fmt::format("PID namespace: parent-death signal: {}", std::strerror(errno)));
    // A /proc of the new namespace, so /proc/self and getpid() name the same process (the CUDA
    // driver writes its own entries by pid) and no other process of the machine is listed.
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
      throw InternalError(fmt::format("PID namespace: mount /proc: {}", std::strerror(errno)));
    return;
  }
  ::close_range(3, ~0u, 0); // the pipes are the child's: the judge sees their end with it
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(child, &status, WNOHANG);
    if (done == child) {
      if (WIFSIGNALED(status)) {
        ::signal(WTERMSIG(status), SIG_DFL);
        ::kill(::getpid(), WTERMSIG(status));
      }
      ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
    }
    if (done < 0 && errno != EINTR) ::_exit(1);
    if (::getppid() != judge) { // the judge is gone: so is everything of the worker's
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      ::_exit(1);
    }
    const timespec quarter{0, 250'000'000};
    ::nanosleep(&quarter, nullptr);
  }
}

void limit_data_memory(std::uint64_t bytes) {
  if (bytes == 0) return;
  const rlimit limit{bytes, bytes};
  if (::setrlimit(RLIMIT_DATA, &limit) != 0)
    throw InternalError(fmt::format("memory: RLIMIT_DATA: {}", std::strerror(errno)));
}

} // namespace

std::string confine_python_worker(const PythonSandbox& sandbox) {
  try {
    enter_user_namespace(CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID);
    mount_private_shm(sandbox.shm_bytes);
    limit_data_memory(sandbox.memory_bytes);
    become_namespace_init();
    // The ruleset after the mounts: its rules hold the inodes of the paths as they are now.
    std::vector<landlock::Access> allowed;
    for (const auto& path : sandbox.readable)
      allowed.push_back({.path = path, .execute = true});
    for (const auto& path : sandbox.writable)
      allowed.push_back({.path = path, .everything = true});
    const landlock::Ruleset rules(allowed);
    if (const int e = rules.restrict_self(); e != 0)
      throw InternalError(fmt::format("Landlock: restrict_self: {}", std::strerror(e)));
    drop_capabilities();
    load_python_worker_filter();
  } catch (const std::exception& e) {
    return e.what();
  }
  if (holds_a_capability()) return "capabilities: the worker still holds some";
  if (::getpid() != 1) return "PID namespace: the worker is not its namespace's first process";
  return "";
}

std::string confinement_gaps() {
  // Each mechanism, shown by what it must refuse.
  const pid_t parent = ::getppid();
  if (holds_a_capability()) return "capabilities: the worker still holds some";
  for (const std::string& path : {std::string("/proc/self/status"),
                                 fmt::format("/proc/{}/mem", parent), std::string("/etc/hostname")}) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ::close(fd);
      return fmt::format("Landlock: {} is readable", path);
    }
  }
  if (parent > 1 && ::kill(parent, 0) == 0) return "seccomp: the worker can signal its parent";
  if (const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0); s >= 0) {
    ::close(s);
    return "seccomp: the worker can make a socket";
  }
  pthread_t t;
  if (::pthread_create(&t, nullptr, probe_thread, nullptr) == 0) {
    ::pthread_join(t, nullptr);
    return "seccomp: the worker can start a thread";
  }
  return "";
}

} // namespace kj
