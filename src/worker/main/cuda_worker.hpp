// The worker's side of the protocol: what `kjudge --worker` does with each message. It loads the
// module the compile-only worker made (compile_worker.cpp; the source never comes here),
// allocates each buffer between two red zones, copies its inputs from the oracle's staging
// copies, fills outputs and scratch with the oracle's poison, launches the plan, synchronises
// and hands every allocation back by CUDA IPC handle. A "prepared" run (the same buffers as the
// previous run) keeps the allocations, which the oracle has refilled through its mappings of
// them, and only launches. A "time" (bench) runs the launches on several prepared sets, each
// after an L2 flush and between two CUDA events. It judges nothing: the oracle checks red zones, poison and inputs
// itself. A sticky CUDA error ends the session (the context is dead);
// any other launch error is reported and the session goes on.
//
// The session also runs inside the oracle for the `isolation` test switch (make_in_process_worker):
// then buffers travel as device pointers of the shared context instead of IPC handles.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/messages.hpp"
#include "worker/worker_process.hpp"
#include "kjudge/cuda.hpp"

namespace kj::judge {

class WorkerSession {
public:
  // Retains the device's primary context. `in_process`: the oracle's own process (no IPC).
  WorkerSession(int device, bool in_process);
  ~WorkerSession();
  WorkerSession(const WorkerSession&) = delete;
  WorkerSession& operator=(const WorkerSession&) = delete;

  // {"ready": true, ...} with the device's name and compute capability.
  nlohmann::json greeting() const;
  // The reply to one request; nullopt for "exit" (no reply). Never throws for the candidate's
  // faults; they are error replies.
  std::optional<nlohmann::json> handle(const nlohmann::json& request);
  // After a sticky CUDA error or "exit": the process must end.
  bool finished() const { return finished_; }
  // The memory file the process's stdout and stderr go to (worker_main), where the driver
  // prints a failed device assertion; -1 (the in-process worker): none.
  void capture_output(int fd) { output_fd_ = fd; }
  const DeviceInfo& device() const { return ctx_.info(); }

private:
  struct Allocation {
    std::string name;
    DeviceBuffer buffer;
    std::size_t redzone = 0;
    std::size_t bytes = 0;
    std::string ipc; // the exported handle (hex), made once
    CUdeviceptr inner() const { return buffer.ptr() + redzone; }
  };
  // Whether `request`'s buffer set holds exactly the buffers it names (names, sizes, red
  // zones, in order).
  bool holds_buffers_of(const RunRequest& request) const;
  nlohmann::json allocate(const RunRequest& request);

  nlohmann::json load(const ModuleMessage& module);
  nlohmann::json run(const RunRequest& request);
  nlohmann::json time(const TimeRequest& request);
  // The reply to a CUDA error from the launches (or the synchronisation after them): a sticky
  // one is a crash and ends the session; another is a launch_error, once the launches before
  // the failing one have finished.
  nlohmann::json launch_failure(const CudaError& e, const std::string& where);
  // What a sticky error that stopped the candidate's kernel says beyond its name: a failed
  // device assertion with the candidate's text (quoted), a trap; "" for any other error.
  std::string kernel_stop(const CudaError& e);
  // What the process printed since the last call (the first 64 KiB), then forgotten.
  std::string take_output();
  std::map<std::string, CUdeviceptr> pointers_of(int set) const;

  CudaContext ctx_;
  bool in_process_;
  bool finished_ = false;
  int output_fd_ = -1;
  std::unique_ptr<CudaLibrary> library_;
  std::map<std::string, CUfunction> functions_; // by lowered name
  std::array<std::vector<Allocation>, kBufferSets> sets_; // RunRequest::buffer_set
  DeviceBuffer flush_;                                       // "time": the L2 flush's target
  void release_buffers() {
    for (auto& set : sets_) set.clear();
  }
};

} // namespace kj::judge
