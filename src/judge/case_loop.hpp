// The check's case loop (docs/design.md "The path of a verdict"): per case, the oracle's case
// (from the cache or made), the --against kernel's outputs, the candidate's two runs (and on the
// host bench its timed runs), then the judging of what they left, in the precedence crash >
// timeout > oob_write > input_modified > unwritten_output > nonfinite > nondeterministic >
// mismatch. Running is on the calling thread (which owns the CUDA context); judging runs on a
// pool of threads while the next case runs, its findings taken back in case order.
#pragma once

#include <string>
#include <vector>

#include "judge/backend.hpp"
#include "judge/case_disk_cache.hpp"
#include "kjudge/verdict.hpp"

namespace kj::judge {

struct CaseLoop {
  const Problem& problem;
  const CheckSettings& settings;
  CheckBackend& backend;
  KernelUnderTest& candidate;
  KernelUnderTest* against = nullptr; // the --against kernel: outputs judged bit-exactly
  // The oracle's cases: from the memory tier, the disk tier, or made (and kept where allowed).
  CaseSource& cases;
};

struct JudgedCases {
  std::vector<CaseFinding> findings; // in case order, up to the one that stopped the loop
  bool halted = false;               // an ERROR, a lost worker, a timeout, or fail_fast stopped it
  bool out_of_budget = false;        // the candidate's run time passed settings.time_budget_s
  double spent_s = 0;                // the candidate's run time
  double wall_s = 0;                 // the whole loop's (the oracle's work too)
};

// Judge `cases` in order until one stops the check or the time budget runs out; each finding
// also goes to settings.asked.on_case as it is taken. Throws SpecError for the problem's faults
// that the oracle finds outside a case.
// `spent_before_s`: the candidate's run time that earlier calls of this check spent.
JudgedCases judge_cases(const CaseLoop& loop, const std::vector<const Case*>& cases,
                        double spent_before_s = 0);

} // namespace kj::judge
