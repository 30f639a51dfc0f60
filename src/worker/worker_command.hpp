// The command line of a worker process: what the judge spawns (`kjudge --worker ...`) and what
// the worker's main reads back, written and parsed in one place so the two cannot drift.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kj::judge {

struct WorkerCommand {
  enum class Kind { cuda, compile_only, host };
  Kind kind = Kind::cuda;
  int device = 0;                     // cuda: the device it opens
  std::uint64_t memory_cap_bytes = 0; // compile_only: its address space (0: no cap)
  std::filesystem::path module_dir;   // host: the module cache, all it may read
  int fd = -1;                        // parsed: its end of the socketpair
  int arena_fd = -1;                  // parsed, host: the shared arena
};

WorkerCommand cuda_worker_command(int device);
WorkerCommand compile_worker_command(std::uint64_t memory_cap_bytes);
WorkerCommand host_worker_command(const std::filesystem::path& module_dir);

// `self_exe --worker ...` with "{fd}" (and for the host worker "{shared_fd}") where
// WorkerProcess puts the inherited descriptors' numbers.
std::vector<std::string> worker_argv(const std::filesystem::path& self_exe,
                                     const WorkerCommand& command);

// The arguments after "--worker", as worker_argv wrote them. Throws SpecError naming the
// argument that is unknown, malformed or missing.
WorkerCommand parse_worker_args(const std::vector<std::string>& args);

} // namespace kj::judge
