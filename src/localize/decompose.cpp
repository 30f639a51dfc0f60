// kj::localize::localize: the exact-substitution decomposition. Per case, one run of the
// candidate with its stages exposed (with_stages_as_outputs) gives device_B and device_C(device_B);
// per stage, the launches after its cut run on the golden's stage rounded to the interface dtype
// (device_C(exact_B)), and the golden's launches after it on the candidate's stage
// (exact_C(device_B)) and on the reference's; then the terms, element by element, in the
// statistic the output's gate judges.
#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "judge/backend.hpp"
#include "judge/case_oracle.hpp"
#include "judge/check_settings.hpp"
#include "judge/host/host_backend.hpp"
#include "judge/kernel_under_test.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/localize.hpp"
#include "localize/localize_internal.hpp"
#include "localize/opened_backend.hpp"

namespace kj::localize {

using namespace kj::judge;

namespace {

// One backend over one derived problem, with a runner of the matching derived candidate
// started on it.
struct Side : OpenedBackend {
  Candidate candidate;
  std::unique_ptr<KernelUnderTest> runner;

  // `what` names the kernel in messages ("the candidate", "the --baseline kernel", ...).
  Side(Problem p, Candidate c, const CheckOptions& o, Backend b, const std::string& what)
      : OpenedBackend(std::move(p), o, b, "localize"), candidate(std::move(c)) {
    runner = backend->make_runner("candidate", candidate);
    if (auto failed = runner->start())
      throw SpecError({candidate.path.string(), "", 0, 0},
                      fmt::format("localize: {} cannot start: {}: {}", what,
                                  reason_name(failed->reason), failed->message.substr(0, 400)));
  }

  CaseData prepared(const Case& c) {
    CaseData d = backend->oracle().prepare(c);
    backend->complete_host_copies(d);
    return d;
  }
  CaseData prepared_on(const Case& c, std::vector<HostTensor> inputs) {
    CaseData d = backend->oracle().prepare_on(c, std::move(inputs));
    backend->complete_host_copies(d);
    return d;
  }
  // The candidate's outputs (this problem's) on `d`, or why it did not run clean.
  std::vector<HostTensor> run(const Case& c, const CaseData& d) {
    RunOutcome r = runner->run(c, d, 0);
    if (did_not_run(r) || r.reason != Reason::none)
      throw SpecError({candidate.path.string(), "", 0, 0},
                      fmt::format("localize: case {}: the candidate's run ended in {}: {}", c.id,
                                  reason_name(r.reason), r.message.substr(0, 300)));
    backend->outputs_to_host(r, d.output_shapes);
    return std::move(r.outputs);
  }
};

Backend chosen_backend(Backend asked) {
  if (asked != Backend::automatic) return asked;
  return cuda_available() ? Backend::cuda : Backend::host;
}

// The cases to decompose: the check's plan without hidden sets and special values (their
// errors are non-finite by design), at most `max`, or the one asked for.
std::vector<Case> cases_to_decompose(const Problem& p, Backend backend,
                                     const LocalizeOptions& o) {
  CaseOptions co;
  co.include_hidden = false;
  co.special_values = false;
  std::string budget;
  const CasePlan plan = backend == Backend::host ? host_case_plan(p, co, budget)
                                                 : enumerate_cases(p, co);
  std::vector<Case> out;
  for (const Case& c : plan.cases) {
    if (o.only_case && c.id != *o.only_case) continue;
    out.push_back(c);
    if (!o.only_case && static_cast<int>(out.size()) >= o.max_cases) break;
  }
  if (out.empty())
    throw SpecError({p.dir.string(), "", 0, 0},
                    o.only_case ? fmt::format("localize: no case '{}' in the plan", *o.only_case)
                                : std::string("localize: the plan has no case to decompose"));
  return out;
}

std::vector<HostTensor> with_stage(std::vector<HostTensor> inputs, HostTensor stage) {
  inputs.push_back(std::move(stage));
  return inputs;
}

std::int64_t differing_elements(const HostTensor& a, const HostTensor& b) {
  const std::size_t size = dtype_size(a.dtype());
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i)
    n += std::memcmp(a.bytes().data() + i * size, b.bytes().data() + i * size, size) != 0;
  return n;
}

// The untouched-leaf control from the per-tensor counts (stages, then outputs): the fixed stage
// (a stage, or an output for the outputs' own launches) is the one named, else the first that
// moved; every stage before it must not have moved.
void judge_leaves(const Problem& problem, const std::vector<std::int64_t>& differing,
                  const std::string& fixed, Localization& l) {
  std::vector<std::string> names;
  for (const StageSpec& s : problem.stages) names.push_back(s.name);
  for (const OutputSpec& o : problem.outputs) names.push_back(o.name);
  l.fixed_stage = fixed;
  if (l.fixed_stage.empty())
    for (std::size_t t = 0; t < names.size() && l.fixed_stage.empty(); ++t)
      if (differing[t] > 0) l.fixed_stage = names[t];
  bool upstream = !l.fixed_stage.empty();
  for (std::size_t t = 0; t < names.size(); ++t) {
    if (names[t] == l.fixed_stage) upstream = false;
    l.leaves.push_back({names[t], differing[t], upstream});
    if (upstream && differing[t] > 0) l.moved_leaves.push_back(names[t]);
  }
}

} // namespace

