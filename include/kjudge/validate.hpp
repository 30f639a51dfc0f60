// `kjudge validate`: everything about a problem that can be checked without a GPU. Shape sets
// are evaluated, every vary dim's perturbations are derived and filtered by the constraints, the
// reference template is linted (no f-suffixed literals, no expf-style calls, no shuffles or
// atomics in its reductions), and each launch plan is checked against the kernel's declared
// parameters (count, pointer or scalar kind).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/spec.hpp"

namespace kj {

// A dim changed alone from a public or hidden shape set: d-1, d+1, the smallest prime > d+1, 1.
struct Perturbation {
  std::string dim;
  std::int64_t value;
  std::string rule;  // "d-1" | "d+1" | "prime" | "one"
};

// One shape set of the canonical order: public ones, hidden ones, then perturbations.
struct ShapeSet {
  std::string id;   // "public0", "hidden1", "public0~R=4095"
  bool hidden;      // hidden, or derived from a hidden set
  Env dims;
  std::optional<Perturbation> perturbation;
};

struct RejectedPerturbation {
  Perturbation perturbation;
  std::string base_id;
  std::string why;  // which constraint failed, or "duplicate of public1"
};

struct ShapePlan {
  std::vector<ShapeSet> sets;  // canonical order, deduplicated, capped
  std::vector<RejectedPerturbation> rejected;
};

// Evaluate every shape set and derive the perturbations; at most `max_perturbed` perturbed sets
// are kept (the cap is recorded in `rejected` as "over the cap").
ShapePlan plan_shapes(const Problem& problem, std::size_t max_perturbed = 64);
// The id of `base` with one dim set to `value`: "public0~R=4095".
std::string perturbed_set_id(std::string_view base, std::string_view dim, std::int64_t value);

// The hidden shape sets drawn from the problem's `hidden_ranges` with `secret`: `hidden_draws`
// per range, each dim uniform over its range from HMAC-SHA256 under the secret (of the problem
// hash, range, draw, attempt and dim), so the same secret draws the same shapes everywhere and
// nothing short of the secret predicts them. A draw that fails a constraint or a tensor shape, or
// repeats a set drawn or declared before it, is drawn again (kMaxDrawAttempts in all; `failed`
// names a draw that ran out). Ids are "drawn<range>.<draw>@<tag>" with tag = secret_tag(secret).
inline constexpr int kMaxDrawAttempts = 64;
inline constexpr std::size_t kMinSecretBytes = 16;
struct DrawnSets {
  std::vector<ShapeSet> sets;
  std::vector<std::string> failed;  // "drawn0.1: no draw of 64 meets the constraints (...)"
};
DrawnSets draw_hidden_sets(const Problem& problem, std::string_view secret);

// 8 hex digits of the secret's HMAC of a fixed text: tells two secrets' cases apart in an id,
// tells nothing of the secret.
std::string secret_tag(std::string_view secret);

struct Diagnostic {
  enum class Severity { error, warning, note };
  Severity severity;
  Location where;
  std::string message;
};

std::string_view severity_name(Diagnostic::Severity s);  // "error" | "warning" | "note"
// "reference.cu:12:5: error: f-suffixed literal ...", "problem.toml: error: dims.vary[0]: ..."
// (compiler style; the location's empty parts left out).
std::string format_diagnostic(const Diagnostic& d);

struct ValidationReport {
  ShapePlan shapes;
  std::vector<Diagnostic> diagnostics;
  bool ok() const;  // no error diagnostics
};

// Run every check; never throws for a problem that loaded (its faults become diagnostics).
// Besides the shape plan, lint and signatures: public/hidden sets that fail a constraint or whose
// shapes overflow, a hidden set equal to a public one (warning), and the grid, block, shared and
// repeat of every reference/golden launch evaluated on every shape set of the plan (a launch
// that cannot run on a perturbed shape would make the reference itself the failure).
ValidationReport validate_problem(const Problem& problem);

// The launch-plan/kernel parameter check alone, also used for candidates: argument count and
// pointer/scalar kind against the lexer's reading of the kernel's signature. A candidate passes
// its scratch buffers, which are tensors too. When `src` is the problem's reference, a launch of
// a one-parameter template may omit the template arguments (`softmax_ref`, or `softmax_ref<T>`
// with T substituted later). A pointer parameter whose element type is spelled as a dtype's C++
// name ("const double*") must match the tensor's dtype; for the golden plan float tensors are
// double. Typedefs, templates and vector types are left to NVRTC's exact check.
std::vector<Diagnostic> check_launch_signatures(const Problem& problem, const KernelSource& src,
                                                const std::vector<ScratchSpec>& scratch = {});

// The reference lint alone, over the __global__/__device__ bodies of `src`: f-suffixed float
// literals, f32-only math functions and intrinsics, shuffles and atomics. Bodies of the kernels
// named in `skip_kernels` are left out (a [golden] plan's own kernels in the same file).
std::vector<Diagnostic> lint_reference(const KernelSource& src,
                                       const std::set<std::string>& skip_kernels = {});

// The smallest prime strictly greater than n (n >= 0); nullopt when it would pass INT64_MAX.
std::optional<std::int64_t> smallest_prime_above(std::int64_t n);

}  // namespace kj
