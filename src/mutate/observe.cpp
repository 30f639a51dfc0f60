// The pool of one problem's inputs and a kernel observed on one of them: two runs, what they
// damaged or left unwritten, their errors against the golden; the baseline and the strong
// oracle's rule on top (campaign_internal.hpp).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "judge/case_oracle.hpp"
#include "judge/defences.hpp"
#include "judge/findings.hpp"
#include "judge/host/host_backend.hpp"
#include "judge/output_judging.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/error.hpp"
#include "mutate/campaign_internal.hpp"

namespace kj::mutate::detail {

using namespace kj::judge;

namespace {

// "public:id", "perturbed:id", "public:scale*3", "public:offset+10s", "special:nan": what made
// the input, without the problem's names.
std::string recipe_of(const Case& c, const Problem& p) {
  std::string what = "id";
  if (c.special) {
    what = std::string(special_kind_name(c.special->kind));
  } else if (!c.transform.input.empty()) {
    const InputSpec* in = nullptr;
    for (const InputSpec& i : p.inputs)
      if (i.name == c.transform.input) in = &i;
    const double spread = in ? distribution_spread(in->dist).value_or(1.0) : 1.0;
    what = c.transform.offset != 0
               ? fmt::format("offset{:+g}s", c.transform.offset / spread)
               : fmt::format("scale*{:g}", c.transform.factor);
  }
  return fmt::format("{}:{}", c.case_class() == "hidden" ? "public" : c.case_class(), what);
}

} // namespace

ProblemPool make_pool(const Problem& problem, const std::vector<Checker>& checkers) {
  ProblemPool pool;
  CaseOptions options;
  options.include_hidden = false;
  std::string budget;
  // Small shapes on both backends: the host plan (the problem's host shape sets).
  const CasePlan plan = host_case_plan(problem, options, budget);
  pool.cases = plan.cases;
  // Witness space beyond the default cases (witness_cases): the checkers' seeds, a mean
  // offset where the host plan has none of its own, all-negative values.
  int seeds = 1;
  for (const Checker& ch : checkers)
    if (ch.draw != Checker::Draw::default_cases) seeds = std::max(seeds, ch.seeds);
  auto index_of = [&](const std::string& id) {
    return static_cast<std::size_t>(
        std::find_if(pool.cases.begin(), pool.cases.end(), [&](const Case& k) { return k.id == id; }) -
        pool.cases.begin());
  };
  const std::vector<Case> extra = witness_cases(problem, plan, seeds);
  if (extra.empty())
    throw SpecError(Location{problem.dir.string(), "", 0, 0},
                    "mutate: the problem has no unperturbed shape set to draw inputs from");
  pool.defaults = pool.cases.size();
  for (const Case& c : extra)
    if (index_of(c.id) == pool.cases.size()) pool.cases.push_back(c);
  for (const Checker& ch : checkers) {
    std::vector<std::size_t> draw;
    if (ch.draw == Checker::Draw::default_cases) {
      for (std::size_t i = 0; i < plan.cases.size(); ++i) draw.push_back(i);
    } else {
      for (int s = 0; s < std::max(ch.seeds, 1); ++s) draw.push_back(index_of(extra[static_cast<std::size_t>(s)].id));
    }
    pool.draws.push_back(std::move(draw));
  }
  for (const Case& c : pool.cases) pool.recipes.push_back(recipe_of(c, problem));
  return pool;
}

PoolInput pool_input(const Problem& problem, const ProblemPool& pool, std::size_t i) {
  const Case& k = pool.cases[i];
  PoolInput in{problem.name, k.id, pool.recipes[i]};
  in.default_case = i < pool.defaults;
  if (!in.default_case)
    in.adoptable = AdoptedCase{k.seed, k.transform.input, k.transform.factor, k.transform.offset, {}};
  return in;
}

// ---- Observing a kernel on one input -----------------------------------------------------


namespace {

void measure_errors(const CaseData& d, Observation& ob) {
  ob.error.assign(ob.out0.size(), 0.0);
  ob.bad.assign(ob.out0.size(), 0);
  for (std::size_t o = 0; o < ob.out0.size(); ++o) {
    const HostTensor& g = d.expected(o);
    for (const HostTensor* t : {&ob.out0[o], &ob.out1[o]}) {
      if (t->numel() != g.numel()) continue;
      for (std::int64_t i = 0; i < g.numel(); ++i) {
        const double e = g.get(i), a = t->get(i);
        if (!std::isfinite(e)) continue;
        if (!std::isfinite(a)) ++ob.bad[o];
        else ob.error[o] = std::max(ob.error[o], std::fabs(a - e));
      }
    }
  }
}

} // namespace

Observation observe(CheckBackend& backend, KernelUnderTest& kernel, const Problem& problem,
                    const Case& c, const CaseData& d) {
  Observation ob;
  std::vector<RunOutcome> runs;
  for (int run = 0; run < 2; ++run) {
    RunOutcome r = kernel.run(c, d, run);
    if (did_not_run(r)) {
      ob.fault = r.reason;
      ob.message = r.message;
      return ob;
    }
    backend.outputs_to_host(r, d.output_shapes);
    if (r.reason != Reason::none && ob.fault == Reason::none) {
      ob.fault = r.reason;
      ob.message = r.message;
    }
    runs.push_back(std::move(r));
  }
  ob.out0 = std::move(runs[0].outputs);
  ob.out1 = std::move(runs[1].outputs);
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    const DType t = problem.outputs[o].dtype;
    if (runs[0].poisoned[o] && find_unwritten(ob.out0[o], poison_pattern(0, t), &ob.out1[o],
                                              poison_pattern(1, t))
                                       .count > 0)
      ob.unwritten = true;
    if (find_differences(ob.out0[o], ob.out1[o]).count > 0) ob.differs = true;
  }
  measure_errors(d, ob);
  return ob;
}

