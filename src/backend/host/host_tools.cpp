// The host toolchain run for the host backend (host_tools.hpp): a plain spawn for kjudge's own
// queries, and each step of a candidate's build as a confined child (an empty environment,
// Landlock over what it may read and write, a deadline and a memory cap) whose failures become
// CompileError or HostCompileLimit.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "backend/host/host_tools.hpp"
#include "backend/host/landlock.hpp"
#include "kjudge/host_backend.hpp"
#include "kjudge/nvrtc.hpp"

extern char** environ;

namespace kj::detail {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

int run(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> raw;
  std::vector<std::string> args = argv;
  for (auto& a : args)
    raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addclosefrom_np(&actions, 3); // nothing else of kjudge's
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

fs::path resolve_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return fs::absolute(program);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(p.c_str(), X_OK) == 0) return fs::absolute(p);
  }
  throw CompileError(fmt::format("the host compiler '{}' is not on PATH", program), "");
}

namespace {

struct ConfinedRun {
  std::vector<landlock::Access> reachable;
  fs::path temporary_dir;
  double deadline_s = 60;
  std::uint64_t memory_bytes = 0;
};
enum class Ended { normally, deadline, not_started };
struct RunResult {
  Ended ended = Ended::normally;
  int status = 0; // the exit status, or 128 + the signal
};

// Runs argv (argv[0] absolute) in a child confined by `limits`: no environment but TMPDIR, only the
// Landlock rules' paths, an address-space cap, its own process group killed whole at the
// deadline; stdout and stderr into `log`. Forked, not spawned, so the child can restrict itself
// before exec; between the two it makes only system calls.
RunResult run_confined(const std::vector<std::string>& argv, const fs::path& log,
                       const ConfinedRun& limits) {
  const landlock::Ruleset rules(limits.reachable);
  const int log_fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0)
    throw CompileError(fmt::format("cannot open {}: {}", log.string(), std::strerror(errno)), "");
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (auto& a : args)
    raw.push_back(a.data());
  raw.push_back(nullptr);
  // None of kjudge's environment (it may hold KJUDGE_SECRET, or CPATH and the like that the
  // compiler would obey): only where its temporary files go, its own build folder.
  std::string tmpdir = "TMPDIR=" + limits.temporary_dir.string();
  char* environment[] = {tmpdir.data(), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    if (limits.memory_bytes) {
      const rlimit as{limits.memory_bytes, limits.memory_bytes};
      ::setrlimit(RLIMIT_AS, &as);
    }
    const auto cpu = static_cast<rlim_t>(limits.deadline_s) + 5;
    const rlimit cpu_limit{cpu, cpu};
    ::setrlimit(RLIMIT_CPU, &cpu_limit);
    if (rules.restrict_self() != 0) ::_exit(125);
    ::close_range(3, ~0u, 0); // nothing else of kjudge's (the ruleset's own descriptor included)
    ::execve(raw[0], raw.data(), environment);
    ::_exit(127);
  }
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) return {Ended::not_started, -1};
  (void)::setpgid(pid, pid); // as the child does: no window where the group does not exist
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(limits.deadline_s));
  for (auto pause = std::chrono::microseconds(200);;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      ::kill(-pid, SIGKILL); // what the compiler driver left behind
      return {Ended::normally, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)};
    }
    if (r < 0 && errno != EINTR) return {Ended::normally, -1};
    if (std::chrono::steady_clock::now() >= until) {
      ::kill(-pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return {Ended::deadline, 128 + SIGKILL};
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
}

std::string first_lines_of(const std::string& text, int lines) {
  std::size_t at = 0;
  for (int i = 0; i < lines && at != std::string::npos; ++i) {
    at = text.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  return at == std::string::npos ? text : text.substr(0, at);
}

// What the candidate's compile may reach: the toolchain and system folders to read and run, the
// headers and libraries it is given, its own build folder to write, and nothing else (no /proc,
// /etc, home or work tree).
std::vector<landlock::Access> compile_reach(const fs::path& compiler, const fs::path& build_dir,
                                            const HostCompileOptions& options) {
  std::vector<landlock::Access> reach = {
      {"/usr", false, true}, {"/lib", false, true}, {"/lib64", false, true},
      {compiler.parent_path().parent_path(), false, true},
      {"/etc/ld.so.cache"}, {options.kjudge_include}, {"/dev/null", true},
      {build_dir, true}};
  if (!options.cuda_include.empty()) reach.push_back({fs::weakly_canonical(options.cuda_include)});
  for (const auto& d : host_include_dirs())
    reach.push_back({d});
  for (const auto& d : host_library_dirs())
    reach.push_back({d});
  return reach;
}

} // namespace

std::string run_host_tool(const std::vector<std::string>& argv, const fs::path& log,
                          const fs::path& build_dir, const HostCompileOptions& options,
                          std::string_view file_name, std::string_view refusal,
                          const std::function<void()>& remove) {
  const fs::path compiler = resolve_program(options.compiler);
  const RunResult r =
      options.confine_compile
          ? run_confined(argv, log,
                         ConfinedRun{compile_reach(compiler, build_dir, options), build_dir,
                                     options.deadline_s, options.memory_bytes})
          : RunResult{Ended::normally, run(argv, log)};
  std::string messages = read_file(log);
  if (r.ended == Ended::normally && r.status == 0) return messages;
  if (remove) remove();
  if (r.ended == Ended::deadline)
    throw HostCompileLimit(fmt::format("the host compile of {} ran past its deadline of {} s",
                                       file_name, options.deadline_s));
  if (messages.find("memory exhausted") != std::string::npos ||
      messages.find("std::bad_alloc") != std::string::npos ||
      messages.find("out of memory") != std::string::npos)
    throw HostCompileLimit(fmt::format("the host compile of {} ran past its memory cap of {} MiB",
                                       file_name, options.memory_bytes >> 20));
  throw CompileError(fmt::format("{} {} (exit {})", refusal, file_name, r.status),
                     first_lines_of(messages, 30));
}

} // namespace kj::detail
