// compile_host_module and HostModule (kjudge/host_backend.hpp): the host compiler run as a
// child process (posix_spawn, its messages captured to a file), its shared objects kept in a
// content-addressed cache next to the NVRTC one, and dlopen to load them.
#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <fstream>
#include <mutex>
#include <sstream>

#include "kjudge/host_backend.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/sha256.hpp"

extern char** environ;

namespace kj {

namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs argv with stdout and stderr into `log`; the exit status (-1 if it could not start).
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
  pid_t pid = -1;
  const int rc = posix_spawnp(&pid, raw[0], &actions, nullptr, raw.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The compiler's first --version line, part of the cache key.
std::string compiler_identity(const std::string& compiler, const fs::path& scratch) {
  static std::mutex mutex;
  const std::lock_guard lock(mutex);
  const fs::path log = scratch / "compiler-version.txt";
  if (run({compiler, "--version"}, log) != 0)
    throw CompileError(fmt::format("the host compiler '{}' does not run", compiler), "");
  const std::string text = read_file(log);
  return text.substr(0, text.find('\n'));
}

std::string first_lines_of(const std::string& text, int lines) {
  std::size_t at = 0;
  for (int i = 0; i < lines && at != std::string::npos; ++i) {
    at = text.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  return at == std::string::npos ? text : text.substr(0, at);
}

} // namespace

HostModule::HostModule(const fs::path& shared_object) {
  handle_ = ::dlopen(shared_object.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_)
    throw CompileError(fmt::format("cannot load {}: {}", shared_object.string(), ::dlerror()), "");
  count_ = reinterpret_cast<int (*)()>(::dlsym(handle_, "kj_host_kernel_count"));
  launch_ = reinterpret_cast<decltype(launch_)>(::dlsym(handle_, "kj_host_launch"));
  track_ = reinterpret_cast<decltype(track_)>(::dlsym(handle_, "kj_host_track"));
  cpu_ns_ = reinterpret_cast<decltype(cpu_ns_)>(::dlsym(handle_, "kj_host_last_launch_cpu_ns"));
  if (!count_ || !launch_ || !cpu_ns_) {
    ::dlclose(handle_);
    handle_ = nullptr;
    throw CompileError(fmt::format("{} has no kjudge entry points", shared_object.string()), "");
  }
}

HostModule::~HostModule() {
  if (handle_) ::dlclose(handle_);
}

int HostModule::kernel_count() const { return count_(); }

double HostModule::last_launch_cpu_ms() const { return static_cast<double>(cpu_ns_()) / 1e6; }

std::string HostModule::launch(int index, const unsigned grid[3], const unsigned block[3],
                               unsigned shared_bytes, void** args, unsigned workers) const {
  if (index < 0 || index >= count_()) return fmt::format("no kernel {}", index);
  char error[1024] = {0};
  if (launch_(index, grid, block, shared_bytes, args, workers, error, sizeof error) == 0) return "";
  return error[0] ? std::string(error) : std::string("the launch failed");
}

std::string HostModule::track(const void* lo, std::size_t bytes, const void* origin,
                              const std::vector<unsigned long>& spans, bool races) const {
  if (!track_) return "the module is not a checked build";
  const int rc = track_(lo, bytes, origin, spans.data(), static_cast<unsigned>(spans.size() / 2),
                        races ? 1 : 0);
  switch (rc) {
  case 0: return "";
  case 1: return fmt::format("too many buffers to track ({})", spans.size() / 2);
  case 2: return fmt::format("no memory for the shadow of {} bytes", bytes);
  default: return "a buffer lies outside the tracked range";
  }
}

void place_finding(ShadowFinding& finding, const fs::path& shared_object,
                   std::string_view file_name) {
  std::vector<ShadowAccess*> accesses = {&finding.current};
  if (finding.race) accesses.push_back(&finding.previous);
  std::vector<std::string> argv = {"addr2line", "-e", shared_object.string(), "-i", "-a"};
  for (const ShadowAccess* a : accesses)
    argv.push_back(fmt::format("{:#x}", a->pc));
  const fs::path log = fs::temp_directory_path() / fmt::format("kjudge-addr2line-{}-{}.txt",
                                                               ::getpid(), ::gettid());
  const int rc = run(argv, log);
  std::istringstream lines(read_file(log));
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0) return;
  // With -a each address is echoed ("0x..."), then its frames, the innermost first.
  int at = -1;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0x", 0) == 0) {
      ++at;
      continue;
    }
    if (at < 0 || at >= static_cast<int>(accesses.size())) continue;
    if (ShadowAccess& a = *accesses[static_cast<std::size_t>(at)]; a.place.empty())
      a.place = place_in_frame(line, file_name);
  }
}

