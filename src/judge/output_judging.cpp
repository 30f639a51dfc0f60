// Judging one run's outputs (output_judging.hpp).
#include "judge/output_judging.hpp"

#include <fmt/format.h>

namespace kj::judge {

CompareRules compare_rules(const Problem& problem, std::size_t o, bool against,
                           const CaseData& data, FindingExtras extras) {
  CompareRules r;
  r.spec = &problem.outputs[o];
  r.tier = against ? Tier::exact : problem.tier;
  if (against) r.reference_name = "--against kernel's output";
  r.nan = problem.nan;
  r.signed_zero_strict = problem.signed_zero_strict;
  r.nan_in_inputs = data.nan_in_inputs;
  r.extreme_in_inputs = data.extreme_in_inputs;
  r.exact_percentiles = extras.exact_percentiles;
  r.statistics = extras.statistics;
  return r;
}

CompareInputs host_compare_inputs(const Problem& problem, std::size_t o, const CaseData& data,
                                  const HostTensor& actual,
                                  const std::vector<HostTensor>* against_outputs,
                                  FindingExtras extras) {
  CompareInputs in;
  static_cast<CompareRules&>(in) =
      compare_rules(problem, o, against_outputs != nullptr, data, extras);
  in.actual = &actual;
  if (against_outputs) {
    in.reference = &(*against_outputs)[o];
  } else {
    in.golden = &data.golden[o];
    in.reference = &data.reference[o];
  }
  return in;
}

void excuse_what_the_reference_cannot_compute(const Problem& problem, const CaseData& data,
                                              std::vector<OutputFinding>& findings) {
  if (!data.extreme_in_inputs) return;
  for (std::size_t o = 0; o < findings.size() && o < problem.outputs.size(); ++o) {
    OutputFinding& f = findings[o];
    const DType t = problem.outputs[o].dtype;
    if ((f.reason != Reason::mismatch && f.reason != Reason::nonfinite) || !is_float(t) ||
        data.golden.size() <= o || data.golden[o].numel() == 0)
      continue;
    const std::optional<ScaledError> e = error_over_golden_scale(t, data.golden[o], data.reference[o]);
    const double ceiling = reference_ceiling(t);
    if (!e || e->within(ceiling)) continue;
    f.excused_by_reference = fmt::format(
        "the {} reference cannot compute this case itself (its error over the golden's scale is "
        "{:.3g} max and {:.3g} rms, past the {} ceiling {:.3g}): the output cannot fail it",
        dtype_name(t), e->max, e->rms, dtype_name(t), ceiling);
  }
}

DeviceCompareInputs device_compare_inputs(const Problem& problem, std::size_t o,
                                          const CaseData& data, DeviceTensor actual,
                                          FindingExtras extras) {
  DeviceCompareInputs in;
  static_cast<CompareRules&>(in) = compare_rules(problem, o, false, data, extras);
  in.shape = data.output_shapes[o];
  in.actual = actual;
  in.reference = DeviceTensor{data.device_reference[o].ptr(), actual.dtype};
  in.golden = DeviceTensor{data.device_golden[o].ptr(), DType::f64};
  return in;
}

std::vector<OutputFinding> judge_device_outputs(const Problem& problem, const CaseData& data,
                                                const RunOutcome& run,
                                                DeviceComparator& comparator, CUstream stream,
                                                FindingExtras extras) {
  std::vector<OutputFinding> findings;
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    const DType dtype = problem.outputs[o].dtype;
    const DeviceTensor actual{run.device_outputs[o].ptr(), dtype};
    if (!is_float(dtype)) {
      // The golden of an integer output is in the output's dtype on the device; the host's copy
      // is the f64 one compare_output takes.
      const HostTensor on_host = to_host(actual, data.output_shapes[o], stream);
      findings.push_back(compare_output(
          host_compare_inputs(problem, o, data, on_host, nullptr, extras)));
      continue;
    }
    findings.push_back(
        comparator.compare(device_compare_inputs(problem, o, data, actual, extras), stream));
  }
  return findings;
}

} // namespace kj::judge
