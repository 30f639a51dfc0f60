// The audit of include/kjudge/audit.hpp: each policy's cases made by the backend's oracle, the
// trivial candidates and the downgraded references judged on them as a candidate's outputs
// would be, the reference held to its own policy and to its dtype's ceiling.
#include "kjudge/audit.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "judge/backend.hpp"
#include "judge/check_settings.hpp"
#include "judge/host/host_backend.hpp"
#include "judge/output_judging.hpp"
#include "judge/task_pool.hpp"
#include "audit/audit_internal.hpp"
#include "kjudge/cases.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/judge.hpp"

namespace kj::audit {

using namespace kj::judge;
using mutate::Checker;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A backend and the settings it holds references to.
struct OpenBackend {
  CheckOptions options;
  CheckSettings settings{options};
  Verdict verdict;
  std::unique_ptr<CheckBackend> backend;
};

std::unique_ptr<OpenBackend> open_backend(const Problem& problem, Backend backend,
                                          const std::string& self_exe) {
  auto b = std::make_unique<OpenBackend>();
  b->options.backend = backend;
  b->options.self_exe = self_exe;
  b->settings.backend = backend;
  if (auto refused = resolve_check_settings(b->settings, b->verdict))
    throw std::runtime_error("audit: " + *refused);
  CaseCache* no_cache = nullptr;
  b->backend = make_backend(b->settings, problem, no_cache, b->verdict);
  return b;
}

// The cases a checker judges: kjudge's default plan as `check` runs it on this backend, or the
// seeds of the first shape set.
std::vector<Case> cases_of(const Problem& problem, const Checker& ch, Backend backend) {
  CaseOptions options;
  std::string budget;
  const CasePlan plan = backend == Backend::host ? host_case_plan(problem, options, budget)
                                                 : enumerate_cases(problem, options);
  if (ch.draw == Checker::Draw::default_cases) return plan.cases;
  std::vector<Case> seeds = witness_cases(problem, plan, std::max(ch.seeds, 1));
  seeds.resize(std::min<std::size_t>(seeds.size(), static_cast<std::size_t>(std::max(ch.seeds, 1))));
  return seeds;
}

// One output judged as a candidate's would be: its finding under the problem's policy.
OutputFinding policy_finding(const Problem& problem, const CaseData& d, std::size_t o,
                             const HostTensor& actual, CheckBackend* device) {
  if (device)
    if (std::optional<OutputFinding> f = device->judge_made_output(d, o, actual)) return *f;
  return compare_output(host_compare_inputs(problem, o, d, actual, nullptr, {}));
}

// One output judged as a candidate's would be: pass, and log10 of its error over the bound.
std::pair<bool, double> judge_output(const Checker& ch, const Problem& problem, const CaseData& d,
                                     std::size_t o, const HostTensor& actual,
                                     CheckBackend* device) {
  if (ch.judge == Checker::Judge::tolerance) {
    const mutate::ToleranceJudgement j = mutate::judge_by_tolerance(ch, actual, d.reference[o]);
    return {j.accepted, j.log_error_ratio};
  }
  const OutputFinding f = policy_finding(problem, d, o, actual, device);
  return {f.pass(), f.log_error_ratio};
}

// The error the policy allows at magnitude |v| of the expected value, where it has an
// elementwise bound: relative's max bound on this case (`relative_bound`), allclose's atol +
// rtol |v|, ratio's and rel_l2's relative threshold, the CANN regions' bounds. nullopt: none
// (ulp, exact, cosine, topk).
std::optional<double> allowed_at(const Checker& ch, const OutputSpec& spec, double relative_bound,
                                 double v) {
  const DType t = spec.dtype;
  const double a = std::fabs(v);
  if (ch.judge == Checker::Judge::tolerance) {
    const auto [rtol, atol] = mutate::checker_tolerances(ch, t);
    return atol + rtol * a;
  }
  const PolicySpec& p = spec.policy;
  switch (p.kind) {
  case PolicySpec::Kind::relative: return relative_bound;
  case PolicySpec::Kind::allclose: {
    const auto [rtol, atol] = torch_default_tolerances(t);
    return p.atol.value_or(atol) + p.rtol.value_or(rtol) * a;
  }
  case PolicySpec::Kind::ratio: return p.threshold * a;
  case PolicySpec::Kind::regions: {
    const RegionConstants k = cann_constants(t);
    if (a < k.small_boundary) return k.small_abs_bound;
    if (a < k.cancel_boundary) return k.cancel_abs_bound;
    return 10 * k.threshold * a;
  }
  case PolicySpec::Kind::metric:
    if (p.metric == "rel_l2") return p.metric_threshold * a;
    return std::nullopt;
  case PolicySpec::Kind::ulp:
  case PolicySpec::Kind::exact: return std::nullopt;
  }
  return std::nullopt;
}

// Whether `values` hold the expected values rounded to their dtype wherever those are finite.
bool is_the_answer(const HostTensor& values, const HostTensor& expected) {
  for (std::int64_t i = 0; i < values.numel(); ++i) {
    const double e = expected.get(i);
    if (std::isfinite(e) && values.get(i) != round_to(values.dtype(), e)) return false;
  }
  return true;
}

// relative's max bound on this case (the reference's own error times k, or its floor), read
// off the reference judged as a candidate; 0 for the other policies, which do not need it.
double relative_bound_of(const Checker& ch, const Problem& problem, const CaseData& d,
                         std::size_t o, CheckBackend* device) {
  if (ch.judge != Checker::Judge::problem_policy ||
      problem.outputs[o].policy.kind != PolicySpec::Kind::relative || !is_float(problem.outputs[o].dtype))
    return 0;
  return policy_finding(problem, d, o, d.reference[o], device).bound.max_bound;
}

// A deterministic sign per element (splitmix64 of the index).
double sign_of(std::int64_t i) {
  std::uint64_t z = static_cast<std::uint64_t>(i) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return ((z ^ (z >> 31)) & 1) ? 1.0 : -1.0;
}

// A trivial candidate of one output, made on a pool thread: nullopt where it does not apply to
// the case (the golden's mean where the golden is one value: then it is the answer).
struct TrivialMaker {
  std::string name;
  std::function<std::optional<HostTensor>()> make;
};

// The trivial candidates of output o on one case: zeros, ones, the golden's mean, a copy of the
// first input of the same shape, and the expected values moved beyond the bound: by ten times
// the allowed error (at least two ulps), or, where the policy allows ulps or nothing, by one
// more than it allows in 1% of the elements. The makers read `d` and `inputs`, which must
// outlive them.
std::vector<TrivialMaker> trivial_makers(const Checker& ch, const Problem& problem,
                                         const CaseData& d, const std::vector<HostTensor>& inputs,
                                         double relative_bound, std::size_t o) {
  const OutputSpec& spec = problem.outputs[o];
  const DType t = spec.dtype;
  const Shape shape = d.output_shapes[o];
  const HostTensor& golden = d.expected(o);
  const HostTensor& expected = ch.judge == Checker::Judge::tolerance ? d.reference[o] : golden;
  std::vector<TrivialMaker> out;
  auto filled = [t, shape](double v) {
    HostTensor values(t, shape);
    for (std::int64_t i = 0; i < values.numel(); ++i) values.set(i, v);
    return values;
  };
  out.push_back({"zeros", [=] { return std::optional(filled(0)); }});
  out.push_back({"ones", [=] { return std::optional(filled(1)); }});
  out.push_back({"golden mean", [=, &golden]() -> std::optional<HostTensor> {
                   double sum = 0;
                   std::int64_t n = 0;
                   std::optional<double> first;
                   bool constant = true;
                   for (std::int64_t i = 0; i < golden.numel(); ++i)
                     if (const double g = golden.get(i); std::isfinite(g)) {
                       sum += g;
                       ++n;
                       if (!first) first = g;
                       constant = constant && g == *first;
                     }
                   if (constant) return std::nullopt;
                   return filled(sum / static_cast<double>(n));
                 }});
  // An input declared with the output's shape (the same expressions: on every case, not where
  // the sizes happen to agree, as a one-element sum's input does).
  auto same_shape = [](const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t k = 0; k < a.size(); ++k)
      if (a[k].text() != b[k].text()) return false;
    return true;
  };
  for (std::size_t i = 0; i < problem.inputs.size(); ++i)
    if (same_shape(problem.inputs[i].shape, spec.shape)) {
      const HostTensor* in = &inputs[i];
      out.push_back({"copy of " + problem.inputs[i].name,
                     [in, t] { return std::optional(in->converted(t)); }});
      break;
    }

