// The audit of include/kjudge/audit.hpp: each policy's cases made by the backend's oracle, the
// trivial candidates and the downgraded references judged on them as a candidate's outputs
// would be, the reference held to its own policy and to its dtype's ceiling.
#include "kjudge/audit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "judge/backend.hpp"
#include "judge/check_settings.hpp"
#include "judge/host/host_backend.hpp"
#include "judge/output_judging.hpp"
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

// What output o is expected to be: the golden, or the reference where there is none.
const HostTensor& expected_of(const CaseData& d, std::size_t o) {
  return d.golden.size() > o && d.golden[o].numel() > 0 ? d.golden[o] : d.reference[o];
}

// One output judged as a candidate's would be: pass, and log10 of its error over the bound.
std::pair<bool, double> judge_output(const Checker& ch, const Problem& problem, const CaseData& d,
                                     std::size_t o, const HostTensor& actual) {
  if (ch.judge == Checker::Judge::tolerance) {
    const mutate::ToleranceJudgement j = mutate::judge_by_tolerance(ch, actual, d.reference[o]);
    return {j.accepted, j.log_error_ratio};
  }
  const OutputFinding f = compare_output(host_compare_inputs(problem, o, d, actual, nullptr, {}));
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
                         std::size_t o) {
  if (ch.judge != Checker::Judge::problem_policy ||
      problem.outputs[o].policy.kind != PolicySpec::Kind::relative || !is_float(problem.outputs[o].dtype))
    return 0;
  return compare_output(host_compare_inputs(problem, o, d, d.reference[o], nullptr, {})).bound.max_bound;
}

// A deterministic sign per element (splitmix64 of the index).
double sign_of(std::int64_t i) {
  std::uint64_t z = static_cast<std::uint64_t>(i) + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return ((z ^ (z >> 31)) & 1) ? 1.0 : -1.0;
}

// The case's inputs on the host, made once per case: the CUDA oracle keeps its inputs on the
// device, and the host generator gives the same bits.
std::vector<HostTensor> host_inputs(const Problem& problem, const Case& c, const CaseData& d) {
  if (d.host_master.size() == problem.inputs.size()) return d.host_master;
  std::vector<HostTensor> out;
  for (std::size_t i = 0; i < problem.inputs.size(); ++i)
    out.push_back(generate_input(problem.inputs[i], d.input_shapes[i],
                                 StreamId{c.seed, static_cast<std::uint32_t>(i), 0}, c.transform,
                                 c.special ? &*c.special : nullptr, problem.dir));
  return out;
}

struct Trivial {
  std::string name;
  std::size_t output;
  HostTensor values; // in the output's dtype
};

// The trivial candidates of output o on one case: zeros, ones, the golden's mean, a copy of the
// first input of the same shape, and the expected values moved beyond the bound: by ten times
// the allowed error (at least two ulps), or, where the policy allows ulps or nothing, by one
// more than it allows in 1% of the elements.
std::vector<Trivial> trivial_outputs(const Checker& ch, const Problem& problem, const CaseData& d,
                                     const std::vector<HostTensor>& inputs, double relative_bound,
                                     std::size_t o) {
  const OutputSpec& spec = problem.outputs[o];
  const DType t = spec.dtype;
  const Shape& shape = d.output_shapes[o];
  const HostTensor& expected = ch.judge == Checker::Judge::tolerance ? d.reference[o] : expected_of(d, o);
  std::vector<Trivial> out;
  auto constant = [&](std::string name, double v) {
    HostTensor values(t, shape);
    for (std::int64_t i = 0; i < values.numel(); ++i) values.set(i, v);
    out.push_back({std::move(name), o, std::move(values)});
  };
  constant("zeros", 0);
  constant("ones", 1);
  double sum = 0;
  std::int64_t n = 0;
  const HostTensor& golden = expected_of(d, o);
  for (std::int64_t i = 0; i < golden.numel(); ++i)
    if (std::isfinite(golden.get(i))) {
      sum += golden.get(i);
      ++n;
    }
  // Where the golden is one value (a single element, a constant output) its mean is the answer,
  // not a trivial candidate.
  const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
  bool constant_golden = true;
  for (std::int64_t i = 0; i < golden.numel() && constant_golden; ++i)
    if (std::isfinite(golden.get(i)) && golden.get(i) != golden.get(0)) constant_golden = false;
  if (!constant_golden) constant("golden mean", mean);
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
      out.push_back({"copy of " + problem.inputs[i].name, o, inputs[i].converted(t)});
      break;
    }

  HostTensor moved(t, shape);
  for (std::int64_t i = 0; i < expected.numel(); ++i) moved.set(i, expected.get(i));
  if (!is_float(t)) {
    const double step = spec.ties == "off_by_one" ? 2 : 1; // off_by_one allows 1
    for (std::int64_t i = 0; i < moved.numel(); i += 100) moved.set(i, expected.get(i) + step);
    out.push_back({fmt::format("1% of elements off by {}", step), o, std::move(moved)});
    return out;
  }
  const PolicySpec::Kind kind = spec.policy.kind;
  const bool ulps = ch.judge == Checker::Judge::problem_policy &&
                    (kind == PolicySpec::Kind::ulp || kind == PolicySpec::Kind::exact ||
                     problem.tier == Tier::exact);
  if (ulps) {
    const double n_ulps = kind == PolicySpec::Kind::ulp ? std::floor(spec.policy.ulps) + 1 : 1;
    for (std::int64_t i = 0; i < moved.numel(); i += 100) {
      const double e = round_to(t, expected.get(i));
      if (std::isfinite(e)) moved.set(i, e + n_ulps * ulp_of(t, e));
    }
    out.push_back({fmt::format("1% of elements off by {:g} ulp", n_ulps), o, std::move(moved)});
    return out;
  }
  bool any = false;
  for (std::int64_t i = 0; i < moved.numel(); ++i) {
    const double e = expected.get(i);
    if (!std::isfinite(e)) continue;
    const std::optional<double> allowed = allowed_at(ch, spec, relative_bound, e);
    if (!allowed) return out;
    moved.set(i, e + sign_of(i) * std::max(10 * *allowed, 2 * ulp_of(t, e)));
    any = true;
  }
  if (any) out.push_back({"noise 10x bound", o, std::move(moved)});
  return out;
}

