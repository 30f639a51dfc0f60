// Starting, talking to and ending a worker process (worker_process.hpp). posix_spawn, not
// fork: the oracle has initialised CUDA, and a forked child of a CUDA process is undefined
// until it execs. The worker's end of the socketpair reaches it as a plain inherited fd (it is
// dup2'ed in the child, which clears close-on-exec there) while the oracle's end is
// close-on-exec, so no other child inherits it.
#include "worker/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "kjudge/error.hpp"

extern char** environ;

namespace kj::judge {

Clock::time_point deadline_after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}


namespace {

// What of kjudge's environment the worker gets: what the CUDA driver and NVRTC read, the locale
// and temporary folder, and what kjudge's own sanitizer and coverage builds read. Nothing else:
// the worker runs the candidate, which could read any variable (a token, a secret, a cloud key)
// and print it back in a verdict through its outputs.
bool the_worker_needs(std::string_view entry) {
  const std::string_view name = entry.substr(0, entry.find('='));
  constexpr std::string_view exact[] = {"PATH",   "HOME",         "TMPDIR",           "LANG",
                                        "TZ",     "KJUDGE_NVRTC", "LD_LIBRARY_PATH",  "LLVM_PROFILE_FILE"};
  constexpr std::string_view prefixes[] = {"CUDA_", "NVIDIA_", "__NV_", "LC_", "GCOV_"};
  if (std::find(std::begin(exact), std::end(exact), name) != std::end(exact)) return true;
  for (std::string_view prefix : prefixes)
    if (name.starts_with(prefix)) return true;
  return name.ends_with("SAN_OPTIONS"); // ASAN_OPTIONS, UBSAN_OPTIONS, TSAN_OPTIONS, ...
}

std::string signal_name(int sig) {
  switch (sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGBUS:
    return "SIGBUS";
  case SIGABRT:
    return "SIGABRT";
  case SIGKILL:
    return "SIGKILL";
  case SIGTERM:
    return "SIGTERM";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  case SIGPIPE:
    return "SIGPIPE";
  default:
    return fmt::format("signal {}", sig);
  }
}

} // namespace

std::string ExitStatus::describe() const {
  if (exited) return fmt::format("exited with status {}", code);
  return fmt::format("killed by signal {} ({})", signal, signal_name(signal));
}

ExitStatus exit_status_from_wait(int wait_status) {
  ExitStatus s;
  if (WIFEXITED(wait_status)) {
    s.exited = true;
    s.code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    s.signal = WTERMSIG(wait_status);
  }
  return s;
}

Reply classify_reply(const nlohmann::json& message) {
  Reply r;
  r.message = message;
  try {
    if (auto err = error_reply_from_json(message)) {
      r.status = Reply::Status::error;
      r.error = std::move(*err);
      return r;
    }
  } catch (const ProtocolError& e) {
    r.status = Reply::Status::protocol;
    r.detail = e.what();
    return r;
  }
  const bool ok = message.is_object() && ((message.contains("ok") && message["ok"] == true) ||
                                          (message.contains("ready") && message["ready"] == true));
  r.status = ok ? Reply::Status::ok : Reply::Status::protocol;
  if (!ok) r.detail = "a reply that is neither ok nor an error: " + message.dump().substr(0, 200);
  return r;
}

WorkerProcess::WorkerProcess(std::vector<std::string> argv, const SpawnExtras& extras) {
  KJ_EXPECTS(!argv.empty(), "a worker command");
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw InternalError(fmt::format("socketpair: {}", std::strerror(errno)));
  const int ours = fds[0];
  // The child sees its socket as 3 and the shared buffers as 4. The parent's descriptors are
  // first moved above both (close-on-exec), so no dup2 of the spawn overwrites a descriptor a
  // later one still needs; dup2 onto the child's number clears close-on-exec there.
  auto above = [](int fd) {
    const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    if (moved < 0) throw InternalError(fmt::format("fcntl: {}", std::strerror(errno)));
    return moved;
  };
  const int theirs = above(fds[1]);
  ::close(fds[1]);
  const int shared = extras.shared_fd >= 0 ? above(extras.shared_fd) : -1;
  constexpr int child_fd = 3, child_shared_fd = 4;
  for (auto& a : argv) {
    if (a == "{fd}") a = std::to_string(child_fd);
    if (a == "{shared_fd}") a = std::to_string(child_shared_fd);
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  if (extras.stderr_fd >= 0) posix_spawn_file_actions_adddup2(&actions, extras.stderr_fd, 2);
  posix_spawn_file_actions_adddup2(&actions, theirs, child_fd);
  if (shared >= 0) posix_spawn_file_actions_adddup2(&actions, shared, child_shared_fd);
  // No other descriptor of the oracle's reaches the candidate's process (a results file, a
  // client's socket), whether or not whoever opened it asked for close-on-exec.
  posix_spawn_file_actions_addclosefrom_np(&actions, shared >= 0 ? child_shared_fd + 1 : child_fd + 1);
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  // The worker runs the candidate: of kjudge's environment it gets only what it needs (never
  // KJUDGE_SECRET, which the secret hidden shapes are drawn with).
  std::vector<char*> environment;
  for (char** e = environ; *e != nullptr; ++e)
    if (the_worker_needs(*e)) environment.push_back(*e);
  environment.push_back(nullptr);
  const int rc =
      ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(theirs);
  if (shared >= 0) ::close(shared);
  if (rc != 0) {
    ::close(ours);
    throw InternalError(fmt::format("cannot start the worker {}: {}", argv[0], std::strerror(rc)));
  }
  pid_ = pid;
  fd_ = ours;
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) {
    // A polite exit first, so a healthy worker releases its CUDA context cleanly.
    (void)write_message(fd_, {{"op", "exit"}});
    (void)wait(std::chrono::milliseconds(2000));
  }
  if (fd_ >= 0) ::close(fd_);
}