  auto moved_by = [&expected, t, shape](auto&& move_element) {
    HostTensor moved(t, shape);
    for (std::int64_t i = 0; i < expected.numel(); ++i) moved.set(i, expected.get(i));
    for (std::int64_t i = 0; i < expected.numel(); ++i) move_element(moved, i);
    return moved;
  };
  if (!is_float(t)) {
    const double step = spec.ties == "off_by_one" ? 2 : 1; // off_by_one allows 1
    out.push_back({fmt::format("1% of elements off by {}", step), [=, &expected] {
                     return std::optional(moved_by([&](HostTensor& m, std::int64_t i) {
                       if (i % 100 == 0) m.set(i, expected.get(i) + step);
                     }));
                   }});
    return out;
  }
  const PolicySpec::Kind kind = spec.policy.kind;
  if (ch.judge == Checker::Judge::problem_policy &&
      (kind == PolicySpec::Kind::ulp || kind == PolicySpec::Kind::exact || problem.tier == Tier::exact)) {
    const double n_ulps = kind == PolicySpec::Kind::ulp ? std::floor(spec.policy.ulps) + 1 : 1;
    out.push_back({fmt::format("1% of elements off by {:g} ulp", n_ulps), [=, &expected] {
                     return std::optional(moved_by([&](HostTensor& m, std::int64_t i) {
                       if (i % 100 != 0) return;
                       const double e = round_to(t, expected.get(i));
                       if (std::isfinite(e)) m.set(i, e + n_ulps * ulp_of(t, e));
                     }));
                   }});
    return out;
  }
  if (!allowed_at(ch, spec, relative_bound, 1.0)) return out; // no elementwise bound
  out.push_back({"noise 10x bound", [=, &ch, &spec, &expected]() -> std::optional<HostTensor> {
                   bool any = false;
                   HostTensor moved = moved_by([&](HostTensor& m, std::int64_t i) {
                     const double e = expected.get(i);
                     if (!std::isfinite(e)) return;
                     const double allowed = *allowed_at(ch, spec, relative_bound, e);
                     m.set(i, e + sign_of(i) * std::max(10 * allowed, 2 * ulp_of(t, e)));
                     any = true;
                   });
                   if (!any) return std::nullopt;
                   return moved;
                 }});
  return out;
}