// The reference against the golden on one case: the ceiling, and the checker's own bound where
// the bound is fixed (under relative the reference sets the bound, so only the ceiling holds).
void check_reference(const Checker& ch, const Problem& problem, const Case& c, const CaseData& d,
                     PolicyAudit& pa) {
  for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
    const OutputSpec& spec = problem.outputs[o];
    if (!is_float(spec.dtype) || d.golden.size() <= o || d.golden[o].numel() == 0) continue;
    const HostTensor &g = d.golden[o], &r = d.reference[o];
    ReferenceFault fault;
    fault.case_id = c.id;
    fault.output = spec.name;
    fault.special = c.special.has_value();
    fault.ceiling = reference_ceiling(spec.dtype);
    double max_g = 0, sq_g = 0, max_e = 0, sq_e = 0;
    std::int64_t n = 0;
    for (std::int64_t i = 0; i < g.numel(); ++i) {
      const double gi = g.get(i), ri = r.get(i);
      if (!std::isfinite(gi)) continue;
      // Where the dtype cannot hold the golden, no reference in it can: not its fault.
      if (!std::isfinite(round_to(spec.dtype, gi))) continue;
      const double e = std::isfinite(ri) ? std::fabs(ri - gi) : kInf;
      max_g = std::max(max_g, std::fabs(gi));
      sq_g += gi * gi;
      max_e = std::max(max_e, e);
      sq_e += e * e;
      ++n;
    }
    if (n == 0) continue;
    const double floor = float_format(spec.dtype).min_normal;
    fault.max_over_scale = max_e / std::max(max_g, floor);
    fault.rms_over_scale = std::sqrt(sq_e / static_cast<double>(n)) /
                           std::max(std::sqrt(sq_g / static_cast<double>(n)), floor);
    auto& [worst_max, worst_rms] = pa.reference_over_scale[spec.name];
    worst_max = std::max(worst_max, fault.max_over_scale);
    worst_rms = std::max(worst_rms, fault.rms_over_scale);
    std::vector<std::string> why;
    if (!(fault.max_over_scale <= fault.ceiling) || !(fault.rms_over_scale <= fault.ceiling))
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
    pa.reference_faults.push_back(std::move(fault));
  }
}

