// What a check runs on (docs/design.md "The backends"): the oracle that makes each case, the
// runner of an untrusted kernel, and what one backend does beyond both: the CUDA backend judges
// clean runs where their outputs lie (the GPU comparator) and times a passing candidate (the
// timing loop); the host backend screens its smallest cases for races. The check sees only
// this interface; make_backend builds the one the settings name.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "judge/case_disk_cache.hpp"
#include "judge/case_oracle.hpp"
#include "judge/check_settings.hpp"
#include "judge/kernel_under_test.hpp"
#include "kjudge/cases.hpp"
#include "kjudge/verdict.hpp"

namespace kj::judge {

struct CaseLoop;
struct JudgedCases;

class CheckBackend {
public:
  virtual ~CheckBackend() = default;
  virtual CaseOracle& oracle() = 0;
  // An untrusted kernel in a worker of this backend; `role`: "candidate" or "--against kernel".
  virtual std::unique_ptr<KernelUnderTest> make_runner(std::string role,
                                                       const Candidate& kernel) = 0;
  // Put the cases in the order this backend runs them (the host backend: its race-screened
  // cases first), before any runner is made.
  virtual void order_cases(std::vector<const Case*>& cases) { (void)cases; }
  // A run's outputs on the host, for the host comparator (on the host backend they are there).
  virtual void outputs_to_host(RunOutcome& run, const std::vector<Shape>& shapes) {
    (void)run, (void)shapes;
  }
  // The case's golden and reference on the host, for the host comparator (the CUDA oracle keeps
  // them on the device until then). Called on the check's own thread.
  virtual void complete_host_copies(const CaseData& data) { (void)data; }
  // The on-disk tier of the case cache (case_disk_cache.hpp). What of the machine decides this
  // backend's cases beyond the problem and kjudge's build (the device model, the architecture
  // and the compiler the reference is built with); empty: cases are not stored on disk.
  virtual std::string case_identity() const { return {}; }
  // The case's bytes for the disk (its device tensors downloaded): everything but the bench's
  // timings; nullopt: not stored.
  virtual std::optional<std::string> encode_case(const CaseData& data) {
    (void)data;
    return std::nullopt;
  }
  // The case back from its image, where this backend keeps it (uploaded); nullopt: unusable.
  virtual std::optional<CaseData> decode_case(CaseImage image) {
    (void)image;
    return std::nullopt;
  }
  // The findings of two clean runs that left the same bytes, made where their outputs lie;
  // nullopt: judge them on the host. Throws SpecError as compare_output does.
  virtual std::optional<std::vector<OutputFinding>>
  judge_in_place(const CaseData& data, const RunOutcome& first, const RunOutcome& second) {
    (void)data, (void)first, (void)second;
    return std::nullopt;
  }
  // Output `o` of a case as kjudge itself made it on the host (the audit's trivial candidates
  // and downgraded references), judged by the problem's policy where the case's golden and
  // reference lie, with the host comparator's finding; nullopt: judge it on the host. Called on
  // the check's own thread only (the GPU comparator is not shared).
  virtual std::optional<OutputFinding> judge_made_output(const CaseData& data, std::size_t o,
                                                         const HostTensor& actual) {
    (void)data, (void)o, (void)actual;
    return std::nullopt;
  }
  // Whether judge_made_output judges anything (the CUDA backend with its GPU comparator).
  virtual bool judges_made_outputs() const { return false; }
  // Host backend, once every case of `judged` (the run of `cases`) passed: the lines of the
  // candidate its runs reached, put on `v.lines_run`, and while some stay unrun, larger cases
  // judged (their findings appended to `v.cases`) until they run, the larger shapes run out or
  // their share of the time budget does.
  virtual void reach_unrun_lines(const CaseLoop& loop, const JudgedCases& judged,
                                 const std::vector<const Case*>& cases, Verdict& v) {
    (void)loop, (void)judged, (void)cases, (void)v;
  }
  // Bench on the GPU, once every case passed: the timing loop on the first case of each public
  // shape set, its timings (or its failure) put on the verdict's findings.
  virtual void time_public_cases(KernelUnderTest& candidate, const std::vector<const Case*>& cases,
                                 Verdict& v) {
    (void)candidate, (void)cases, (void)v;
  }
};

// The backend `settings.backend` names, set up for `problem` (the reference built, the
// manifest's facts of the machine written into `v`, settings' memory cap and per-run limits
// filled). `cache` (null: none) may be dropped (set to null) when it cannot serve this check.
// Throws SpecError for the problem's faults, UnsupportedOnHost for a reference the host backend
// cannot run, InternalError for kjudge's.
std::unique_ptr<CheckBackend> make_backend(CheckSettings& settings, const Problem& problem,
                                           CaseCache*& cache, Verdict& v);

std::unique_ptr<CheckBackend> make_cuda_backend(CheckSettings& settings, const Problem& problem,
                                                CaseCache*& cache, Verdict& v);
std::unique_ptr<CheckBackend> make_host_backend(CheckSettings& settings, const Problem& problem,
                                                Verdict& v);

} // namespace kj::judge