// The reference against the golden on one case: the ceiling, and the checker's own bound where
// the bound is fixed (under relative the reference sets the bound, so only the ceiling holds).
struct ReferenceCheck {
  std::vector<ReferenceFault> faults;
  std::map<std::string, std::pair<double, double>> over_scale; // per output: {max, rms}
};
ReferenceCheck check_reference(const Checker& ch, const Problem& problem, const Case& c,
                               const CaseData& d) {
  ReferenceCheck out;
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    const OutputSpec& spec = problem.outputs[o];
    if (!is_float(spec.dtype) || d.golden.size() <= o || d.golden[o].numel() == 0) continue;
    const HostTensor &g = d.golden[o], &r = d.reference[o];
    const std::optional<ScaledError> e = error_over_golden_scale(spec.dtype, g, r);
    if (!e) continue;
    ReferenceFault fault;
    fault.case_id = c.id;
    fault.output = spec.name;
    fault.special = d.extreme_in_inputs;
    fault.ceiling = reference_ceiling(spec.dtype);
    fault.max_over_scale = e->max;
    fault.rms_over_scale = e->rms;
    out.over_scale[spec.name] = {e->max, e->rms};
    std::vector<std::string> why;
    if (!e->within(fault.ceiling))
      why.push_back(fmt::format("its error over the golden's scale is {:.3g} (max) and {:.3g} "
                                "(rms), past the {} ceiling {:.3g}",
                                fault.max_over_scale, fault.rms_over_scale,
                                dtype_name(spec.dtype), fault.ceiling));
    if (ch.judge == Checker::Judge::tolerance) {
      const mutate::ToleranceJudgement j = mutate::judge_by_tolerance(ch, r, g);
      fault.mismatches = j.failing;
      fault.first_index = j.first_failing;
    } else if (spec.policy.kind != PolicySpec::Kind::relative &&
               spec.policy.expected == Expected::golden) {
      const OutputFinding f = compare_output(host_compare_inputs(problem, o, d, r, nullptr, {}));
      if (!f.pass()) {
        fault.mismatches = std::max<std::int64_t>(f.mismatches, 1);
        fault.first_index = f.first.empty() ? -1 : f.first.front().flat;
      }
    }
    if (fault.mismatches > 0)
      why.push_back(fmt::format("{} element{} beyond its own bound (first at flat index {})",
                                fault.mismatches, fault.mismatches == 1 ? "" : "s",
                                fault.first_index));
    if (why.empty()) continue;
    fault.why = fmt::format("the {} reference fails against the f64 golden: {}",
                            dtype_name(spec.dtype), fmt::join(why, "; "));
    out.faults.push_back(std::move(fault));
  }
  return out;
}

