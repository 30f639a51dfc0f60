// What the audit's pieces share (src/audit/): outputs judged as a candidate's would be, and the
// validity ladder run once per problem for every policy.
#pragma once

#include <functional>
#include <memory>
#include <set>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "judge/backend.hpp"
#include "kjudge/audit.hpp"
#include "kjudge/cases.hpp"
#include "kjudge/judge.hpp"
#include "mutate/campaign_internal.hpp"

namespace kj::audit::detail {

// A kernel the audit runs (a solution, a variant of one, a declared downgrade), started.
struct AuditKernel {
  std::string name;
  std::unique_ptr<const Candidate> candidate; // the runner holds on to it: it must not move
  std::unique_ptr<judge::KernelUnderTest> kernel;
};
// `candidate` in a worker of `be`, started; nullopt where this backend cannot run it (tensor
// cores on the host). Throws std::runtime_error naming it when it does not start otherwise.
std::optional<AuditKernel> start_kernel(judge::CheckBackend& be, std::string name,
                                        Candidate candidate);
// What kept a run from being judged: its fault, an unwritten or a nondeterministic output
// ("" for none).
std::string run_fault(const Problem& problem, const mutate::detail::Observation& ob);

// A downgraded reference: its inputs rounded to a narrower format, and with `arithmetic` every
// operation too (the reference's T as a rounded type).
struct Downgrade {
  std::string format;
  FloatFormat f;
  bool arithmetic = false;
};

// The narrower formats a downgraded kernel may compute in: those with fewer mantissa bits than
// the problem's float dtype (only they are a loss of precision the policy must see), inputs
// first, then arithmetic.
std::vector<Downgrade> downgrades_of(const Problem& problem);
// The case's inputs rounded to `f`, saturating (a careful downgrade keeps finite values finite,
// so only its precision, never an overflow of FLT_MAX, can give it away); nullopt where no
// input changes (already on the format's grid, or none float): no downgrade on this case.
std::optional<std::vector<HostTensor>> rounded_inputs(const std::vector<HostTensor>& case_inputs,
                                                      const FloatFormat& f);
// Downgrade `g` run on case `c`: the reference on `rounded_in` (its inputs rounded to g's
// format; nullopt where rounding changed none) or, for an arithmetic one, its rounded build on
// them (on `inputs` where none changed). Nullopt where it is no downgrade on this case: an
// inputs-only one whose inputs did not change, or no rounded build.
std::optional<std::vector<HostTensor>> downgraded_outputs(judge::CheckBackend& be, const Case& c,
                                                          const Downgrade& g,
                                                          const std::vector<HostTensor>& inputs,
                                                          std::optional<std::vector<HostTensor>> rounded_in);
// A declared downgrade on case `c`, run as a candidate is (from the audit's thread): a fault
// rejects it (margin 12); nullopt where its preconditions exclude the case.
std::optional<std::pair<bool, double>> judge_declared(const mutate::Checker& ch,
                                                      const Problem& problem,
                                                      judge::CheckBackend& be, const AuditKernel& k,
                                                      const Case& c, const judge::CaseData& d);
// Whether case `c`'s reference is a yardstick: it keeps its own tolerance and its dtype's
// ceiling against the golden (audit.cpp's reference check).
using YardstickTest = std::function<bool(const Case& c, const judge::CaseData& d)>;
// Each undetectable downgrade run on the exposure inputs until one rejects it (a case whose
// reference fails the policy, or the policy rejects the reference, exposes nothing):
// DowngradeResult::exposed_by.
void search_exposing_inputs(const mutate::Checker& ch, const Problem& problem,
                            judge::CheckBackend& be, const Case& first,
                            const std::vector<AuditKernel>& declared,
                            const std::set<std::string>& judged, const YardstickTest& yardstick,
                            PolicyAudit& pa);

// The backend that judges `ch` where the case lies (the problem's own policy on a backend with
// the GPU comparator, from the audit's thread only), or null: the host comparator, any thread.
judge::CheckBackend* device_judge(const mutate::Checker& ch, judge::CheckBackend& be);

// Every output judged by `ch`: whether all pass, and the largest log10 error over bound. With
// `device` (on its thread only), the problem's policy is judged where the case lies.
std::pair<bool, double> judge_outputs(const mutate::Checker& ch, const Problem& problem,
                                      const judge::CaseData& d,
                                      const std::vector<HostTensor>& outputs,
                                      judge::CheckBackend* device);

// A policy's findings in words: "OK", "hollow, unjudgeable", ...
std::string status_text(const PolicyAudit& p);

// One rung of the validity ladder: case `c`, the first shape set's seed-0 inputs made more
// aggressive one way (`family`, `label`: "mean offset", "x+1e+03"); `first` is the default
// cases' own aggressiveness. Rungs by family, mildest first (ladder.cpp).
struct Rung {
  std::string family, label;
  Case c;
  bool first = false;
};
std::vector<Rung> ladder_rungs(const Problem& problem, const Case& first);

// The problem's correct variants (its solutions, their CTRL mutants and, on the GPU, their
// --fmad=false builds) on every rung of the ladder (ladder.cpp), judged by each checker: each
// policy's ladder steps and ceilings added to `audit.policies[k]` for `checkers[k]`,
// ceiling_crossed where a variant fails a family's first rung; the solutions' errors on `first`
// put on audit.solution_errors.
void run_ladder(const Problem& problem, judge::CheckBackend& be, Backend backend, const Case& first,
                const std::vector<mutate::Checker>& checkers, ProblemAudit& audit);

} // namespace kj::audit::detail
