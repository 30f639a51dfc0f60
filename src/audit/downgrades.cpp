// The audit's downgrades (audit_internal.hpp): the reference on narrower inputs or in narrower
// arithmetic, the problem's declared weaker kernels, and the search for an input that exposes
// one a policy lets through.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "audit/audit_internal.hpp"
#include "judge/case_oracle.hpp"
#include "kjudge/tensor.hpp"

namespace kj::audit::detail {

using namespace kj::judge;
using mutate::Checker;

namespace {

// The inputs an undetectable downgrade is searched on: the mutation pool's (the host plan's
// small default cases and the witnesses) and the ladder's rungs, less `judged` (the policy's own
// case ids), each with its recipe.
std::vector<std::pair<Case, std::string>> exposure_inputs(const Problem& problem, const Case& first,
                                                          const std::set<std::string>& judged) {
  std::vector<std::pair<Case, std::string>> out;
  std::set<std::string> seen = judged;
  const mutate::detail::ProblemPool pool =
      mutate::detail::make_pool(problem, mutate::resolve_checkers({"kjudge"}));
  for (std::size_t i = 0; i < pool.cases.size(); ++i)
    if (seen.insert(pool.cases[i].id).second) out.emplace_back(pool.cases[i], pool.recipes[i]);
  for (Rung& r : ladder_rungs(problem, first))
    if (seen.insert(r.c.id).second)
      out.emplace_back(std::move(r.c), fmt::format("ladder:{} {}", r.family, r.label));
  return out;
}

} // namespace

std::vector<Downgrade> downgrades_of(const Problem& problem) {
  const DType own = problem_float_dtype(problem);
  std::vector<Downgrade> out;
  auto floating = [](const auto& tensors) {
    return std::any_of(tensors.begin(), tensors.end(), [](const auto& t) { return is_float(t.dtype); });
  };
  if (!floating(problem.inputs) && !floating(problem.outputs)) return out;
  for (const bool arithmetic : {false, true})
    for (auto [name, f] : {std::pair<std::string, FloatFormat>{"tf32", tf32_format()},
                           {"bf16", float_format(DType::bf16)}, {"f16", float_format(DType::f16)}})
      if (f.mantissa_bits < float_format(own).mantissa_bits)
        out.push_back({name, f, arithmetic});
  return out;
}

std::optional<std::vector<HostTensor>> rounded_inputs(const std::vector<HostTensor>& case_inputs,
                                                      const FloatFormat& f) {
  std::vector<HostTensor> inputs;
  bool changed = false;
  for (const HostTensor& original : case_inputs) {
    HostTensor in = original;
    if (in.dtype() == DType::f32) {
      changed = round_to_format_saturating(f, {in.data<float>(), static_cast<std::size_t>(in.numel())}) || changed;
    } else if (is_float(in.dtype())) {
      for (std::int64_t e = 0; e < in.numel(); ++e) {
        const double v = in.get(e), r = round_to_format_saturating(f, v);
        if (r != v && !(std::isnan(r) && std::isnan(v))) {
          in.set(e, r);
          changed = true;
        }
      }
    }
    inputs.push_back(std::move(in));
  }
  if (!changed) return std::nullopt;
  return inputs;
}

std::optional<std::vector<HostTensor>> downgraded_outputs(CheckBackend& be, const Case& c,
                                                          const Downgrade& g,
                                                          const std::vector<HostTensor>& inputs,
                                                          std::optional<std::vector<HostTensor>> rounded_in) {
  if (!rounded_in && !g.arithmetic) return std::nullopt;
  if (!rounded_in) rounded_in = inputs;
  if (g.arithmetic) return be.oracle().rounded_reference_on(c, std::move(*rounded_in), g.format);
  return be.oracle().reference_on(c, std::move(*rounded_in));
}

std::optional<std::pair<bool, double>> judge_declared(const Checker& ch, const Problem& problem,
                                                      CheckBackend& be,
                                                      const AuditKernel& k, const Case& c,
                                                      const CaseData& d) {
  if (unmet_precondition(problem, *k.candidate, c)) return std::nullopt;
  const mutate::detail::Observation ob = mutate::detail::observe(be, *k.kernel, problem, c, d);
  if (!run_fault(problem, ob).empty()) return std::pair<bool, double>{false, 12};
  return judge_outputs(ch, problem, d, ob.out0, device_judge(ch, be));
}


void search_exposing_inputs(const Checker& ch, const Problem& problem, CheckBackend& be,
                            const Case& first, const std::vector<AuditKernel>& declared,
                            const std::set<std::string>& judged, const YardstickTest& yardstick,
                            PolicyAudit& pa) {
  const std::vector<Downgrade> downgrades = downgrades_of(problem);
  auto open = [&](const DowngradeResult& r) { return r.undetectable() && r.exposed_by.empty(); };
  if (std::none_of(pa.downgrades.begin(), pa.downgrades.end(), open)) return;
  CheckBackend* const device = device_judge(ch, be);
  for (const auto& [c, recipe] : exposure_inputs(problem, first, judged)) {
    if (std::none_of(pa.downgrades.begin(), pa.downgrades.end(), open)) return;
    CaseData d = be.oracle().prepare(c);
    be.complete_host_copies(d);
    // Only where the policy accepts the reference itself (allclose never does on a NaN input).
    if (!yardstick(c, d) || !judge_outputs(ch, problem, d, d.reference, device).first)
      continue;
    const std::vector<HostTensor> inputs = be.oracle().inputs_on_host(d);
    // Per format, the inputs rounded to it (once for its inputs and its arithmetic downgrade).
    std::map<std::string, std::optional<std::vector<HostTensor>>> rounded;
    for (std::size_t k = 0; k < pa.downgrades.size(); ++k) {
      DowngradeResult& r = pa.downgrades[k];
      if (!open(r)) continue;
      std::optional<std::pair<bool, double>> judged_here;
      if (k < downgrades.size()) {
        const Downgrade& g = downgrades[k];
        auto [at, fresh] = rounded.try_emplace(g.format);
        if (fresh) at->second = rounded_inputs(inputs, g.f);
        if (auto made = downgraded_outputs(be, c, g, inputs, at->second))
          judged_here = judge_outputs(ch, problem, d, *made, device);
      } else {
        judged_here = judge_declared(ch, problem, be, declared[k - downgrades.size()], c, d);
      }
      if (!judged_here) continue;
      ++r.searched;
      if (!judged_here->first) {
        r.exposed_by = c.id;
        r.exposed_recipe = recipe;
      }
    }
  }
}

} // namespace kj::audit::detail
