// The host worker's seccomp filter, in a child process (the filter cannot be undone): what a
// kernel needs still works (writing to an open pipe, new threads, memory), what reaches outside
// fails with EPERM (opening a file, starting a program, forking, making a socket); and a kernel
// loaded before the filter runs under it on several CPU threads.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/host_backend.hpp"

namespace {

// Runs `body` in a forked child after enter_host_sandbox; the child writes one line per check
// to a pipe ("ok NAME" or "bad NAME: why"), read back here.
std::string in_sandbox(void (*body)(int fd), kj::SandboxStage stage = kj::SandboxStage::running) {
  int p[2];
  if (::pipe(p) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    try {
      kj::enter_host_sandbox(stage);
    } catch (const std::exception& e) {
      const std::string m = std::string("bad sandbox: ") + e.what() + "\n";
      (void)!::write(p[1], m.data(), m.size());
      ::_exit(1);
    }
    body(p[1]);
    ::_exit(0);
  }
  ::close(p[1]);
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return out;
}

void say(int fd, const std::string& line) { (void)!::write(fd, (line + "\n").data(), line.size() + 1); }

void expect_refused(int fd, const char* name, int rc) {
  say(fd, rc < 0 && errno == EPERM ? std::string("ok ") + name
                                   : std::string("bad ") + name + ": " + std::strerror(errno));
}

TEST(HostSandbox, KeepsWhatAKernelNeedsAndRefusesTheRest) {
  const std::string out = in_sandbox([](int fd) {
    say(fd, "ok write");
    void* m = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    say(fd, m != MAP_FAILED ? "ok mmap" : "bad mmap");
    int value = 0;
    std::thread t([&] { value = 42; });
    t.join();
    say(fd, value == 42 ? "ok thread" : "bad thread");
    expect_refused(fd, "open", ::open("/etc/hostname", O_RDONLY));
    expect_refused(fd, "socket", ::socket(AF_INET, SOCK_STREAM, 0));
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    expect_refused(fd, "execve", ::execve("/bin/true", argv, nullptr));
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    expect_refused(fd, "fork", child);
  });
  for (const char* check : {"write", "mmap", "thread", "open", "socket", "execve", "fork"})
    EXPECT_NE(out.find(std::string("ok ") + check + "\n"), std::string::npos) << check << "\n"
                                                                             << out;
  EXPECT_EQ(out.find("bad"), std::string::npos) << out;
}

// The loading stage (dlopen runs the candidate's static initialisers) lets files be read, never
// written or created; the running stage stacked on it takes reading away too.
TEST(HostSandbox, TheLoadingStageReadsFilesOnlyAndTheRunningStageTakesThatAway) {
  const std::string out = in_sandbox(
      [](int fd) {
        const int readable = ::open("/etc/hostname", O_RDONLY | O_CLOEXEC);
        say(fd, readable >= 0 ? "ok read-only open" : std::string("bad read-only open: ") +
                                                          std::strerror(errno));
        if (readable >= 0) ::close(readable);
        expect_refused(fd, "open for writing", ::open("/tmp/kjudge_sandbox_probe", O_WRONLY | O_CREAT, 0600));
        expect_refused(fd, "open read-write", ::open("/etc/hostname", O_RDWR));
        try {
          kj::enter_host_sandbox(kj::SandboxStage::running);
          say(fd, "ok running stage");
        } catch (const std::exception& e) {
          say(fd, std::string("bad running stage: ") + e.what());
        }
        expect_refused(fd, "open after loading", ::open("/etc/hostname", O_RDONLY));
      },
      kj::SandboxStage::loading);
  for (const char* check : {"read-only open", "open for writing", "open read-write",
                            "running stage", "open after loading"})
    EXPECT_NE(out.find(std::string("ok ") + check + "\n"), std::string::npos) << check << "\n"
                                                                              << out;
  EXPECT_EQ(out.find("bad"), std::string::npos) << out;
}

const kj::HostModule* g_module = nullptr;

TEST(HostSandbox, AKernelLoadedBeforeRunsUnderIt) {
  kj::HostCompileOptions o;
  o.kjudge_include = std::filesystem::path(KJ_SOURCE_DIR) / "include";
  o.cuda_include = "/usr/local/cuda/include";
  o.cache_dir = std::filesystem::temp_directory_path() / "kjudge_host_test_cache";
  const auto m = kj::compile_host_module(R"(
__global__ void iota(int* y) {
  __shared__ int base;
  if (threadIdx.x == 0) base = blockIdx.x * blockDim.x;
  __syncthreads();
  y[base + threadIdx.x] = base + threadIdx.x;
}
)",
                                         "iota.cu", {"iota"}, o);
  g_module = m.get();
  const std::string out = in_sandbox([](int fd) {
    std::vector<int> y(64 * 32, -1);
    int* py = y.data();
    void* args[] = {&py};
    const unsigned grid[3] = {64, 1, 1}, block[3] = {32, 1, 1};
    const std::string error = g_module->launch(0, grid, block, 0, args, 2);
    bool right = error.empty();
    for (int i = 0; i < 64 * 32; ++i) right = right && y[static_cast<std::size_t>(i)] == i;
    say(fd, right ? "ok launch" : "bad launch: " + error);
  });
  EXPECT_EQ(out, "ok launch\n");
}

} // namespace
