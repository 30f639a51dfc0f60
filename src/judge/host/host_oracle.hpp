// The trusted side of a check on the host backend (docs/design.md "The backends"): the same cases
// as on the GPU, with the master inputs made by the host generator (bit-identical to the device's),
// and the golden and reference run in this process from the problem's reference source, built by
// the host compiler against the emulation header. NVRTC still compiles the reference (no GPU
// needed): its reading of the kernels' exact parameter types is what the plan is checked against,
// as on the GPU. A reference that fails is the problem's fault: SpecError.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "judge/case_oracle.hpp"
#include "kjudge/host_backend.hpp"

namespace kj::judge {

// The limits a plan is held to on the host backend: those of the GPUs kjudge judges for (an
// sm_90 device: 1024 threads a block, 227 KiB of shared memory), so a plan that fits here fits
// there.
DeviceInfo host_device_info();

// One source built for the host: its kernels' plan view (from NVRTC) and the loaded module.
struct HostBuiltModule {
  std::unique_ptr<HostModule> module;
  std::filesystem::path shared_object;
  std::map<std::string, PlanKernel> kernels; // by expression
  std::map<std::string, int> index;          // lowered name -> the module's kernel index
  std::vector<std::string> lowered;          // in expression order (the module's)
};

class HostOracle final : public CaseOracle {
public:
  // Builds the reference (and the golden when `need_golden`). Throws SpecError when either does
  // not compile or its plan does not fit its kernels; UnsupportedOnHost when the reference uses
  // a construct the host backend cannot run.
  HostOracle(const Problem& problem, const CompileOptions& nvrtc, const HostCompileOptions& host,
             bool need_golden);
  ~HostOracle() override;

  CaseData prepare(const Case& c) override;
  std::vector<HostTensor> reference_on(const Case& c, std::vector<HostTensor> inputs) override;
  CaseData prepare_on(const Case& c, std::vector<HostTensor> inputs) override;
  std::optional<CaseData> prepare_timed_visit(const Case& c, std::uint32_t visit) override;
  std::optional<std::vector<HostTensor>> rounded_reference_on(const Case& c,
                                                              std::vector<HostTensor> inputs,
                                                              std::string_view format) override;
  std::string rounded_unavailable() const override { return rounded_.plans.unavailable; }
  std::vector<HostTensor> inputs_on_host(const CaseData& data) const override {
    return data.host_master;
  }
  // `kjudge bench`: on public cases, run the reference this many more times, timed
  // (CaseData::reference_cpu_ms).
  void time_reference(int runs) { timed_runs_ = runs; }
  // The reference's and golden's builds, by the names of their shared objects (content
  // addressed: the compiler's version, the flags, the emulation header, the source): part of a
  // stored case's key (CheckBackend::case_identity).
  std::string builds_identity() const;

private:
  // The host module of `src`'s `expressions` (`role`: "reference", ...); SpecError when it does
  // not compile with NVRTC (its symbols) or the host compiler, or its kernels cannot be planned.
  std::unique_ptr<HostBuiltModule> build(const KernelSource& src,
                                         const std::vector<std::string>& expressions,
                                         const std::string& role) const;
  // `plan` (the reference's or a rounded one) run on `inputs` for case `c`: reference_on.
  std::vector<HostTensor> reference_plan_on(const CompiledPlan& plan, const HostBuiltModule& module,
                                            const Case& c, std::vector<HostTensor> inputs) const;
  void make_plan_outputs(const CompiledPlan& plan, const HostBuiltModule& module, CaseData& data,
               bool golden, const std::string& case_id, int timed_runs) const;
  // prepare's case on visit `visit` of its inputs' streams, the reference timed `timed_runs`
  // more times.
  CaseData prepare_visit(const Case& c, std::uint32_t visit, int timed_runs);

  const Problem& problem_;
  std::unique_ptr<HostBuiltModule> reference_module_, golden_module_;
  CompiledPlan reference_, golden_;
  bool need_golden_;
  int timed_runs_ = 0;
  // The rounded references (rounded_reference_on), built on first use.
  RoundedReferences<HostBuiltModule> rounded_;
  CompileOptions nvrtc_;
  HostCompileOptions host_compile_;
};

// The lowered name -> kernel index map and the plan kernels of NVRTC's symbols for a module
// built from the same expressions.
void read_symbols(const std::vector<KernelSymbol>& symbols, std::string_view source,
                  HostBuiltModule& out);

// "unsupported on host backend: a thread-block cluster launch at problem.toml launch[0]" for
// the first launch the host backend cannot make (clusters, cooperative launches); nullopt
// when it can make them all.
std::optional<std::string> unsupported_launch(const std::vector<LaunchSpec>& launches);

} // namespace kj::judge
