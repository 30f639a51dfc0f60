// An untrusted kernel source (the candidate, or the old kernel of --against) driven through a
// worker: compile it in a compile-only worker (its own process, memory cap, deadline; a module
// the compile cache holds is read without one), start the CUDA worker and load the module in
// it, then per case and run build the request (staging copies of the master inputs, poison, red
// zones; or, when the run needs the same buffers as the last, refill the worker's buffers
// through the oracle's mappings of them), wait with the watchdog's deadline, and read what the
// worker left where it lies, checking it in the oracle: red zones, input copies against the
// master, outputs copied into the oracle's memory. A worker that crashed or was killed is
// replaced before the next run and loads the same module again.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "judge/buffer_pool.hpp"
#include "judge/marshal.hpp"
#include "judge/messages.hpp"
#include "judge/oracle.hpp"
#include "judge/spare_workers.hpp"
#include "judge/trace.hpp"
#include "judge/worker_process.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/verdict.hpp"

namespace kj::judge {

struct RunnerOptions {
  std::filesystem::path self_exe; // spawned as `SELF --worker --fd N --device D`
  int device = 0;
  bool in_process = false; // the isolation test switch
  double startup_s = 60, compile_s = 300;
  std::uint64_t compile_memory_cap = kCompileMemoryCapBytes; // the compile process's memory
  double deadline_factor = 20, deadline_min_s = 1;
  // Host backend: race screening and exact bounds run the checked build (races are
  // `nondeterministic`, out-of-bounds accesses exact); its runs' deadlines are stretched by
  // `slowdown` (its cost over the uninstrumented reference). Exact bounds: every run checked.
  bool race_detection = false;
  bool exact_bounds = false;
  double slowdown = 1;
  std::string cache_dir, kjudge_include;
  PhaseTrace* trace = nullptr; // KJUDGE_TRACE: the parts of a run
  SpareWorkers* spares = nullptr; // workers started ahead of need (null: started when needed)
  // The most a run's buffers (inputs, outputs, scratch) may hold on this machine: the device's
  // memory, or half the host's. A plan past it is the candidate's launch_error (0: no cap).
  std::uint64_t memory_cap = 0;
  // Defences (off only under their test switches).
  bool redzone = true, poison = true, input_hash = true, static_scan = true;
};

// A failure before any case: compile_error, launch_error (the plan does not fit the kernels),
// or internal (no worker).
struct StartFailure {
  Reason reason = Reason::internal;
  std::string message;
  // The host backend cannot run this kernel ("unsupported on host backend: ..."): no verdict on
  // the candidate, a SKIP.
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
};

// The pieces both backends' runners share.

// NVRTC in a compile-only worker process (memory cap, deadline), or, when the compile cache
// holds the module, no compiler at all: the module's symbols (and CUBIN), or the candidate's
// compile_error / launch_error, or internal. `index_of_launch` gets
// the distinct expression of each launch.
std::optional<StartFailure> compile_in_worker(const std::string& role, const Candidate& kernel,
                                              const Problem& problem, const RunnerOptions& options,
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
              const CaseData& data, int run_index, const RunnerOptions& options,
              RunRequest& request, RunOutcome& out);

// A reply that is not ok, as the run's outcome (timeout, crash, launch_error, internal).
// `worker_lost` tells whether the worker must be replaced before the next run.
RunOutcome failed_run(const Reply& reply, const RunOutcome& planned, const Candidate& kernel,
                      double reference_s, const RunnerOptions& options, bool& worker_lost);

// The reason and message of a run that damaged red zones or inputs (none when neither).
void settle_damage(RunOutcome& out);

// A CUDA run's outputs copied to the host (`outputs`), for the host's comparisons; nothing to do
// for a run whose outputs are there already.
void outputs_to_host(RunOutcome& run, const Problem& problem, const std::vector<Shape>& shapes,
                     CUstream stream);

class KernelRunner final : public KernelUnderTest {
public:
  // `role`: "candidate" or "--against kernel", for messages.
  KernelRunner(std::string role, const Candidate& kernel, const Problem& problem,
               const Oracle& oracle, RunnerOptions options);
  ~KernelRunner() override;

  std::optional<StartFailure> start() override;
  RunOutcome run(const Case& c, const CaseData& data, int run_index) override {
    return run_on_set(c, data, run_index, -1);
  }
  // `set` -1: any set (the one holding these buffers, else a new one).
  RunOutcome run_on_set(const Case& c, const CaseData& data, int run_index, int set) override;
  TimedRound timed_round(const Case& c, const std::vector<const CaseData*>& visits,
                         int run_index, std::uint64_t flush_bytes) override;
  // Not for the in-process worker, whose CUDA context is the oracle's.
  bool restartable() const override { return !options_.in_process; }

private:
  std::optional<StartFailure> spawn_and_load(bool first);
  void drop_worker();
  // The worker's buffer set that holds, as this process maps it, exactly the buffers `request`
  // names; -1 for none.
  int set_holding(const RunRequest& request) const;
  // The set a run with new buffers takes (an empty one, else the least recently used), and in
  // `request.release` the other sets freed to keep the memory held within budget.
  int set_for_new_buffers(RunRequest& request);
  // Whether set `set` holds exactly the buffers `request` names.
  bool set_holds(int set, const RunRequest& request) const;
  // Set `set`'s buffers written for `request`: inputs from the master, fills, red zones.
  void refill_mapped(int set, const RunRequest& request, const CaseData& data);
  // What a run on set `set` left, read where it lies: red zones and inputs against the master
  // (into out.oob, out.inputs_modified and its reason), outputs copied into the oracle's memory.
  void read_back(int set, const RunRequest& request, const CaseData& data, RunOutcome& out);
  // A failed reply as the run's outcome; the worker is dropped when it is lost.
  RunOutcome failed(const Reply& reply, const RunOutcome& planned, const CaseData& data);

  std::string role_;
  const Candidate& kernel_;
  const Problem& problem_;
  const Oracle& oracle_;
  RunnerOptions options_;
  std::unique_ptr<WorkerLink> link_;
  std::vector<LaunchSpec> launches_;
  ModuleMessage module_;
  std::vector<std::size_t> index_of_launch_; // distinct expression of each launch
  std::vector<PlanKernel> kernels_;
  std::vector<KernelInfo> infos_; // the load reply's, one per distinct expression
  std::vector<const PlanKernel*> per_launch_;
  PlanContext context_;
  // The worker's buffer sets (RunRequest::buffer_set) as this process maps them: kept while
  // their memory fits the budget, a set cleared with a failed run on it, all with the worker.
  struct Mapped {
    std::string name;
    std::uint64_t bytes = 0;
    std::string ipc;       // the worker's handle
    std::uint64_t ptr = 0; // in-process worker: its pointer
    std::unique_ptr<IpcMapping> mapping;
    CUdeviceptr base = 0;  // the allocation here, red zone included
  };
  struct MappedSet {
    std::vector<Mapped> buffers; // empty: the worker holds nothing in this set
    std::uint64_t redzone = 0;
    std::uint64_t held_bytes = 0; // the set's allocations, red zones included
    std::uint64_t last_run = 0;   // runs_ at its last use
  };
  std::array<MappedSet, k_buffer_sets> sets_;
  std::uint64_t runs_ = 0;
};

} // namespace kj::judge
