// The host backend's case plan (docs/design.md "The backends"): the CPU runs a kernel thousands
// of times slower than a GPU, so a check there judges fewer, smaller cases.
#pragma once

#include <string>

#include "kjudge/cases.hpp"
#include "kjudge/spec.hpp"

namespace kj::judge {

// The problem's host shape sets in place of the public and hidden ones (or the public and
// hidden ones where it declares none), one seed per shape set, at most 16 perturbed shape sets,
// and those (which find tail and bounds bugs) first. Returns the plan and fills `budget`, the
// verdict's statement of it.
// Its cases are named by the host sets they come from (host0~C=33), never public0.
CasePlan host_case_plan(const Problem& problem, CaseOptions options, std::string& budget);

// The cases a host check adds while lines of the candidate have not run: the first seed of
// each public shape set larger than every host set, smallest first (none where the problem
// declares no host sets: its plan already holds the public ones).
CasePlan host_coverage_plan(const Problem& problem, const CaseOptions& options);

} // namespace kj::judge
