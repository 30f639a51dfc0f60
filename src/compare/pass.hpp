// The elementwise policies (relative, allclose, ulp, exact) judged from one pass over an output
// (detail/compare_pass_impl.hpp): the pass itself runs where the tensors are (the host's
// HostPassSource here, the GPU's DeviceComparator in src/backend/cuda), and one function turns
// what it leaves (the whole output's statistics, each slice's, the binned percentiles, a few
// elements read back by index) into the OutputFinding. Both sides running the same pass and
// the same finishing is what makes their verdicts bit for bit the same.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kjudge/compare.hpp"
#include "kjudge/detail/compare_pass_impl.hpp"

namespace kj {

// What a pass leaves.
struct PassSummary {
  detail::cmp_stats whole{};
  std::vector<detail::cmp_stats> slices; // relative over a slice axis: one per slice
  detail::cmp_percentiles binned{};      // when the pass kept the histograms
};

// The three tensors at one flat index, as doubles (NaN where a tensor is missing).
struct ElementValues {
  double c = 0, g = 0, r = 0;
};

// Where the elements are: runs the pass and reads elements back.
class PassSource {
public:
  virtual ~PassSource() = default;
  // The pass with `p`; `bounds` (one per slice, or one for the whole output) makes it
  // relative's second pass; `histograms` asks for the binned percentiles.
  virtual PassSummary run(const detail::compare_params& p, const std::vector<double>* bounds,
                          bool histograms) = 0;
  virtual ElementValues at(std::int64_t flat) = 0;
  // Exact percentiles of the three error measures (a selection over every judged element).
  virtual ErrorStats exact_statistics(const detail::compare_params& p) = 0;
};

// What the pass and the finding need to know about an output besides its elements: the
// CompareInputs without the tensors, which may live on the device.
struct PassInputs : CompareRules {
  Shape shape;
  bool has_golden = false, has_reference = false;
};
PassInputs pass_inputs(const CompareInputs& in);

inline PassInputs pass_inputs_of(const CompareRules& rules, Shape shape, bool has_golden,
                                 bool has_reference) {
  PassInputs p;
  static_cast<CompareRules&>(p) = rules;
  p.shape = std::move(shape);
  p.has_golden = has_golden;
  p.has_reference = has_reference;
  return p;
}

// The pass's parameters for an output, after compare_output's checks of the inputs; nullopt
// when the policy is not one the pass judges (integer outputs, ratio, regions, metrics).
// Throws SpecError for a policy's bad arguments and for tensors a policy needs and lacks.
std::optional<detail::compare_params> pass_params(const PassInputs& in);

// Slices of a pass: relative's axis cut as (outer, extent, inner); outer == 1 when the axis is
// the first one that is not 1, the layout a device pass handles in flat order.
struct SliceLayout {
  std::int64_t outer = 1, extent = 1, inner = 0;
  int axis = -1; // -1: not sliced
};
SliceLayout slice_layout(const OutputSpec& spec, const Shape& shape);

// The finding from a pass over `source`.
OutputFinding judge_in_one_pass(const PassInputs& in, const detail::compare_params& p,
                                PassSource& source);

// The pass on host tensors, chunk by chunk in the device's order.
class HostPassSource final : public PassSource {
public:
  explicit HostPassSource(const CompareInputs& in);
  PassSummary run(const detail::compare_params& p, const std::vector<double>* bounds,
                  bool histograms) override;
  ElementValues at(std::int64_t flat) override;
  ErrorStats exact_statistics(const detail::compare_params& p) override;

private:
  const CompareInputs& in_;
  SliceLayout layout_;
};

// Binned percentiles from three histograms of detail::cmp_hist_bins counts each (|c - e|,
// relative, ulp) over `count` values: each the lower edge of the bin holding its rank.
detail::cmp_percentiles binned_percentiles(const std::vector<unsigned long long>& histograms,
                                           unsigned long long count);

} // namespace kj
