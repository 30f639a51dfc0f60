// Comparison policies on host tensors, exactly as docs/design.md "Comparison" defines them:
// relative(k) against the golden and the reference's own error (whole tensor and per slice),
// allclose with torch's per-dtype defaults, ulp(n), exact (NaN canonicalised, ±0 rule),
// ratio, regions (the CANN two-phase gate), the approximate metrics; every policy first applies
// the non-finite rules against the golden rounded to the output dtype. Every bound is tested as
// !(err <= bound), so a NaN error always fails.
#pragma once

#include <optional>

#include "kjudge/spec.hpp"
#include "kjudge/tensor.hpp"
#include "kjudge/verdict.hpp"

namespace kj {

// Default k of relative(k) for an output dtype: 16 for f32 and f64 (measured, numerics.md); 4
// for f16 and bf16 (calibrated, docs/design.md "Audit") and fp8 (provisional; see defaults.cpp).
// Precondition: a float dtype.
double default_relative_k(DType output);
// The largest error the same-precision reference may have against the golden, over the
// golden's scale (error_over_golden_scale's max and rms), before a case stops being a
// yardstick: 2^(-mantissa_bits / 2), half the dtype's digits (f32 3.5e-4, f16 3.1e-2, bf16
// 8.8e-2, f64 1.5e-8). Precondition: a float dtype.
double reference_ceiling(DType output);
// `values` against the golden over the golden's scale: max |v - g| / max |g| and
// rms(v - g) / rms(g) (scales floored at the dtype's smallest normal), over the elements whose
// golden the dtype holds finite; a non-finite value there is an infinite error. nullopt: no
// such element.
struct ScaledError {
  double max = 0, rms = 0;
  bool within(double ceiling) const { return max <= ceiling && rms <= ceiling; } // NaN: not
};
std::optional<ScaledError> error_over_golden_scale(DType output, const HostTensor& golden,
                                                   const HostTensor& values);
// torch.testing.assert_close defaults (numerics.md): {rtol, atol}; integers and bool {0, 0}.
// fp8 (torch has none): one ulp of the format, rtol = 2^-mantissa_bits, atol = the smallest
// subnormal (see defaults.cpp).
std::pair<double, double> torch_default_tolerances(DType output);
// The CANN constants of numerics.md for a float dtype; f64, absent there, gets f32's shifted by
// the 29 extra mantissa bits (T = 2^-42; see defaults.cpp).
struct RegionConstants {
  double threshold;           // T
  double small_boundary;      // |g| below: small-value region
  double small_abs_bound;     // absolute error bound there
  double cancel_boundary;     // cancellation boundary
  // Absolute error bound in the cancellation region. numerics.md says only that the region is
  // judged by absolute error; kjudge's reading is 10*T*cancel_boundary, the error a relative
  // 10*T allows at the region's upper edge, so the rule meets the normal region's there.
  double cancel_abs_bound;
};
RegionConstants cann_constants(DType output);

// What an output is judged by beside its tensors; every kind of compare inputs (these host
// ones, the GPU comparator's DeviceCompareInputs) carries it.
struct CompareRules {
  const OutputSpec* spec = nullptr;     // dtype, shape, policy, slice
  NanRule nan = NanRule::exempt;
  bool signed_zero_strict = false;
  Tier tier = Tier::tolerance;
  bool nan_in_inputs = false;           // the case planted NaN in an input (nan = "ignore")
  // The case planted dtype-max or infinite values in an input: where the precision overflows
  // (the rounded golden is infinite, or finite while the same-precision reference is not), a
  // non-finite candidate element is excused instead of failing `nonfinite`. Outside such cases
  // nothing changes: Infs match by sign, and a non-finite reference never excuses anything.
  bool extreme_in_inputs = false;
  // Exact percentiles (a selection over every judged element) instead of the binned ones.
  bool exact_percentiles = false;
  // Error percentiles of an output that passes (one that fails always gets them). The judge
  // turns them off unless asked (`--stats`): a right answer then costs one lean read, and the
  // histograms are a second pass over the outputs that fail (docs/design.md "Comparison").
  bool statistics = true;
  // What the reference tensor is, in messages: the problem's reference, or under `--against`
  // the old kernel's output (then judged bit for bit).
  const char* reference_name = "reference";
};

// Whether a finding carries percentiles: asked for (statistics, exact_percentiles), or failing.
inline bool statistics_wanted(const CompareRules& rules, bool fails) {
  return rules.statistics || rules.exact_percentiles || fails;
}

// The golden dtypes both comparators read where they lie: f64, and f32, each value a double
// exactly. An expected of another dtype is widened into an f64 golden first.
inline bool golden_read_in_place(DType t) { return t == DType::f64 || t == DType::f32; }

struct CompareInputs : CompareRules {
  const HostTensor* actual = nullptr;   // candidate output, in the output dtype
  const HostTensor* golden = nullptr;   // a golden_read_in_place dtype (null: integer outputs)
  const HostTensor* reference = nullptr;// same-precision reference, in the output dtype
  // Threads the elementwise policies' pass may judge chunks on at once (the finding is the same
  // for any count). A check keeps 1: it judges outputs on a pool of its own.
  int threads = 1;
};

// Judge one output. Throws SpecError when the policy needs a tensor that is missing (relative
// without a reference, regions without one, expected = "reference" without one), when the
// actual or the reference is not in the output's dtype, when shapes disagree, or when the
// policy's arguments are out of range; InternalError when `spec` is null.
//   - Float outputs: the non-finite rules first (against the golden rounded to the output
//     dtype; without a golden, against the reference), then the policy on the elements left.
//     Tier::exact judges by `exact` against the reference whatever the policy says;
//     Tier::approximate requires a metric policy.
//   - Integer and bool outputs: exact against the reference (the golden rounded to the dtype
//     when there is no reference); OutputSpec::ties = "off_by_one" allows |c - e| <= 1. The
//     float policy does not apply.
OutputFinding compare_output(const CompareInputs& in);

// Percentiles of a set of values by exact selection (nth_element), the host definition the GPU
// histogram approximates: pXX = the value at rank ceil(q*n)-1 of the sorted values.
Percentiles exact_percentiles(std::vector<double> values);

}  // namespace kj
