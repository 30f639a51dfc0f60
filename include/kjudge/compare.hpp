// Comparison policies on host tensors, exactly as DESIGN.md "Tiers and policies" defines them:
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

// Default k of relative(k) for an output dtype (16 for f32 and f64; f16/bf16 until the audit
// calibrates them: see compare.cpp).
double default_relative_k(DType output);
// torch.testing.assert_close defaults (numerics.md): {rtol, atol}.
std::pair<double, double> torch_default_tolerances(DType output);
// The CANN constants of numerics.md for a float dtype.
struct RegionConstants {
  double threshold;           // T
  double small_boundary;      // |g| below: small-value region
  double small_abs_bound;     // absolute error bound there
  double cancel_boundary;     // cancellation boundary
};
RegionConstants cann_constants(DType output);

struct CompareInputs {
  const OutputSpec* spec = nullptr;     // dtype, shape, policy, slice
  const HostTensor* actual = nullptr;   // candidate output, in the output dtype
  const HostTensor* golden = nullptr;   // f64 golden (may be null for integer outputs)
  const HostTensor* reference = nullptr;// same-precision reference, in the output dtype
  NanRule nan = NanRule::exempt;
  bool signed_zero_strict = false;
  Tier tier = Tier::tolerance;
  bool nan_in_inputs = false;           // the case planted NaN in an input (nan = "ignore")
};

// Judge one output. Throws SpecError when the policy needs a tensor that is missing (relative
// without a reference, regions without one, expected = "reference" without one) or shapes
// disagree.
OutputFinding compare_output(const CompareInputs& in);

// Percentiles of a set of values by exact selection (nth_element), the host definition the GPU
// histogram approximates: pXX = the value at rank ceil(q*n)-1 of the sorted values.
Percentiles exact_percentiles(std::vector<double> values);

}  // namespace kj
