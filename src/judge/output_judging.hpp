// How one run's outputs are judged against a case's golden and reference, shared by the check
// (judge/check.cpp) and the bench's timing loop (judge/cuda/timing_loop.cpp): the rules an output is held
// to, the host comparator's inputs, and a CUDA run's outputs judged where they lie.
#pragma once

#include <cstddef>
#include <vector>

#include <cuda.h>

#include "judge/case_oracle.hpp"
#include "judge/kernel_under_test.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"

namespace kj::judge {

// What a finding carries beyond what decides it: percentiles of passing outputs, exact ones
// (CheckOptions::statistics, exact_percentiles). The bench's timed samples ask for neither.
struct FindingExtras {
  bool statistics = false, exact_percentiles = false;
};
inline FindingExtras extras_asked(const CheckOptions& asked) {
  return {asked.statistics, asked.exact_percentiles};
}

// The rules output `o` is judged by: the problem's (or, against an --against kernel, bit-exact).
CompareRules compare_rules(const Problem& problem, std::size_t o, bool against,
                           const CaseData& data, FindingExtras extras);

// What output `o`'s host comparison takes: `actual` against the case's golden and reference, or,
// given the --against kernel's outputs, against its output bit-exactly.
CompareInputs host_compare_inputs(const Problem& problem, std::size_t o, const CaseData& data,
                                  const HostTensor& actual,
                                  const std::vector<HostTensor>* against_outputs,
                                  FindingExtras extras);

// On a case of dtype-max or infinite inputs, the failures (mismatch, nonfinite) of outputs the
// same-precision reference cannot compute itself (its error over the golden's scale past
// reference_ceiling: it overflowed inside, as a correct candidate may) are excused, each with
// its reason (OutputFinding::excused_by_reference). Elsewhere such a reference is the problem's
// fault, which `kjudge audit` reports (unjudgeable). `findings` are per output in order.
// Precondition: host copies of the golden and reference made.
void excuse_what_the_reference_cannot_compute(const Problem& problem, const CaseData& data,
                                              std::vector<OutputFinding>& findings);

// What float output `o`'s GPU comparison takes: `actual` (on the device, in the output's dtype)
// against the case's device golden and reference.
DeviceCompareInputs device_compare_inputs(const Problem& problem, std::size_t o,
                                          const CaseData& data, DeviceTensor actual,
                                          FindingExtras extras);

// The findings of a CUDA run's outputs (run.device_outputs) against the case's golden and
// reference on the device: float outputs by the GPU comparator where they lie, integer ones
// copied to the host and judged there against the host golden. Throws SpecError as
// compare_output does.
std::vector<OutputFinding> judge_device_outputs(const Problem& problem, const CaseData& data,
                                                const RunOutcome& run,
                                                DeviceComparator& comparator, CUstream stream,
                                                FindingExtras extras);

} // namespace kj::judge