// Median nonzero |golden| over the allowed error there, on the case's output o.
std::optional<double> signal_over_bound(const Checker& ch, const Problem& problem,
                                        const CaseData& d, double relative_bound, std::size_t o) {
  const HostTensor& g = d.expected(o);
  std::vector<double> mags; // nonzero: a zero (half of a relu's output) carries no signal
  for (std::int64_t i = 0; i < g.numel(); ++i)
    if (std::isfinite(g.get(i)) && g.get(i) != 0) mags.push_back(std::fabs(g.get(i)));
  if (mags.empty()) return std::nullopt;
  std::nth_element(mags.begin(), mags.begin() + static_cast<std::ptrdiff_t>(mags.size() / 2), mags.end());
  const double median = mags[mags.size() / 2];
  const OutputSpec& spec = problem.outputs[o];
  if (!is_float(spec.dtype)) return kInf;
  if (ch.judge == Checker::Judge::problem_policy) {
    if (spec.policy.kind == PolicySpec::Kind::exact || problem.tier == Tier::exact) return kInf;
    if (spec.policy.kind == PolicySpec::Kind::ulp)
      return median / std::max(spec.policy.ulps * ulp_of(spec.dtype, median), 0.0);
  }
  const std::optional<double> allowed = allowed_at(ch, spec, relative_bound, median);
  if (!allowed) return std::nullopt;
  return *allowed > 0 ? median / *allowed : kInf;
}

// A trivial candidate on one case: absent (not made here), the answer (not judged), or judged
// (on the device: its values wait in `unjudged` for the audit's thread).
struct TrivialOutcome {
  bool made = false, judged = false, pass = false;
  double margin = 12;
  std::optional<HostTensor> unjudged;
};