fs::path build_host_module(std::string_view source, std::string_view file_name,
                           const std::vector<std::string>& expressions,
                           const HostCompileOptions& options) {
  if (options.cache_dir.empty())
    throw CompileError("the host backend needs a cache folder for its shared objects", "");
  const std::string text = rewrite_for_host(source, file_name, expressions);
  const fs::path dir = options.cache_dir / "host";
  fs::create_directories(dir);

  const fs::path emulation = options.kjudge_include / "kjudge" / "host" / "cuda_emulation.hpp";
  const std::string emulation_text = read_file(emulation);
  if (emulation_text.empty())
    throw CompileError(fmt::format("cannot read {}", emulation.string()), "");
  std::vector<std::string> argv = {options.compiler, "-std=c++20", "-O2", "-fPIC", "-shared",
                                   "-pthread", "-ffp-contract=off", "-w",
                                   "-I" + options.kjudge_include.string()};
  if (!options.cuda_include.empty()) argv.push_back("-I" + options.cuda_include.string());
  // The checked build: the sanitizer's instrumentation (a hook call per load and store) with
  // the hooks of cuda_emulation.hpp; compiled and linked apart, so the driver does not link
  // the sanitizer's own runtime.
  if (options.checked)
    argv.insert(argv.end(), {"-fsanitize=thread", "--param", "tsan-instrument-func-entry-exit=0",
                             "-g"});
  argv.insert(argv.end(), options.flags.begin(), options.flags.end());
  argv.insert(argv.end(), {"-include", "kjudge/host/cuda_emulation.hpp"});

  std::string key_text = compiler_identity(options.compiler, dir) + '\0';
  for (const auto& a : argv)
    key_text += a + '\0';
  key_text += sha256_hex(emulation_text) + '\0' + text;
  const std::string key = sha256_hex(key_text);
  const fs::path so = dir / (key + ".so");
  if (fs::exists(so)) return so;

  // A unique name per process and call, renamed into place: concurrent checks never see half a
  // file.
  static std::atomic<unsigned> serial{0};
  const std::string stem = fmt::format("{}.{}.{}", key, ::getpid(), serial++);
  const fs::path cpp = dir / (stem + ".cpp"), tmp_so = dir / (stem + ".so"),
                 log = dir / (stem + ".log");
  {
    std::ofstream f(cpp, std::ios::binary);
    // Messages name the candidate's file and lines.
    f << "#line 1 \"" << std::string(file_name) << "\"\n" << text;
  }
  const fs::path object = dir / (stem + ".o");
  int rc;
  if (options.checked) {
    argv.insert(argv.end(), {"-c", cpp.string(), "-o", object.string()});
    rc = run(argv, log);
    if (rc == 0)
      rc = run({options.compiler, "-shared", "-pthread", object.string(), "-o", tmp_so.string(),
                "-lboost_context"},
               log);
  } else {
    argv.insert(argv.end(), {cpp.string(), "-o", tmp_so.string(), "-lboost_context"});
    rc = run(argv, log);
  }
  const std::string messages = read_file(log);
  std::error_code ec;
  fs::remove(cpp, ec);
  fs::remove(object, ec);
  fs::remove(log, ec);
  if (rc != 0) {
    fs::remove(tmp_so, ec);
    throw CompileError(fmt::format("the host compiler refuses {} (exit {})", file_name, rc),
                       first_lines_of(messages, 30));
  }
  fs::rename(tmp_so, so, ec);
  if (ec) fs::remove(tmp_so, ec);
  return so;
}

std::unique_ptr<HostModule> compile_host_module(std::string_view source, std::string_view file_name,
                                                const std::vector<std::string>& expressions,
                                                const HostCompileOptions& options) {
  return std::make_unique<HostModule>(build_host_module(source, file_name, expressions, options));
}

} // namespace kj