std::optional<double> WorkerProcess::cpu_seconds() const {
  clockid_t clock;
  timespec t{};
  if (pid_ <= 0 || ::clock_getcpuclockid(pid_, &clock) != 0 || ::clock_gettime(clock, &t) != 0)
    return std::nullopt;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

void WorkerProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  status_ = exit_status_from_wait(st);
  pid_ = -1;
}

ExitStatus WorkerProcess::wait(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return status_.value_or(ExitStatus{});
  const auto until = Clock::now() + grace;
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      status_ = exit_status_from_wait(st);
      pid_ = -1;
      return *status_;
    }
    if (r < 0 && errno != EINTR) {
      pid_ = -1;
      status_ = ExitStatus{};
      return *status_;
    }
    if (Clock::now() >= until) {
      kill();
      return *status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Reply WorkerProcess::receive(std::optional<Clock::time_point> deadline) {
  return reply_from(read_message(fd_, decoder_, deadline));
}

Reply WorkerProcess::reply_from(ReadResult got) {
  Reply r;
  switch (got.status) {
  case ReadResult::Status::message:
    return classify_reply(got.message);
  case ReadResult::Status::timeout:
    kill();
    r.status = Reply::Status::timeout;
    r.detail = "no reply before the deadline; the worker was killed";
    return r;
  case ReadResult::Status::eof: {
    // The worker closed its end: it is exiting or gone. A short grace lets a worker that is
    // still tearing down report its real status instead of our SIGKILL.
    const ExitStatus s = wait(std::chrono::milliseconds(5000));
    r.status = Reply::Status::died;
    r.detail = fmt::format("the worker {} ({})", s.describe(), got.error);
    return r;
  }
  case ReadResult::Status::malformed:
  case ReadResult::Status::error:
    kill();
    r.status = Reply::Status::protocol;
    r.detail = got.error;
    return r;
  }
  return r;
}

Reply WorkerProcess::hello(std::optional<Clock::time_point> deadline) {
  if (pid_ <= 0) {
    Reply r;
    r.status = Reply::Status::died;
    r.detail = "the worker is not running";
    return r;
  }
  return receive(deadline);
}

bool WorkerProcess::send(const nlohmann::json& message, Reply& dead) {
  if (pid_ > 0 && write_message(fd_, message)) return true;
  dead.status = Reply::Status::died;
  const ExitStatus s = wait(std::chrono::milliseconds(5000));
  dead.detail = fmt::format("the worker {} before the request", s.describe());
  return false;
}

Reply WorkerProcess::request(const nlohmann::json& message,
                             std::optional<Clock::time_point> deadline) {
  Reply r;
  if (!send(message, r)) return r;
  return receive(deadline);
}

Reply WorkerProcess::request_within_cpu_time(const nlohmann::json& message,
                                             const CpuDeadline& limit) {
  // The worker's CPU time is read from outside it (a candidate's code cannot change it), every
  // slice of the wait; where it cannot be read, the wall-clock time waited stands in for it.
  const std::optional<double> cpu_start = cpu_seconds();
  const auto wall_start = Clock::now();
  auto used_s = [&] {
    const std::optional<double> now = cpu_start ? cpu_seconds() : std::nullopt;
    return now ? *now - *cpu_start
               : std::chrono::duration<double>(Clock::now() - wall_start).count();
  };
  Reply r;
  if (!send(message, r)) return r;
  const auto backstop = deadline_after(limit.backstop_s);
  for (;;) {
    ReadResult got =
        read_message(fd_, decoder_, std::min(backstop, Clock::now() + kCpuDeadlineSlice));
    if (got.status != ReadResult::Status::timeout) return reply_from(std::move(got));
    const double used = used_s();
    const bool past_cpu = used >= limit.cpu_s;
    if (!past_cpu && Clock::now() < backstop) continue;
    kill();
    r.status = Reply::Status::timeout;
    if (past_cpu) {
      r.limit = Reply::Limit::cpu;
      r.detail = fmt::format(
          "the run passed its deadline of {:.2f} s of the worker's CPU time (all its threads)",
          limit.cpu_s);
    } else {
      // Less CPU than its deadline in a backstop's worth of wall-clock time (a multiple of the
      // deadline): the worker mostly did not run. Nothing a candidate computes gets here on a
      // machine that gives it a fair share of a core.
      r.limit = Reply::Limit::backstop;
      r.detail = fmt::format(
          "the run used {:.2f} s of its {:.2f} s of CPU time in the {:.2f} s of wall-clock time "
          "of its backstop: it was blocked (waiting or stopped, not computing) for most of "
          "that time",
          used, limit.cpu_s, limit.backstop_s);
    }
    return r;
  }
}

} // namespace kj::judge
