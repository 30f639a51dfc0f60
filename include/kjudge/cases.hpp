// The canonical enumeration of cases. A case is (shape set, seed, transform) or a special-value
// case; its id carries the problem hash so a replay against a changed problem is refused:
// `<problem-hash8>:<shape-set>:<seed>:<transform>`. Transforms that leave an input's domain and
// special values a domain does not admit are skipped, and every skip is recorded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kjudge/inputs.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/validate.hpp"

namespace kj {

struct CaseOptions {
  int seeds = 3;                   // seeds per public/hidden shape set
  int perturbed_seeds = 1;         // seeds per perturbed shape set
  bool transforms = true;          // x3, x0.01, x(-1) on each float input, on seed 0
  bool mean_offsets = true;        // with transforms: x + 10 spreads on the first public set
  bool special_values = true;      // on the first public shape set
  bool include_hidden = true;
  std::size_t max_perturbed = 64;  // cap on perturbed shape sets
  // The key of the hidden shape sets drawn from ranges (validate.hpp's draw_hidden_sets), at
  // least kMinSecretBytes; none: those sets are not judged, and the plan says so.
  std::optional<std::string> secret;
};

struct Case {
  std::string id;
  ShapeSet shapes;
  std::uint64_t seed = 0;
  Transform transform;
  std::optional<SpecialValues> special;
  std::string case_class() const;  // "public" | "hidden" | "perturbed" | "special"
};
// A case's id: <problem-hash8>:<shape-set>:<seed>:<transform>.
std::string case_id(const Problem& problem, const ShapeSet& set, std::uint64_t seed,
                    std::string_view transform);

struct CaseSkip {
  std::string what;  // "public0 x*-1 on x", "public0 w:nan"
  std::string why;   // "leaves domain positive", "domain positive does not admit nan",
                     // "fp8e4m3 cannot hold pos_inf"
};

struct CasePlan {
  std::vector<Case> cases;  // canonical order
  std::vector<CaseSkip> skipped;
};

// Without include_hidden the shape plan is drawn as if the problem had no hidden sets (not
// filtered afterwards), so the public perturbations that a hidden set would have deduplicated
// stay, and the plan reveals nothing about the hidden dims.
CasePlan enumerate_cases(const Problem& problem, const CaseOptions& options = {});

// Inputs beyond a check's plan that `kjudge mutate` draws from (its pool), so that `--case`
// replays its witnesses too: seeds 0..seeds-1 of `first`'s shapes (`plan`: the host plan) (a KernelBench-style
// checker's draw), then per float input whose distribution has a spread and whose domain is not
// the unit interval: a mean offset of kMeanOffsetSpreads spreads and, where the domain is any,
// all values negative (a maximum initialised to 0). `first`: the plan's first unperturbed
// case without transform or special values; none: no witnesses (an empty list).
std::vector<Case> witness_cases(const Problem& problem, const CasePlan& plan, int seeds);

// Find a case by id in a plan; throws SpecError when the id is malformed, names another
// problem hash ("replay refused: the problem changed"), was drawn with another secret than
// `secret` ("replay refused") or is not in the plan.
const Case& find_case(const CasePlan& plan, const Problem& problem, std::string_view id,
                      const std::optional<std::string>& secret = std::nullopt);

}  // namespace kj
