// An untrusted kernel on the host backend: NVRTC first, in the compile-only worker (it rejects
// host code in device functions and gives the exact parameter types the plan is checked
// against), then the host compiler builds it against the emulation header, plain and (under
// race detection or exact bounds) checked, and a host worker (`kjudge --worker --host`) loads
// it under seccomp and runs it on buffers in a shared arena that this side lays out, fills
// (inputs, poison, red zones) and reads back: red zones, input copies and outputs are checked
// here, as on the GPU.
// The checked build (cuda_emulation.hpp: every load and store against kjudge's shadow memory)
// runs in a worker of its own: for race screening, the first run of the cases marked for it
// (set_race_screened: the check marks the kRaceScreenedCases smallest unperturbed ones; it
// costs several times the plain build's time, and a race in these kernels does not depend on
// the shape), or every run under exact bounds. A worker whose checked build found something
// leaves one line on its stderr, a file this side reads: a race is `nondeterministic`, an
// out-of-bounds write `oob_write`, an out-of-bounds read `crash` (what the GPU's memory checker
// calls an invalid access), each with the source lines, the threads and the buffer.
#pragma once

#include <functional>
#include <memory>

#include "judge/host/host_oracle.hpp"
#include "judge/kernel_under_test.hpp"

namespace kj::judge {

class HostKernelRunner final : public KernelUnderTest {
public:
  HostKernelRunner(std::string role, const Candidate& kernel, const Problem& problem,
                   const CheckSettings& settings, HostCompileOptions host);
  ~HostKernelRunner() override;

  std::optional<StartFailure> start() override;
  RunOutcome run(const Case& c, const CaseData& data, int run_index) override;
  RunOutcome timed_run(const Case& c, const CaseData& data, int run_index) override;
  bool restartable() const override { return true; }
  void set_race_screened(const std::set<const Case*>* cases) override { screened_ = cases; }
  std::optional<LineCoverage> lines_reached(std::string& why) override;

  // How many cases (the smallest) have their first run in the race-detecting worker.
  static constexpr int kRaceScreenedCases = 3;

private:
  // One worker and the shared object it loads: the plain build or the checked one.
  struct Worker {
    bool checked = false;
    std::filesystem::path shared_object;
    std::unique_ptr<WorkerLink> link;
    int log_fd = -1; // its stderr
    int starts = 0;  // loads so far: a replaced worker's counters start again from zero
  };
  std::optional<StartFailure> spawn_and_load(Worker& w);
  // NVRTC's predefined macros for this kernel's options on `arch` (the host build's view).
  CompileOptions nvrtc_probe_options(int arch) const;
  std::vector<std::pair<std::string, std::string>> device_macros(int arch) const;
  std::set<std::string> nvrtc_lacks(int arch) const;
  std::set<std::string> nvrtc_macros_among(const std::vector<std::string>& words, int arch) const;
  // HostCompileOptions::nvrtc_compiles_the_same for this kernel: NVRTC, in the compile worker,
  // compiles the text the host would build, once for both builds.
  std::function<void(const std::string&)> nvrtc_compiles_the_same(int arch) const;
  std::optional<std::string> why_nvrtc_compiles_another_program(const std::string& text,
                                                                int arch) const;
  RunOutcome run_in(Worker& w, const Case& c, const CaseData& data, int run_index);
  bool map_arena(std::uint64_t bytes);
  // The checked build's finding in the dead worker's stderr, as the run's failure; false when
  // there is none.
  bool finding_in_log(const Worker& w, const RunRequest& request, RunOutcome& out) const;

  std::string role_;
  const Candidate& kernel_;
  const Problem& problem_;
  const CheckSettings& settings_;
  HostCompileOptions host_;
  Worker plain_, checked_;
  ModuleMessage module_;
  const std::set<const Case*>* screened_ = nullptr;
  HostBuiltModule built_; // the plan's view of the kernels (the module itself is the worker's)
  std::vector<std::size_t> index_of_launch_;
  std::vector<const PlanKernel*> per_launch_;
  PlanContext context_;
  int arena_fd_ = -1;
  std::byte* arena_ = nullptr;
  std::uint64_t arena_bytes_ = 0;
};

} // namespace kj::judge
