// `kjudge audit`: whether a problem can be judged at all under a policy, before any candidate
// is (docs/design.md "Audit"). Trivial candidates must fail (else the tolerance is hollow),
// the same-precision reference must pass against the f64 golden and stay under its dtype's
// ceiling (else the problem is unjudgeable; a special-value case the reference cannot compute
// is excused instead), and a reference on inputs of a narrower precision must fail somewhere
// (else the downgrade is undetectable).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kjudge/card.hpp" // card_refusal: what a card refuses
#include "kjudge/mutate.hpp"
#include "kjudge/spec.hpp"

namespace kj::audit {

// A trivial candidate's outcome under one policy, case by case: one that passes on any case
// makes the problem hollow, since a kernel can tell its cases apart by their shapes and answer
// trivially on that one. Not judged on a case where it is the answer (ones where every golden
// value is 1, a copy of the input where the output equals it).
struct TrivialResult {
  std::string name;          // "zeros", "ones", "golden mean", "copy of x", "noise 10x bound", ...
  std::string output;        // the output it stands in for (the others are not judged)
  int cases = 0, passed = 0; // cases it was judged on; of them, those it passed
  // The case where it came closest to passing (smallest log10 error over bound) and that
  // ratio: <= 0 when it passed there.
  std::string closest_case;
  double margin = 12;
  bool passes() const { return passed > 0; }
};

// The reference against the golden on one case where it fails: its own fixed tolerance, or the
// ceiling.
struct ReferenceFault {
  std::string case_id, output;
  // A case of dtype-max or infinite inputs: excused (check does not let the output fail it,
  // excuse_what_the_reference_cannot_compute) rather than unjudgeable.
  bool special = false;
  std::int64_t mismatches = 0;      // elements beyond the policy's bound (0: only the ceiling)
  std::int64_t first_index = -1;    // the first such element, flat
  double max_over_scale = 0, rms_over_scale = 0, ceiling = 0;
  std::string why;                  // one line
};

// The reference run on its inputs rounded to a narrower format (the precision a downgraded
// kernel reads its inputs in) and, for an `arithmetic` one, with every operation rounded to it
// too (its accumulator included: the reference's T as kj::rounded<float, F>), judged by the
// policy case by case until one rejects it (it is caught then: the cases after it are not run):
// undetectable when it passes all of them. A `declared` one is a candidate file the problem
// names (Problem::downgrades: a weaker algorithm it must reject), run as a candidate is.
struct DowngradeResult {
  std::string format;        // "tf32", "bf16", "f16"; declared: its file ("downgrades/naive.cu")
  bool arithmetic = false;
  bool declared = false;
  int cases = 0, passed = 0;
  // The case where it came closest to failing (largest log10 error over bound; for a caught one,
  // the case that caught it), and that ratio.
  std::string closest_case;
  double margin = -12;
  // For an undetectable one: the inputs that would expose it, searched among those kjudge makes
  // beyond the policy's own cases (the mutation pool's small cases and witnesses, the validity
  // ladder's rungs) and judged by the same policy; the first that rejects it, by case id and
  // recipe ("public:x+1e+03s", "ladder:mean offset x+1e+03"), or empty when none of the
  // `searched` inputs does (only a tighter tolerance can tell it apart).
  std::string exposed_by, exposed_recipe;
  int searched = 0;
  bool undetectable() const { return cases > 0 && passed == cases; }
  bool caught() const { return passed < cases; } // some case rejected it: run no further
  std::string label() const {
    return declared ? format : format + (arithmetic ? " arithmetic" : " inputs");
  }
  // One case's judgement (pass, log10 error over bound) counted.
  void add(std::pair<bool, double> judged, const std::string& case_id) {
    ++cases;
    if (judged.first) ++passed;
    if (closest_case.empty() || judged.second > margin) {
      margin = judged.second;
      closest_case = case_id;
    }
  }
};

// One correct variant (a bundled solution) on one rung of the validity ladder: the first
// shape set's seed-0 inputs made more aggressive in one way, judged by one policy. Families and
// rungs: "magnitude" (the first float input times 3, the default cases' own, then 1e2, 1e4,
// 1e8), "mean offset" (plus 10, the default cases' own, then 1e2, 1e3, 1e4) and "long rows" (its
// last dim as given, then 4 and 16 times, while the case holds at most 2^26 input elements).
struct LadderStep {
  std::string family, rung, candidate; // "mean offset", "x+1e+03", "solutions/welford.cu"
  bool pass = false;
  double margin = 12; // log10 error over bound (12: it did not run, or damaged memory)
  std::string note;   // why it failed without a margin (a crash, an unwritten output)
};

enum class Status { ok, hollow, unjudgeable, downgrade_undetectable, ceiling_crossed };
// "OK", "hollow", "unjudgeable", "downgrade undetectable", "ceiling crossed"
std::string_view status_name(Status s);

struct PolicyAudit {
  std::string policy;                     // the checker's name ("kjudge": the problem's own)
  std::string description;                // "the problem's policy on its default cases", ...
  std::vector<Status> status;             // {ok}, or every finding that holds
  int cases = 0;
  std::vector<TrivialResult> trivial;
  std::vector<ReferenceFault> reference_faults; // unjudgeable: not special; excused: special
  std::vector<std::string> excused_cases;       // cases no candidate may be rejected on
  // Formats narrower than the problem's float dtype (tf32, bf16, f16 below f32; bf16 below f16).
  std::vector<DowngradeResult> downgrades;
  // Per output: the reference's largest error over the golden's scale on any judged case.
  std::map<std::string, std::pair<double, double>> reference_over_scale; // {max, rms}
  // Per output: median nonzero |golden| over the allowed error there, on the first case
  // (infinite for an exact policy; absent where the policy has no elementwise bound).
  std::map<std::string, double> signal_over_bound;
  // The validity ladder (AuditOptions::ladder): every solution on every rung, and per family the
  // first rung some solution fails (the family's ceiling under this policy; absent: none fails).
  // A ceiling at a family's first rung, the default cases' own, is `ceiling crossed`.
  std::vector<LadderStep> ladder;
  std::map<std::string, std::string> ceiling;
};

struct ProblemAudit {
  std::string problem, hash, backend;
  std::vector<PolicyAudit> policies;
  std::vector<std::string> notes; // what the audit could not do ("no arithmetic downgrades: ...")
  // With the ladder: each solution's error over the golden's scale per output on the ladder's
  // base case (the first plain case), for the card's best solution.
  struct SolutionError {
    std::string candidate, output;
    double max_over_scale = 0, rms_over_scale = 0;
  };
  std::vector<SolutionError> solution_errors;
  bool ok() const;
};

struct AuditOptions {
  std::vector<std::string> problems;        // problem folders
  std::vector<mutate::Checker> checkers;    // "kjudge" first unless the caller says otherwise
  std::string backend = "auto";             // auto | cuda | host
  std::string self_exe;                     // kjudge itself
  bool ladder = false;                      // run the validity ladder (solutions/*.cu)
};
// Audit every problem under every checker. Throws kj::SpecError for a bad problem,
// std::runtime_error for a backend that cannot be had.
std::vector<ProblemAudit> run_audit(const AuditOptions& options);

// The console table: a row per problem x policy with its findings.
std::string audit_console(const std::vector<ProblemAudit>& audits);
// One JSON object: schema_version 1, problems (each: problem, hash, backend, policies with
// status, cases, trivial, reference_faults, excused_cases, signal_over_bound).
std::string audit_json(const std::vector<ProblemAudit>& audits);
// A self-contained HTML page: the table (id "audit") and each ladder's plot ("ladder-0", ...).
std::string audit_html(const std::vector<ProblemAudit>& audits);

// ---- Tolerance cards ----------------------------------------------------------------------

// The card of a problem: card.toml beside problem.toml, written by `kjudge card` from an audit
// under the problem's own policy. It is not part of the problem's hash (writing it changes no
// case id). Keys: kjudge_version, problem_hash, backend, audit (the findings, "OK" or a list),
// cases, and an [[output]] per output: name, policy (as written), signal_over_bound,
// reference_max_over_scale and reference_rms_over_scale (the reference's largest error over the
// golden's scale on any case), best_solution with its best_solution_max_over_scale and
// best_solution_rms_over_scale (the solution of smallest rms on the ladder's base case), a
// [ceiling] table (the ladder's first failing rung per family), [[output.rejected]] (each trivial candidate and downgrade the
// audit saw rejected, with its log10 error over bound where it came closest to passing).
std::string card_toml(const Problem& problem, const ProblemAudit& audit);

} // namespace kj::audit
