// An untrusted kernel (the candidate, or the old kernel of --against) as the check drives it on
// either backend (KernelUnderTest), what one run of it yields (RunOutcome), and the pieces both
// backends' runners share: the compile in a compile-only worker, the plan of one run, a failed
// reply read as the run's outcome.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "judge/cuda/buffer_pool.hpp"
#include "launch/marshal.hpp"
#include "worker/messages.hpp"
#include "judge/case_oracle.hpp"
#include "worker/spare_workers.hpp"
#include "judge/check_settings.hpp"
#include "kjudge/host_backend.hpp"
#include "judge/trace.hpp"
#include "worker/worker_command.hpp"
#include "worker/worker_process.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/verdict.hpp"

namespace kj::judge {


// A failure before any case: compile_error, launch_error (the plan does not fit the kernels),
// or internal (no worker).
struct StartFailure {
  Reason reason = Reason::internal;
  std::string message;
  // The host backend cannot run this kernel ("unsupported on host backend: ..."): the
  // candidate's FAIL(forbidden_construct), the --against kernel's SKIP.
  bool unsupported = false;
};

// One run of one case, as the oracle saw it.
struct RunOutcome {
  // crash, timeout, launch_error, internal: it did not run (no outputs). oob_write,
  // input_modified: it ran and damaged memory (outputs read all the same). none: it ran clean.
  Reason reason = Reason::none;
  std::string message;
  std::vector<std::string> oob;             // one message per damaged buffer
  std::vector<std::string> inputs_modified; // one message per changed input
  // Per problem output, when it ran: on the host backend in `outputs`; on CUDA in
  // `device_outputs` (copied out of the worker's memory into the oracle's), and in `outputs`
  // only after outputs_to_host.
  std::vector<HostTensor> outputs;
  std::vector<PooledBuffer> device_outputs;
  std::vector<bool> poisoned;               // per output: filled with run's poison
  double deadline_s = 0;
  // Host backend: the launches' CPU time (summed over the worker's CPU threads) and wall time.
  double cpu_ms = 0, wall_ms = 0;
};

// A run that left no outputs: it failed to start, crashed, timed out, or (host backend) died
// of a race.
inline bool did_not_run(const RunOutcome& r) {
  return r.reason == Reason::crash || r.reason == Reason::timeout ||
         r.reason == Reason::launch_error || r.reason == Reason::internal ||
         (r.reason != Reason::none && r.outputs.empty() && r.device_outputs.empty());
}

// Bench on the GPU: one timed run per visit, visit j on the worker's buffer set j.
struct TimedRound {
  Reason reason = Reason::none; // none, or why the round did not run (then no runs)
  std::string message;
  std::vector<RunOutcome> runs; // per visit: damage and the outputs (device_outputs)
  std::vector<double> ms;       // per visit: the plan's time between two events
  std::vector<LaunchResources> resources; // per launch of the plan
  std::uint64_t memory_bytes = 0;         // a run's inputs, outputs and scratch
};

// An untrusted kernel as the check drives it, on either backend.
class KernelUnderTest {
public:
  virtual ~KernelUnderTest() = default;
  // Compile, start a worker and load; nullopt when the kernels loaded and the plan fits them.
  virtual std::optional<StartFailure> start() = 0;
  // Run case `c` (run index 0 or 1 picks the poison and the red zones' byte).
  virtual RunOutcome run(const Case& c, const CaseData& data, int run_index) = 0;
  // A timed run (bench): the same as run, in the build that is timed (never the host
  // backend's checked build, whose time is the checks').
  virtual RunOutcome timed_run(const Case& c, const CaseData& data, int run_index) {
    return run(c, data, run_index);
  }
  // Bench on the GPU: run case `c` on buffer set `set` (made for it when it holds other
  // buffers), untimed; the sets the timed rounds use are made this way.
  virtual RunOutcome run_on_set(const Case& c, const CaseData& data, int run_index, int set) {
    (void)set;
    return run(c, data, run_index);
  }
  // Bench on the GPU: one timed run of `c` per visit, visit j on set j (made by run_on_set),
  // refilled with the visit's inputs, poison and red zones, each run after an L2 flush of
  // `flush_bytes`; then every set read as after a run. Backends without a GPU timing loop
  // answer internal.
  virtual TimedRound timed_round(const Case& c, const std::vector<const CaseData*>& visits,
                                 int run_index, std::uint64_t flush_bytes) {
    (void)c, (void)visits, (void)run_index, (void)flush_bytes;
    TimedRound r;
    r.reason = Reason::internal;
    r.message = "this backend has no GPU timing loop";
    return r;
  }
  // Whether a worker lost to a crash can be replaced.
  virtual bool restartable() const = 0;
  // Host backend: the cases whose first run goes to the race-detecting build (the check picks
  // them); other backends have no such build.
  virtual void set_race_screened(const std::set<const Case*>* cases) { (void)cases; }
  // Host backend: the lines of the kernel's source its runs have reached so far; nullopt with
  // `why` where that is not measured.
  virtual std::optional<LineCoverage> lines_reached(std::string& why) {
    why = "this backend does not measure coverage";
    return std::nullopt;
  }
};

// The pieces both backends' runners share.

// NVRTC in a compile-only worker process (memory cap, deadline), or, when the compile cache
// holds the module, no compiler at all: the module's symbols (and CUBIN), or the candidate's
// compile_error / launch_error, or internal. `index_of_launch` gets
// the distinct expression of each launch.
std::optional<StartFailure> compile_in_worker(const std::string& role, const Candidate& kernel,
                                              const Problem& problem, const CheckSettings& settings,
                                              int arch, bool arch_specific,
                                              std::vector<std::size_t>& index_of_launch,
                                              ModuleMessage& module);

// The tensors (inputs, outputs, the kernel's scratch) and limits a candidate's plan is held to.
PlanContext candidate_plan_context(const std::string& role, const Problem& problem,
                                   const Candidate& kernel, const DeviceInfo& device);

// The backend-neutral part of one run's request: the launches marshalled for the case, and
// every buffer (inputs, outputs, scratch) with its size and fill; `out.poisoned` gets the
// outputs holding this run's poison. False (with `out` a launch_error) when the plan does not
// fit the case.
bool plan_run(const std::string& role, const Candidate& kernel, const Problem& problem,
              const std::vector<LaunchSpec>& launches,
              const std::vector<const PlanKernel*>& per_launch, const PlanContext& context,
              const CaseData& data, int run_index, const CheckSettings& settings,
              RunRequest& request, RunOutcome& out);

// A reply that is not ok, as the run's outcome (timeout, crash, launch_error, internal).
// `worker_lost` tells whether the worker must be replaced before the next run.
RunOutcome failed_run(const Reply& reply, const RunOutcome& planned, const Candidate& kernel,
                      double reference_s, const CheckSettings& settings, bool& worker_lost);

// The reason and message of a run that damaged red zones or inputs (none when neither).
void reason_from_damage(RunOutcome& out);

// A CUDA run's outputs copied to the host (`outputs`), for the host's comparisons; nothing to do
// for a run whose outputs are there already.
void outputs_to_host(RunOutcome& run, const Problem& problem, const std::vector<Shape>& shapes,
                     CUstream stream);

// A worker process for `argv`: a spare when the check keeps them (settings.asked.spare_workers), else
// started now.
std::unique_ptr<WorkerProcess> start_worker(const CheckSettings& settings,
                                            const WorkerCommand& command);

} // namespace kj::judge