// Every element NaN (float outputs) or off by one (integer ones): the sanity mutant.
Observation forced_fail(const Observation& good, const CaseData& d) {
  Observation ob = good;
  for (auto* outs : {&ob.out0, &ob.out1})
    for (HostTensor& t : *outs)
      for (std::int64_t i = 0; i < t.numel(); ++i)
        t.set(i, is_float(t.dtype()) ? std::nan("") : t.get(i) + 1);
  measure_errors(d, ob);
  return ob;
}

bool forced_fail_shows(const Observation& good, const Observation& forced) {
  for (std::size_t o = 0; o < forced.bad.size(); ++o)
    if (forced.bad[o] > good.bad[o] || forced.error[o] > 0) return true;
  return false;
}

// Why the strong oracle kills on this input, or nullopt.
std::optional<std::string> kill_reason(const Observation& ob, const Baseline& b,
                                       const Problem& problem) {
  if (ob.fault != Reason::none)
    return fmt::format("{}: {}", reason_name(ob.fault), ob.message.substr(0, 200));
  if (ob.unwritten) return std::string("unwritten_output");
  if (ob.differs && !problem.allow_nondeterministic) return std::string("nondeterministic");
  for (std::size_t o = 0; o < ob.error.size(); ++o) {
    const std::string& name = problem.outputs[o].name;
    if (ob.bad[o] > b.bad[o])
      return fmt::format("nonfinite: {} elements of '{}' where the golden is finite", ob.bad[o],
                         name);
    if (ob.error[o] > 2 * b.error[o])
      return b.error[o] > 0
                 ? fmt::format("error {:.3g} in '{}', {:.3g}x the largest of the controls",
                               ob.error[o], name, ob.error[o] / b.error[o])
                 : fmt::format("error {:.3g} in '{}', where every control is exact", ob.error[o],
                               name);
  }
  return std::nullopt;
}

// The mutant's error over the controls' largest on this input (finite ratios only).
std::optional<double> error_ratio(const Observation& ob, const Baseline& b) {
  if (ob.fault != Reason::none || ob.error.empty()) return std::nullopt;
  double worst = 0;
  for (std::size_t o = 0; o < ob.error.size(); ++o) {
    if (b.error[o] > 0) worst = std::max(worst, ob.error[o] / b.error[o]);
    else if (ob.error[o] > 0) return std::nullopt;
  }
  return worst;
}

} // namespace kj::mutate::detail