template <class T> std::vector<T> all_of_futures(std::vector<std::future<T>>& futures) {
  std::vector<T> out;
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

template <class T> std::future<T> ready_future(T value) {
  std::promise<T> p;
  p.set_value(std::move(value));
  return p.get_future();
}

// One case audited: the reference checked, the downgrades run (on the backend, from this thread)
// and, with the trivial candidates, judged on the pool's threads, or on the device from this
// thread where the backend judges there; the findings added to `pa`.
void audit_case(const Checker& ch, const Problem& problem, CheckBackend& be, TaskPool& pool,
                const Case& c, const std::vector<detail::AuditKernel>& declared, PolicyAudit& pa,
                std::map<std::pair<std::string, std::size_t>, std::size_t>& trivial_index) {
  CaseData d = be.oracle().prepare(c);
  be.complete_host_copies(d);
  std::vector<HostTensor> inputs;
  // Every task below borrows `d` and `inputs`: all finish before they go, however we leave.
  struct Drain {
    TaskPool& pool;
    ~Drain() { pool.wait_idle(); }
  } drain{pool};
  ++pa.cases;
  CheckBackend* const device = detail::device_judge(ch, be);
  const std::vector<detail::Downgrade> downgrades = detail::downgrades_of(problem);
  if (pa.cases == 1) {
    for (const detail::Downgrade& g : downgrades) {
      DowngradeResult& r = pa.downgrades.emplace_back();
      r.format = g.format;
      r.arithmetic = g.arithmetic;
    }
    for (const detail::AuditKernel& k : declared) {
      DowngradeResult& r = pa.downgrades.emplace_back();
      r.format = k.name;
      r.declared = true;
    }
  }
  auto reference = pool.submit([&] { return check_reference(ch, problem, c, d); });
  std::vector<std::future<double>> bound_futures;
  for (std::size_t o = 0; o < problem.outputs.size(); ++o)
    bound_futures.push_back(device ? ready_future(relative_bound_of(ch, problem, d, o, device))
                                   : pool.submit([&, o] {
                                       return relative_bound_of(ch, problem, d, o, nullptr);
                                     }));
  inputs = be.oracle().inputs_on_host(d);
  // Per format, the inputs rounded to it (once for both of its downgrades).
  std::map<std::string, std::shared_future<std::optional<std::vector<HostTensor>>>> rounded;
  for (std::size_t k = 0; k < downgrades.size(); ++k)
    if (!pa.downgrades[k].caught() && !rounded.count(downgrades[k].format))
      rounded[downgrades[k].format] =
          pool.submit([&inputs, f = downgrades[k].f] { return detail::rounded_inputs(inputs, f); }).share();
  const std::vector<double> bounds = all_of_futures(bound_futures);
  const ReferenceCheck checked = reference.get();
  for (const auto& [output, e] : checked.over_scale) {
    auto& [worst_max, worst_rms] = pa.reference_over_scale[output];
    worst_max = std::max(worst_max, e.first);
    worst_rms = std::max(worst_rms, e.second);
  }
  pa.reference_faults.insert(pa.reference_faults.end(), checked.faults.begin(), checked.faults.end());
  // A case whose reference is no yardstick rejects nothing (its bound may be infinite).
  if (!checked.faults.empty()) return;

  // Per downgrade: not run on this case (caught already, no input changed by an inputs-only
  // one, or no rounded reference), or judged.
  std::vector<std::optional<std::future<std::pair<bool, double>>>> downgrade_judged(downgrades.size());
  for (std::size_t k = 0; k < downgrades.size(); ++k) {
    if (pa.downgrades[k].caught()) continue;
    std::optional<std::vector<HostTensor>> made =
        detail::downgraded_outputs(be, c, downgrades[k], inputs, rounded.at(downgrades[k].format).get());
    if (!made) continue;
    auto outputs = std::make_shared<const std::vector<HostTensor>>(std::move(*made));
    downgrade_judged[k] =
        device ? ready_future(detail::judge_outputs(ch, problem, d, *outputs, device))
               : pool.submit([&, outputs] {
                   return detail::judge_outputs(ch, problem, d, *outputs, nullptr);
                 });
  }
  std::vector<std::pair<std::size_t, std::string>> trivial_names; // per future: output, name
  std::vector<std::future<TrivialOutcome>> trivial_judged;
  std::vector<std::future<std::optional<double>>> signal;
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    if (pa.cases == 1)
      signal.push_back(pool.submit([&, o] { return signal_over_bound(ch, problem, d, bounds[o], o); }));
    for (TrivialMaker& m : trivial_makers(ch, problem, d, inputs, bounds[o], o)) {
      trivial_names.emplace_back(o, m.name);
      trivial_judged.push_back(pool.submit([&, o, make = std::move(m.make)] {
        TrivialOutcome t;
        const std::optional<HostTensor> values = make();
        if (!values) return t;
        t.made = true;
        if (is_the_answer(*values, d.expected(o))) return t;
        t.judged = true;
        if (device) t.unjudged = std::move(values);
        else std::tie(t.pass, t.margin) = judge_output(ch, problem, d, o, *values, nullptr);
        return t;
      }));
    }
  }

  for (std::size_t k = 0; k < downgrade_judged.size(); ++k)
    if (downgrade_judged[k]) pa.downgrades[k].add(downgrade_judged[k]->get(), c.id);
  // The problem's declared downgrades, run on this thread like any candidate.
  for (std::size_t j = 0; j < declared.size(); ++j) {
    DowngradeResult& r = pa.downgrades[downgrades.size() + j];
    if (r.caught()) continue;
    if (const auto judged = detail::judge_declared(ch, problem, be, declared[j], c, d)) r.add(*judged, c.id);
  }
  for (std::size_t k = 0; k < trivial_judged.size(); ++k) {
    TrivialOutcome t = trivial_judged[k].get();
    if (!t.made) continue;
    const auto& [o, name] = trivial_names[k];
    if (t.unjudged) {
      std::tie(t.pass, t.margin) = judge_output(ch, problem, d, o, *t.unjudged, device);
      t.unjudged.reset();
    }
    auto [it, fresh] = trivial_index.try_emplace({name, o}, pa.trivial.size());
    if (fresh) pa.trivial.push_back({name, problem.outputs[o].name, 0, 0, "", 12});
    if (!t.judged) continue;
    TrivialResult& r = pa.trivial[it->second];
    ++r.cases;
    if (t.pass) ++r.passed;
    if (r.closest_case.empty() || t.margin < r.margin) {
      r.margin = t.margin;
      r.closest_case = c.id;
    }
  }
  for (std::size_t o = 0; o < signal.size(); ++o)
    if (const auto sb = signal[o].get()) pa.signal_over_bound[problem.outputs[o].name] = *sb;
}

