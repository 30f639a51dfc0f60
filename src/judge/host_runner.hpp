// An untrusted kernel on the host backend: NVRTC first, in the compile-only worker (it rejects
// host code in device functions and gives the exact parameter types the plan is checked
// against), then the host compiler builds it against the emulation header (with
// ThreadSanitizer too under race detection), and a host worker (`kjudge --worker --host`) loads it
// under seccomp and runs it on buffers in a shared arena that this side lays out, fills
// (inputs, poison, red zones) and reads back: red zones, input copies and outputs are checked
// here, as on the GPU. Race detection screens the first run of the cases marked for it
// (CaseData::race_screen: the check marks the kRaceScreenedCases smallest unperturbed
// ones) with the sanitizer's
// build in a worker of its own; the sanitizer costs some 20 times the plain build's time, and a race in these
// kernels does not depend on the shape. A worker that dies of a race leaves ThreadSanitizer's
// report on its stderr, a file this side reads: the run is `nondeterministic`, with both
// accesses' lines.
#pragma once

#include <memory>

#include "judge/host_oracle.hpp"
#include "judge/runner.hpp"

namespace kj::judge {

class HostKernelRunner final : public KernelUnderTest {
public:
  HostKernelRunner(std::string role, const Candidate& kernel, const Problem& problem,
                   RunnerOptions options, HostCompileOptions host);
  ~HostKernelRunner() override;

  std::optional<StartFailure> start() override;
  RunOutcome run(const Case& c, const CaseData& data, int run_index) override;
  bool restartable() const override { return true; }

  // How many cases (the smallest) have their first run in the race-detecting worker.
  static constexpr int kRaceScreenedCases = 3;

private:
  // One worker and the shared object it loads: the plain build, or the one with
  // ThreadSanitizer (started with its runtime preloaded).
  struct Worker {
    bool race = false;
    std::filesystem::path shared_object;
    std::unique_ptr<WorkerLink> link;
    int log_fd = -1; // its stderr
  };
  std::optional<StartFailure> spawn_and_load(Worker& w);
  bool map_arena(std::uint64_t bytes);
  // ThreadSanitizer's race report in the dead worker's stderr, as a message; empty when none.
  std::string race_in_log(const Worker& w) const;

  std::string role_;
  const Candidate& kernel_;
  const Problem& problem_;
  RunnerOptions options_;
  HostCompileOptions host_;
  Worker plain_, race_;
  ModuleMessage module_;
  HostBuiltModule built_; // the plan's view of the kernels (the module itself is the worker's)
  std::vector<std::size_t> index_of_launch_;
  std::vector<const PlanKernel*> per_launch_;
  PlanContext context_;
  int arena_fd_ = -1;
  std::byte* arena_ = nullptr;
  std::uint64_t arena_bytes_ = 0;
};

} // namespace kj::judge