Localization localize(const Problem& problem, const Candidate& candidate,
                      const LocalizeOptions& options) {
  if (auto why = unsplittable(problem, candidate))
    throw SpecError({candidate.path.string(), "", 0, 0}, *why);
  Localization l;
  l.harness = check(problem, candidate, options.check);
  const Backend backend = chosen_backend(options.check.backend);

  Side whole(with_stages_as_outputs(problem), with_stages_as_outputs(problem, candidate),
             options.check, backend, "the candidate");
  std::vector<std::unique_ptr<Side>> cuts;
  for (std::size_t s = 0; s < problem.stages.size(); ++s)
    cuts.push_back(std::make_unique<Side>(after_cut(problem, s),
                                          after_cut(problem, candidate, s), options.check,
                                          backend,
                                          fmt::format("the candidate's launches after stage '{}'",
                                                      problem.stages[s].name)));

  std::unique_ptr<Side> old;
  if (options.baseline) {
    if (auto why = unsplittable(problem, *options.baseline))
      throw SpecError({options.baseline->path.string(), "", 0, 0}, "--baseline: " + *why);
    if (!options.fixed_stage.empty() && !problem.find_stage(options.fixed_stage) &&
        !problem.find_output(options.fixed_stage))
      throw SpecError({}, fmt::format("--fixed: no stage or output '{}' in problem '{}'",
                                      options.fixed_stage, problem.name));
    old = std::make_unique<Side>(with_stages_as_outputs(problem),
                                 with_stages_as_outputs(problem, *options.baseline), options.check,
                                 backend, "the --baseline kernel");
  }
  const std::size_t n_out = problem.outputs.size();
  const std::size_t n_stages = problem.stages.size();
  std::vector<std::int64_t> differing(n_stages + n_out, 0); // stages, then outputs
  Accumulator acc(problem);
  for (const Case& c : cases_to_decompose(problem, backend, options)) {
    l.cases.push_back(c.id);
    const CaseData d = whole.prepared(c);
    const std::vector<HostTensor> device = whole.run(c, d);
    if (old) {
      const std::vector<HostTensor> before = old->run(c, d);
      for (std::size_t s = 0; s < n_stages; ++s)
        differing[s] += differing_elements(device[n_out + s], before[n_out + s]);
      for (std::size_t o = 0; o < n_out; ++o)
        differing[n_stages + o] += differing_elements(device[o], before[o]);
    }
    const std::vector<HostTensor> inputs = whole.backend->oracle().inputs_on_host(d);
    for (std::size_t s = 0; s < problem.stages.size(); ++s) {
      const StageSpec& stage = problem.stages[s];
      const HostTensor& exact = d.golden[n_out + s];
      const HostTensor& mine = device[n_out + s];
      const HostTensor& ref = d.reference[n_out + s];
      acc.stage_error(s, exact, mine, ref);
      Side& cut = *cuts[s];
      const CaseData on_exact = cut.prepared_on(c, with_stage(inputs, exact.converted(stage.dtype)));
      const std::vector<HostTensor> own = cut.run(c, on_exact);
      const CaseData on_mine = cut.prepared_on(c, with_stage(inputs, mine));
      const CaseData on_ref = cut.prepared_on(c, with_stage(inputs, ref));
      for (std::size_t o = 0; o < n_out; ++o) {
        if (!is_float(problem.outputs[o].dtype)) continue;
        CutTensors t{d.golden[o],      device[o],         on_mine.golden[o], own[o],
                     on_exact.golden[o], d.reference[o], on_ref.golden[o],  on_exact.reference[o]};
        acc.cut(s, o, t);
      }
    }
  }
  acc.finish(l);
  if (old) judge_leaves(problem, differing, options.fixed_stage, l);
  return l;
}

} // namespace kj::localize