// The first shape set's first case without a transform or special values: the ladder's base.
Case first_plain_case(const Problem& problem, Backend backend) {
  Checker defaults;
  defaults.draw = Checker::Draw::default_cases;
  for (const Case& c : cases_of(problem, defaults, backend))
    if (c.transform.input.empty() && !c.special && !c.shapes.perturbation) return c;
  throw std::runtime_error("audit: the problem has no plain case to build the ladder on");
}

PolicyAudit audit_policy(const Checker& ch, const Problem& problem, CheckBackend& be,
                         Backend backend, const std::vector<detail::AuditKernel>& declared) {
  PolicyAudit pa;
  pa.policy = ch.name;
  pa.description = ch.draw == Checker::Draw::default_cases
                       ? "the problem's policy on its default cases"
                       : fmt::format("{} seed{} of the first shape set", ch.seeds, ch.seeds == 1 ? "" : "s");
  const std::vector<Case> cases = cases_of(problem, ch, backend);
  std::vector<const Case*> pointers;
  for (const Case& c : cases) pointers.push_back(&c);
  // A judging thread holds a candidate, its comparison's scratch and a rounded copy of the
  // inputs: comparison_threads' allowance per element.
  TaskPool pool(comparison_threads(largest_case_elements(problem, pointers)));
  std::map<std::pair<std::string, std::size_t>, std::size_t> trivial_index;
  for (const Case& c : cases) audit_case(ch, problem, be, pool, c, declared, pa, trivial_index);
  std::set<std::string> judged;
  for (const Case& c : cases) judged.insert(c.id);
  detail::search_exposing_inputs(ch, problem, be, first_plain_case(problem, backend), declared,
                                 judged, [&](const Case& c, const CaseData& d) {
                                   return check_reference(ch, problem, c, d).faults.empty();
                                 }, pa);
  const bool hollow = std::any_of(pa.trivial.begin(), pa.trivial.end(),
                                  [&](const TrivialResult& r) { return r.passes(); });
  bool unjudgeable = false;
  for (const ReferenceFault& f : pa.reference_faults) {
    if (!f.special) unjudgeable = true;
    else if (std::find(pa.excused_cases.begin(), pa.excused_cases.end(), f.case_id) ==
             pa.excused_cases.end())
      pa.excused_cases.push_back(f.case_id);
  }
  if (hollow) pa.status.push_back(Status::hollow);
  if (unjudgeable) pa.status.push_back(Status::unjudgeable);
  std::erase_if(pa.downgrades, [](const DowngradeResult& r) { return r.cases == 0; });
  if (std::any_of(pa.downgrades.begin(), pa.downgrades.end(),
                  [](const DowngradeResult& r) { return r.undetectable(); }))
    pa.status.push_back(Status::downgrade_undetectable);
  if (pa.status.empty()) pa.status.push_back(Status::ok);
  return pa;
}

} // namespace

