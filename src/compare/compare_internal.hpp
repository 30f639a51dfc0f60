// What compare.cpp (the non-finite rules, the statistics and the message of compare_output) and
// policies.cpp (ratio, regions, the metrics and integer outputs, judged element by element)
// share: an output's per-element working arrays, what a policy decides, and the policies'
// entry points. Private to src/compare.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kjudge/compare.hpp"

namespace kj::detail {

// What the non-finite rules made of an element.
enum class Status : std::uint8_t {
  judged,         // rounded golden finite, candidate finite: the policy decides
  settled,        // rounded golden non-finite and the candidate matches it
  excused,        // the NaN rule exempts the element from any judgement
  // In a case with extreme (dtype-max, infinite) inputs, a non-finite candidate value where
  // the precision overflows: the golden is finite but beyond the dtype's range (it rounds to
  // Inf; a different order of the same sum meets +Inf and -Inf and gives NaN, or the other
  // Inf), or it is within range but the same-precision reference overflows there too. Which
  // non-finite value an overflow ends in depends on the order of operations, so it is not
  // judged. An infinite golden (an Inf input passed through) is still matched by sign.
  precision_overflow,
  fail_nonfinite, // a non-finite candidate value the rules do not allow
  fail_mismatch,  // a finite candidate value where the rounded golden is not finite
};

struct Work {
  const CompareInputs* in = nullptr;
  const OutputSpec* spec = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  std::int64_t n = 0;
  std::vector<double> c;     // candidate
  std::vector<double> basis; // what the non-finite rules judge against (rounded golden)
  std::vector<Status> status;
  // Filled by the policy for judged elements (NaN, NaN, NaN, 0 elsewhere).
  std::vector<double> x;       // the value compared against
  std::vector<double> err;     // error in the policy's unit
  std::vector<double> allowed; // the element's bound in that unit, NaN if not elementwise
  std::vector<std::uint8_t> bad;

  std::size_t size() const { return static_cast<std::size_t>(n); }
};

struct PolicyResult {
  bool pass = true;
  double ratio = 0;            // error / allowed of the whole policy: passes iff <= 1
  bool element_message = true; // "m of n elements beyond the bound" describes a failure
  std::string fail_detail;     // policy-level part of a failing message
  std::string pass_detail;     // the message of a pass
};

// Element reads of a tensor: f32 and f64 straight from the buffer, other dtypes through get(),
// whose per-element dtype switch and bounds check were a large part of judging a big output.
struct Reader {
  const HostTensor* t = nullptr;
  const float* f32 = nullptr;
  const double* f64 = nullptr;

  Reader() = default;
  explicit Reader(const HostTensor& tensor) : t(&tensor) {
    if (tensor.dtype() == DType::f32) f32 = tensor.data<float>();
    if (tensor.dtype() == DType::f64) f64 = tensor.data<double>();
  }
  double operator()(std::size_t i) const {
    if (f32) return static_cast<double>(f32[i]);
    if (f64) return f64[i];
    return t->get(static_cast<std::int64_t>(i));
  }
};

// An element of the output in messages: "[2, 7]".
std::string show_index(const Work& w, std::int64_t flat);

// The policies judged element by element (policies.cpp): the float ones after classify, while
// judge_integers sets every element's status itself.
PolicyResult judge_ratio(Work& w, const PolicySpec& p, OutputFinding& f);
PolicyResult judge_regions(Work& w, OutputFinding& f);
PolicyResult judge_metric(Work& w, const PolicySpec& p, OutputFinding& f);
PolicyResult judge_integers(Work& w, OutputFinding& f);

} // namespace kj::detail
