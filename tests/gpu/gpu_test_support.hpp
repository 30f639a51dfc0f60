// Shared pieces of the GPU tests: the skip rule (a test that needs a GPU SKIPs with the reason
// cuda_available gives, and FAILS instead when KJUDGE_REQUIRE_GPU=1, so a GPU machine never
// passes by skipping), one CUDA context and one BuiltinKernels per process, and child processes.
//
// Child processes: some tests must run part of their work in another process (CUDA IPC cannot
// open a handle in the process that exported it; a sticky error poisons the whole context).
// spawn_self starts this test binary again with posix_spawn (never a bare fork after cuInit),
// selecting only the current test and naming a role in KJ_GPU_TEST_CHILD; the test body checks
// child_role() first and plays that part. The child's fd 3 writes to Child::from_child and its
// fd 4 reads from Child::to_child.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "kjudge/builtin_kernels.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/nvrtc.hpp"

extern char** environ;

namespace kj::test {

inline bool gpu_required() {
  const char* v = std::getenv("KJUDGE_REQUIRE_GPU");
  return v != nullptr && std::string(v) == "1";
}

}  // namespace kj::test

// SKIP (or FAIL under KJUDGE_REQUIRE_GPU=1) when no GPU is usable. For test bodies and SetUp.
#define KJ_REQUIRE_GPU()                                                                       \
  do {                                                                                         \
    std::string kj_why_not_;                                                                   \
    if (!::kj::cuda_available(&kj_why_not_)) {                                                 \
      if (::kj::test::gpu_required())                                                          \
        FAIL() << "KJUDGE_REQUIRE_GPU=1 but no GPU is usable: " << kj_why_not_;                 \
      GTEST_SKIP() << "no usable GPU: " << kj_why_not_;                                        \
    }                                                                                          \
  } while (0)

namespace kj::test {

// One context for the whole process, made current on the main thread (gtest runs every test
// there). Never destroyed: the primary context must outlive every buffer a test leaks into a
// static, and the process exit releases it anyway.
inline CudaContext& gpu() {
  static CudaContext* const ctx = new CudaContext(0);
  return *ctx;
}

inline std::filesystem::path kjudge_include() {
  return std::filesystem::path(KJ_SOURCE_DIR) / "include";
}

// Compile options for the device of gpu(): its architecture, kjudge's headers, no cache (each
// test compiles what it loads, so the cache cannot hide a compile problem).
inline CompileOptions compile_options() {
  CompileOptions o;
  const DeviceInfo& info = gpu().info();
  o.arch = info.cc_major * 10 + info.cc_minor;
  o.kjudge_include = kjudge_include();
  return o;
}

inline const BuiltinKernels& builtins() {
  static const BuiltinKernels* const b = new BuiltinKernels(compile_options());
  return *b;
}

class GpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    KJ_REQUIRE_GPU();
    (void)gpu();
  }
  CUstream stream() const { return gpu().stream(); }
};

// ---- child processes --------------------------------------------------------------------------

inline std::string child_role() {
  const char* v = std::getenv("KJ_GPU_TEST_CHILD");
  return v != nullptr ? v : "";
}

struct Child {
  pid_t pid = -1;
  int from_child = -1;  // the child's fd 3
  int to_child = -1;    // the child's fd 4
};

// A close-on-exec copy of fd numbered 10 or above, so the child's dup2 onto 3 and 4 never meets
// a descriptor that already has that number.
inline int high_fd(int fd) {
  const int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  close(fd);
  return high;
}

inline Child spawn_self(const std::string& role) {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter =
      std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name();
  int up[2], down[2];  // up: child -> parent, down: parent -> child
  if (pipe2(up, O_CLOEXEC) != 0 || pipe2(down, O_CLOEXEC) != 0) return {};
  for (int* fd : {&up[0], &up[1], &down[0], &down[1]}) *fd = high_fd(*fd);

  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "KJ_GPU_TEST_CHILD=", 18) != 0) env_strings.emplace_back(*e);
  env_strings.push_back("KJ_GPU_TEST_CHILD=" + role);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  std::string filter_arg = filter;
  char* argv[] = {exe.data(), filter_arg.data(), nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, up[1], 3);
  posix_spawn_file_actions_adddup2(&actions, down[0], 4);
  Child c;
  const int rc = posix_spawn(&c.pid, exe.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(up[1]);
  close(down[0]);
  if (rc != 0) {
    close(up[0]);
    close(down[1]);
    return {};
  }
  c.from_child = up[0];
  c.to_child = down[1];
  return c;
}

// One line from fd (without the newline), or "" at end of file or after `timeout`.
inline std::string read_line(int fd, std::chrono::milliseconds timeout) {
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return "";
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char ch = 0;
    const ssize_t n = read(fd, &ch, 1);
    if (n <= 0) return "";
    if (ch == '\n') return line;
    line += ch;
  }
}

// The child's exit code; a signal gives 128 + its number; after `timeout` the child is killed
// and -1 returned. Closes the child's pipes.
inline int wait_child(Child& c, std::chrono::milliseconds timeout) {
  if (c.to_child >= 0) close(c.to_child);
  if (c.from_child >= 0) close(c.from_child);
  c.to_child = c.from_child = -1;
  if (c.pid <= 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(c.pid, &status, WNOHANG);
    if (r == c.pid) break;
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(c.pid, SIGKILL);
      waitpid(c.pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  c.pid = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace kj::test
