// The CUDA backend's runner of an untrusted kernel: compile it in a compile-only worker (its
// own process, memory cap, deadline; a module the compile cache holds is read without one),
// start the CUDA worker and load the module in it, then per case and run build the request
// (staging copies of the master inputs, poison, red zones; or, when the run needs the same
// buffers as the last, refill the worker's buffers through the oracle's mappings of them), wait
// with the watchdog's deadline, and read what the worker left where it lies, checking it in the
// oracle: red zones, input copies against the master, outputs copied into the oracle's memory.
// A worker that crashed or was killed is replaced before the next run and loads the same module
// again.
#pragma once

#include <array>
#include <memory>

#include "judge/cuda/cuda_oracle.hpp"
#include "judge/kernel_under_test.hpp"

namespace kj::judge {

class CudaKernelRunner final : public KernelUnderTest {
public:
  // `role`: "candidate" or "--against kernel", for messages.
  CudaKernelRunner(std::string role, const Candidate& kernel, const Problem& problem,
                   const CudaOracle& oracle, const CheckSettings& settings);
  ~CudaKernelRunner() override;

  std::optional<StartFailure> start() override;
  RunOutcome run(const Case& c, const CaseData& data, int run_index) override {
    return run_on_set(c, data, run_index, -1);
  }
  // `set` -1: any set (the one holding these buffers, else a new one).
  RunOutcome run_on_set(const Case& c, const CaseData& data, int run_index, int set) override;
  TimedRound timed_round(const Case& c, const std::vector<const CaseData*>& visits, int run_index,
                         std::uint64_t flush_bytes) override;
  // Not for the in-process worker, whose CUDA context is the oracle's.
  bool restartable() const override { return !settings_.in_process(); }

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
  const CudaOracle& oracle_;
  const CheckSettings& settings_;
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
    CUdeviceptr base = 0; // the allocation here, red zone included
  };
  struct MappedSet {
    std::vector<Mapped> buffers; // empty: the worker holds nothing in this set
    std::uint64_t redzone = 0;
    std::uint64_t held_bytes = 0; // the set's allocations, red zones included
    std::uint64_t last_run = 0;   // runs_ at its last use
  };
  std::array<MappedSet, kBufferSets> sets_;
  std::uint64_t runs_ = 0;
};

} // namespace kj::judge