// Median nonzero |golden| over the allowed error there, on the case's output o.
std::optional<double> signal_over_bound(const Checker& ch, const Problem& problem,
                                        const CaseData& d, double relative_bound, std::size_t o) {
  const HostTensor& g = expected_of(d, o);
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

// The narrower formats a downgraded kernel may round its inputs to: those with fewer mantissa
// bits than the problem's float dtype (only they are a loss of precision the policy must see).
std::vector<std::pair<std::string, FloatFormat>> downgrade_formats(const Problem& problem) {
  const DType own = problem_float_dtype(problem);
  std::vector<std::pair<std::string, FloatFormat>> out;
  if (!is_float(own)) return out;
  for (auto [name, f] : {std::pair<std::string, FloatFormat>{"tf32", tf32_format()},
                         {"bf16", float_format(DType::bf16)}, {"f16", float_format(DType::f16)}})
    if (f.mantissa_bits < float_format(own).mantissa_bits) out.emplace_back(name, f);
  return out;
}

// Each downgrade on one case: the reference on the case's float inputs rounded to the format.
void judge_downgrades(const Checker& ch, const Problem& problem, CheckBackend& be, const Case& c,
                      const CaseData& d, const std::vector<HostTensor>& case_inputs,
                      PolicyAudit& pa) {
  const auto formats = downgrade_formats(problem);
  if (pa.downgrades.size() != formats.size())
    for (const auto& [name, f] : formats) pa.downgrades.push_back({name, 0, 0, "", -12});
  for (std::size_t k = 0; k < formats.size(); ++k) {
    std::vector<HostTensor> inputs;
    bool changed = false; // inputs already on the format's grid (or none float): no downgrade
    for (std::size_t i = 0; i < problem.inputs.size(); ++i) {
      HostTensor in = case_inputs[i];
      if (is_float(in.dtype()))
        for (std::int64_t e = 0; e < in.numel(); ++e) {
          // Saturating: a careful downgrade keeps finite values finite, so only its precision,
          // never an overflow of FLT_MAX, can give it away.
          const FloatFormat& f = formats[k].second;
          const double v = in.get(e);
          double r = round_to_format(f, v);
          if (std::isinf(r) && std::isfinite(v)) r = std::copysign(f.max_finite, v);
          if (r != v && !(std::isnan(r) && std::isnan(v))) {
            in.set(e, r);
            changed = true;
          }
        }
      inputs.push_back(std::move(in));
    }
    if (!changed) continue;
    const std::vector<HostTensor> outputs = be.oracle().reference_on(c, std::move(inputs));
    bool pass = true;
    double margin = -12;
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      const auto [ok, m] = judge_output(ch, problem, d, o, outputs[o]);
      pass = pass && ok;
      margin = std::max(margin, m);
    }
    DowngradeResult& r = pa.downgrades[k];
    ++r.cases;
    if (pass) ++r.passed;
    if (r.closest_case.empty() || margin > r.margin) {
      r.margin = margin;
      r.closest_case = c.id;
    }
  }
}

PolicyAudit audit_policy(const Checker& ch, const Problem& problem, CheckBackend& be,
                         Backend backend) {
  PolicyAudit pa;
  pa.policy = ch.name;
  pa.description = ch.draw == Checker::Draw::default_cases
                       ? "the problem's policy on its default cases"
                       : fmt::format("{} seed{} of the first shape set", ch.seeds, ch.seeds == 1 ? "" : "s");
  const std::vector<Case> cases = cases_of(problem, ch, backend);
  std::map<std::pair<std::string, std::size_t>, std::size_t> index; // (name, output) -> trivial
  for (const Case& c : cases) {
    CaseData d = be.oracle().prepare(c);
    be.complete_host_copies(d);
    ++pa.cases;
    const std::size_t faults_before = pa.reference_faults.size();
    check_reference(ch, problem, c, d, pa);
    // A case whose reference is no yardstick rejects nothing (its bound may be infinite).
    if (pa.reference_faults.size() > faults_before) continue;
    const std::vector<HostTensor> inputs = host_inputs(problem, c, d);
    judge_downgrades(ch, problem, be, c, d, inputs, pa);
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      const double relative_bound = relative_bound_of(ch, problem, d, o);
      if (pa.cases == 1)
        if (const auto sb = signal_over_bound(ch, problem, d, relative_bound, o))
          pa.signal_over_bound[problem.outputs[o].name] = *sb;
      for (Trivial& t : trivial_outputs(ch, problem, d, inputs, relative_bound, o)) {
        auto [it, fresh] = index.try_emplace({t.name, o}, pa.trivial.size());
        if (fresh) pa.trivial.push_back({t.name, problem.outputs[o].name, 0, 0, "", 12});
        if (is_the_answer(t.values, expected_of(d, o))) continue;
        TrivialResult& r = pa.trivial[it->second];
        const auto [pass, margin] = judge_output(ch, problem, d, o, t.values);
        ++r.cases;
        if (pass) ++r.passed;
        if (r.closest_case.empty() || margin < r.margin) {
          r.margin = margin;
          r.closest_case = c.id;
        }
      }
    }
  }
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

double reference_ceiling(DType output) {
  return std::exp2(-0.5 * float_format(output).mantissa_bits);
}

std::string_view status_name(Status s) {
  switch (s) {
  case Status::ok: return "OK";
  case Status::hollow: return "hollow";
  case Status::unjudgeable: return "unjudgeable";
  case Status::downgrade_undetectable: return "downgrade undetectable";
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
    ProblemAudit pa{problem.name, problem.short_hash(), std::string(backend_name(backend)), {}};
    const std::unique_ptr<OpenBackend> be = open_backend(problem, backend, options.self_exe);
    for (const Checker& ch : options.checkers)
      pa.policies.push_back(audit_policy(ch, problem, *be->backend, backend));
    all.push_back(std::move(pa));
  }
  return all;
}

} // namespace kj::audit
