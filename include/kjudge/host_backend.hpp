// The host backend (DESIGN.md "Backends"): a CUDA C++ source run on the CPU. The source is
// rewritten by the lexer (every `__shared__` declaration becomes per-block storage; constructs
// the CPU cannot run are refused with their place), compiled by the host compiler against
// kjudge/host/cuda_emulation.hpp into a shared object that holds the whole runtime (threads of
// a block as fibers, blocks over CPU threads), and loaded with dlopen. Launches take the
// arguments as cuLaunchKernel does: an array of pointers to each argument's value.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/error.hpp"

namespace kj {

// A construct the host backend cannot run: "unsupported on host backend: inline PTX (asm) at
// cand.cu:12". Never a wrong verdict: the caller reports it as such.
class UnsupportedOnHost : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The source as the host compiler compiles it: each `__shared__` declaration replaced, on its
// own line, by a reference to per-block storage (so line numbers stay the source's), and, at
// the end, one entry per name expression plus the `kj_host_launch` the loader calls. Throws
// UnsupportedOnHost for inline PTX, tensor-core instructions, grid-wide synchronisation,
// cooperative groups and CUB, and for a `__shared__` declaration it cannot read.
std::string rewrite_for_host(std::string_view source, std::string_view file_name,
                             const std::vector<std::string>& expressions);

struct HostCompileOptions {
  std::filesystem::path kjudge_include; // folder holding kjudge/ (device.cuh, host/)
  std::filesystem::path cuda_include;   // the toolkit's include folder (cuda_fp16.h, ...)
  std::filesystem::path cache_dir;      // where sources and shared objects go; required
  std::string compiler = "g++";
  std::vector<std::string> flags;       // extra flags, after kjudge's own
  // Race detection: built with ThreadSanitizer (-fsanitize=thread -g), each CUDA thread a
  // sanitizer fiber (see cuda_emulation.hpp). Such a module runs only in a process started with
  // the sanitizer's runtime preloaded (tsan_runtime()); a race is its report on stderr, naming
  // both accesses in the candidate's source.
  bool race_detection = false;
};

// The ThreadSanitizer runtime of `compiler` (for LD_PRELOAD), or empty when it has none.
std::filesystem::path tsan_runtime(const std::string& compiler = "g++");

// A loaded shared object made from one source.
class HostModule {
public:
  explicit HostModule(const std::filesystem::path& shared_object);
  ~HostModule();
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;

  // The kernels in the order of the expressions given to rewrite_for_host.
  int kernel_count() const;
  // An address inside the module's code (for warming a symboliser up while files can be read).
  const void* code_address() const { return reinterpret_cast<const void*>(launch_); }
  // Runs kernel `index` over the grid with `workers` CPU threads. Returns "" on success, else
  // what went wrong (an exception in a kernel thread, threads of a block at different barriers).
  std::string launch(int index, const unsigned grid[3], const unsigned block[3],
                     unsigned shared_bytes, void** args, unsigned workers) const;

private:
  void* handle_ = nullptr;
  int (*count_)() = nullptr;
  int (*launch_)(int, const unsigned*, const unsigned*, unsigned, void**, unsigned, char*,
                 unsigned long) = nullptr;
};

// Rewrite and compile, or find in the cache (the key covers the rewritten text, the compiler's
// version line, the flags and the emulation header); the shared object's path. Throws
// UnsupportedOnHost, or CompileError (kjudge/nvrtc.hpp) with the compiler's log when the host
// compiler refuses it.
std::filesystem::path build_host_module(std::string_view source, std::string_view file_name,
                                        const std::vector<std::string>& expressions,
                                        const HostCompileOptions& options);
// build_host_module, then load it here.
std::unique_ptr<HostModule> compile_host_module(std::string_view source, std::string_view file_name,
                                                const std::vector<std::string>& expressions,
                                                const HostCompileOptions& options);

// One access of a race, as ThreadSanitizer reported it.
struct RaceAccess {
  std::string kind;   // "read", "write", "atomic write", ...
  int size = 0;       // bytes
  std::string place;  // "cand.cu:16": the first frame in the candidate's source; may be empty
  std::string thread; // "block (1,0,0) thread (3,0,0)" (or the sanitizer's name for it)
};
struct RaceReport {
  RaceAccess current, previous;
  // "data race on 4 bytes: a read at cand.cu:16 by block (1,0,0) thread (0,0,0), and an earlier
  // write at cand.cu:16 by block (0,0,0) thread (0,0,0), with no barrier or atomic between them"
  std::string message() const;
};
// The first race in a ThreadSanitizer log (a host module's stderr under race detection), with
// places looked up in `file_name`'s lines; nullopt when the log holds no complete race report.
std::optional<RaceReport> parse_race_report(std::string_view text, std::string_view file_name);

// Confine the calling process (the host worker, after its setup) with a seccomp filter: reads
// and writes on open descriptors, memory mapping, futexes, time, signals, its own threads and
// exit stay allowed; everything else (open, exec, fork, sockets, ...) fails with EPERM. Sets
// no_new_privs. Irreversible; throws std::runtime_error when the filter cannot be loaded.
// Filters stack: the worker enters `loading` before dlopen (which runs the candidate's static
// initialisers and needs to open files for reading), then `running`, which takes that away.
enum class SandboxStage { loading, running };
void enter_host_sandbox(SandboxStage stage = SandboxStage::running);

} // namespace kj