namespace detail {

CheckBackend* device_judge(const Checker& ch, CheckBackend& be) {
  return ch.judge == Checker::Judge::problem_policy && be.judges_made_outputs() ? &be : nullptr;
}

// Every output judged: whether all pass, and the largest log10 error over bound.
std::pair<bool, double> judge_outputs(const Checker& ch, const Problem& problem, const CaseData& d,
                                      const std::vector<HostTensor>& outputs,
                                      CheckBackend* device) {
  bool pass = true;
  double margin = -12;
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    const auto [ok, m] = judge_output(ch, problem, d, o, outputs[o], device);
    pass = pass && ok;
    margin = std::max(margin, m);
  }
  return {pass, margin};
}

} // namespace detail

std::string_view status_name(Status s) {
  switch (s) {
  case Status::ok: return "OK";
  case Status::hollow: return "hollow";
  case Status::unjudgeable: return "unjudgeable";
  case Status::downgrade_undetectable: return "downgrade undetectable";
  case Status::ceiling_crossed: return "ceiling crossed";
  }
  return "?";
}

bool ProblemAudit::ok() const {
  return std::all_of(policies.begin(), policies.end(), [](const PolicyAudit& p) {
    return p.status.size() == 1 && p.status[0] == Status::ok;
  });
}

std::vector<ProblemAudit> run_audit(const AuditOptions& options) {
  const Backend backend = machine_backend(options.backend, "audit");
  std::vector<ProblemAudit> all;
  for (const std::string& folder : options.problems) {
    const Problem problem = load_problem(folder);
    ProblemAudit pa;
    pa.problem = problem.name;
    pa.hash = problem.short_hash();
    pa.backend = std::string(backend_name(backend));
    const std::unique_ptr<OpenBackend> be = open_backend(problem, backend, options.self_exe);
    std::vector<detail::AuditKernel> declared;
    for (const std::string& file : problem.downgrades) {
      if (auto k = detail::start_kernel(*be->backend, file, load_candidate(problem.dir / file, problem)))
        declared.push_back(std::move(*k));
      else
        pa.notes.push_back(fmt::format("the declared downgrade {} cannot run on this backend", file));
    }
    for (const Checker& ch : options.checkers)
      pa.policies.push_back(audit_policy(ch, problem, *be->backend, backend, declared));
    if (options.ladder)
      detail::run_ladder(problem, *be->backend, backend, first_plain_case(problem, backend),
                         options.checkers, pa);
    if (const std::string why = be->backend->oracle().rounded_unavailable(); !why.empty())
      pa.notes.push_back("no arithmetic downgrades: " + why);
    all.push_back(std::move(pa));
  }
  return all;
}

} // namespace kj::audit
