// `kjudge validate`: everything about a problem that can be checked without a GPU. Shape sets
// are evaluated, every vary dim's perturbations are derived and filtered by the constraints, the
// reference template is linted (no f-suffixed literals, no expf-style calls, no shuffles or
// atomics in its reductions), and each launch plan is checked against the kernel's declared
// parameters (count, pointer or scalar kind).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
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

struct Diagnostic {
  enum class Severity { error, warning, note };
  Severity severity;
  Location where;
  std::string message;
};

struct ValidationReport {
  ShapePlan shapes;
  std::vector<Diagnostic> diagnostics;
  bool ok() const;  // no error diagnostics
};

// Run every check; never throws for a problem that loaded (its faults become diagnostics).
ValidationReport validate_problem(const Problem& problem);

// The launch-plan/kernel parameter check alone, also used for candidates: argument count and
// pointer/scalar kind against the lexer's reading of the kernel's signature.
std::vector<Diagnostic> check_launch_signatures(const Problem& problem, const KernelSource& src);

}  // namespace kj
