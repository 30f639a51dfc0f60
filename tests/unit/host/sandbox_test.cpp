// The host worker's confinement, in a forked child (it cannot be undone): what a kernel needs
// still works (an open pipe, memory, kjudge's block threads), and every way out an attacker
// tried is refused: files (the judge's /proc memory, /etc), signals to the parent, sockets,
// exec, fork, new threads, ptrace; a module in the readable folder loads before the seal and
// nothing opens after it.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/host_backend.hpp"

namespace {

namespace fs = std::filesystem;

fs::path module_cache() { return fs::temp_directory_path() / "kjudge_host_test_cache"; }

kj::HostSandbox sandbox_reading(std::vector<fs::path> readable) {
  return kj::host_worker_sandbox(std::move(readable), 4);
}

// Runs `body` in a forked child after confine_host_worker; the child writes one line per check
// to a pipe ("ok NAME" or "bad NAME: why"), read back here.
std::string in_sandbox(void (*body)(int fd), const kj::HostSandbox& sandbox = sandbox_reading({})) {
  int p[2];
  if (::pipe(p) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    if (const std::string gap = kj::confine_host_worker(sandbox); !gap.empty()) {
      const std::string m = "bad sandbox: " + gap + "\n";
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

void expect_refused(int fd, const std::string& name, long rc) {
  say(fd, rc < 0 ? "ok " + name : "bad " + name + ": allowed");
}

void expect_all_ok(const std::string& out, std::initializer_list<const char*> checks) {
  for (const char* check : checks)
    EXPECT_NE(out.find(std::string("ok ") + check + "\n"), std::string::npos) << check << "\n"
                                                                             << out;
  EXPECT_EQ(out.find("bad"), std::string::npos) << out;
}

void count_up(void* c) { static_cast<std::atomic<int>*>(c)->fetch_add(1); }

TEST(HostSandbox, KeepsWhatAKernelNeedsAndRefusesEveryWayOut) {
  const std::string out = in_sandbox([](int fd) {
    say(fd, "ok write");
    void* m = ::mmap(nullptr, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    say(fd, m != MAP_FAILED ? "ok mmap" : "bad mmap");
    std::atomic<int> ran{0};
    kj::run_on_block_threads(4, count_up, &ran);
    say(fd, ran == 4 ? "ok block threads" : "bad block threads: " + std::to_string(ran.load()));
    const pid_t parent = ::getppid();
    // The judge's memory (the attack that read the reference's output), its maps, and files.
    expect_refused(fd, "parent memory", ::open(("/proc/" + std::to_string(parent) + "/mem").c_str(), O_RDONLY));
    expect_refused(fd, "parent maps", ::open(("/proc/" + std::to_string(parent) + "/maps").c_str(), O_RDONLY));
    expect_refused(fd, "own environ", ::open("/proc/self/environ", O_RDONLY));
    expect_refused(fd, "etc", ::open("/etc/hostname", O_RDONLY));
    expect_refused(fd, "ptrace", ::ptrace(PTRACE_ATTACH, parent, nullptr, nullptr));
    // Killing or freezing the judge.
    expect_refused(fd, "kill parent", ::kill(parent, SIGKILL));
    expect_refused(fd, "stop parent", ::kill(parent, SIGSTOP));
    expect_refused(fd, "tgkill parent", ::syscall(SYS_tgkill, parent, parent, SIGTERM));
    expect_refused(fd, "kill everyone", ::kill(-1, SIGKILL));
    expect_refused(fd, "kill group", ::kill(0, SIGKILL));
    // Threads of its own (the forged host bench timing), processes, sockets.
    std::thread* t = nullptr;
    try {
      t = new std::thread([] {});
    } catch (const std::system_error&) {
    }
    say(fd, t == nullptr ? "ok thread" : "bad thread: started");
    expect_refused(fd, "socket", ::socket(AF_UNIX, SOCK_STREAM, 0));
    char* const argv[] = {const_cast<char*>("/bin/true"), nullptr};
    expect_refused(fd, "execve", ::execve("/bin/true", argv, nullptr));
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    expect_refused(fd, "fork", child);
    // Its own signals still arrive (abort must work).
    say(fd, ::kill(::getpid(), 0) == 0 ? "ok signal self" : "bad signal self");
  });
  expect_all_ok(out, {"write", "mmap", "block threads", "parent memory", "parent maps", "own environ",
                      "etc", "ptrace", "kill parent", "stop parent", "tgkill parent",
                      "kill everyone", "kill group", "thread", "socket", "execve", "fork",
                      "signal self"});
}

// Before the seal, files of the readable folder open to read (dlopen of the module), never to
// write; after it nothing opens.
TEST(HostSandbox, TheReadableFolderOpensToReadUntilTheSeal) {
  const fs::path dir = module_cache() / "sandbox_probe";
  fs::create_directories(dir);
  std::ofstream(dir / "probe.txt") << "x";
  static std::string probe;
  probe = (dir / "probe.txt").string();
  const std::string out = in_sandbox(
      [](int fd) {
        const int readable = ::open(probe.c_str(), O_RDONLY | O_CLOEXEC);
        say(fd, readable >= 0 ? "ok read-only open"
                              : std::string("bad read-only open: ") + std::strerror(errno));
        if (readable >= 0) ::close(readable);
        expect_refused(fd, "open for writing", ::open(probe.c_str(), O_WRONLY));
        expect_refused(fd, "create", ::open((probe + ".new").c_str(), O_WRONLY | O_CREAT, 0600));
        kj::seal_host_worker();
        say(fd, "ok sealed");
        expect_refused(fd, "open after the seal", ::open(probe.c_str(), O_RDONLY));
      },
      sandbox_reading({dir}));
  expect_all_ok(out, {"read-only open", "open for writing", "create", "sealed",
                      "open after the seal"});
}

const fs::path* g_shared_object = nullptr;

// The worker's order: confined, then the module loaded from the readable folder, then sealed,
// then launched on the block threads.
TEST(HostSandbox, AModuleLoadedInsideTheSandboxRunsUnderIt) {
  kj::HostCompileOptions o;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cuda_include = "/usr/local/cuda/include";
  o.cache_dir = module_cache();
  static const fs::path so = kj::build_host_module(R"(
__global__ void iota(int* y) {
  __shared__ int base;
  if (threadIdx.x == 0) base = blockIdx.x * blockDim.x;
  __syncthreads();
  y[base + threadIdx.x] = base + threadIdx.x;
}
)",
                                                   "iota.cu", {"iota"}, o);
  g_shared_object = &so;
  const std::string out = in_sandbox(
      [](int fd) {
        try {
          const kj::HostModule module(*g_shared_object);
          kj::seal_host_worker();
          std::vector<int> y(64 * 32, -1);
          int* py = y.data();
          void* args[] = {&py};
          const unsigned grid[3] = {64, 1, 1}, block[3] = {32, 1, 1};
          const std::string error = module.launch(0, grid, block, 0, args, 4);
          bool right = error.empty();
          for (int i = 0; i < 64 * 32; ++i) right = right && y[static_cast<std::size_t>(i)] == i;
          say(fd, right ? "ok launch" : "bad launch: " + error);
        } catch (const std::exception& e) {
          say(fd, std::string("bad load: ") + e.what());
        }
      },
      sandbox_reading({module_cache() / "host"}));
  EXPECT_EQ(out, "ok launch\n");
}

} // namespace
