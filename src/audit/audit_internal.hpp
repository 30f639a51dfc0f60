// What the audit's pieces share (src/audit/): outputs judged as a candidate's would be, and the
// validity ladder run once per problem for every policy.
#pragma once

#include <utility>
#include <vector>

#include "judge/backend.hpp"
#include "kjudge/audit.hpp"
#include "kjudge/cases.hpp"

namespace kj::audit::detail {

// Every output judged by `ch`: whether all pass, and the largest log10 error over bound.
std::pair<bool, double> judge_outputs(const mutate::Checker& ch, const Problem& problem,
                                      const judge::CaseData& d,
                                      const std::vector<HostTensor>& outputs);

// A policy's findings in words: "OK", "hollow, unjudgeable", ...
std::string status_text(const PolicyAudit& p);

// The problem's solutions on every rung of the ladder (ladder.cpp), judged by each checker:
// each policy's ladder steps and ceilings added to its PolicyAudit (`audits[k]` for
// `checkers[k]`), ceiling_crossed where a solution fails a family's first rung.
void run_ladder(const Problem& problem, judge::CheckBackend& be, const Case& first,
                const std::vector<mutate::Checker>& checkers, std::vector<PolicyAudit>& audits);

} // namespace kj::audit::detail
