// The checkers under test: the builtin five, a checker a user describes in TOML, and how
// each judges an observation (the problem's policy with kjudge's defences, or a tolerance
// against the same-precision reference).
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
#include <set>
#include <stdexcept>

#include <toml++/toml.h>

namespace kj::mutate {

using namespace kj::judge;

namespace {

Checker tolerance_checker(std::string name, int seeds, double f32, double half) {
  Checker c;
  c.name = std::move(name);
  c.draw = Checker::Draw::first_shape_seeds;
  c.seeds = seeds;
  c.judge = Checker::Judge::tolerance;
  c.rtol = c.atol = f32;
  c.rtol_half = c.atol_half = half;
  return c;
}

} // namespace

std::pair<double, double> checker_tolerances(const Checker& c, DType t) {
  if (c.torch_defaults) return torch_default_tolerances(t);
  const bool half = t != DType::f32 && t != DType::f64;
  double rtol = half ? c.rtol_half : c.rtol;
  const double atol = half ? c.atol_half : c.atol;
  if (c.dtype_epsilon_rtol) rtol = std::ldexp(1.0, -float_format(t).mantissa_bits);
  return {rtol, atol};
}

ToleranceJudgement judge_by_tolerance(const Checker& c, const HostTensor& actual,
                                      const HostTensor& expected) {
  const DType t = actual.dtype();
  const auto [rtol, atol] = is_float(t) ? checker_tolerances(c, t) : std::pair{0.0, 0.0};
  ToleranceJudgement j;
  double worst_pass = 0, worst_fail = 0;
  bool unbounded = false; // a failing element with no allowance or a NaN error
  for (std::int64_t i = 0; i < actual.numel(); ++i) {
    const double a = actual.get(i), e = expected.get(i);
    if (!std::isfinite(e) && c.skip_nonfinite_reference) continue;
    if (std::isinf(e) && a == e) continue;
    const double diff = std::fabs(a - e), allowed = atol + rtol * std::fabs(e);
    // The test is the comparison, never the ratio: a ratio can round to 1 just past the bound.
    if (diff <= allowed) {
      if (allowed > 0) worst_pass = std::max(worst_pass, diff / allowed);
      continue;
    }
    if (j.failing++ == 0) j.first_failing = i;
    if (allowed > 0 && std::isfinite(diff)) worst_fail = std::max(worst_fail, diff / allowed);
    else unbounded = true;
  }
  j.accepted = j.failing == 0;
  // Clamped like OutputFinding::log_error_ratio, its sign always the verdict's.
  if (!j.accepted) j.log_error_ratio = unbounded ? 12.0 : std::clamp(std::log10(worst_fail), 1e-12, 12.0);
  else j.log_error_ratio = worst_pass > 0 ? std::clamp(std::log10(worst_pass), -12.0, 0.0) : -12.0;
  return j;
}


namespace detail {

bool checker_accepts(const Checker& ch, const Problem& problem, const CaseData& d,
                     const Observation& ob) {
  if (ob.fault == Reason::crash || ob.fault == Reason::timeout ||
      ob.fault == Reason::launch_error || ob.fault == Reason::internal || ob.out0.empty())
    return false;
  if (ch.judge == Checker::Judge::tolerance) {
    for (std::size_t o = 0; o < ob.out0.size(); ++o)
      if (!judge_by_tolerance(ch, ob.out0[o], d.reference[o]).accepted) return false;
    return true;
  }
  if (ob.fault != Reason::none || ob.unwritten) return false;
  if (ob.differs && !problem.allow_nondeterministic) return false;
  for (std::size_t o = 0; o < ob.out0.size(); ++o)
    for (const HostTensor* t : {&ob.out0[o], &ob.out1[o]})
      if (!compare_output(host_compare_inputs(problem, o, d, *t, nullptr, {})).pass())
        return false;
  return true;
}

} // namespace detail

std::vector<Checker> builtin_checkers() {
  Checker kjudge;
  kjudge.name = "kjudge";
  std::vector<Checker> all{kjudge, tolerance_checker("kernelbench-v0", 5, 1e-2, 1e-2),
                           tolerance_checker("kernelbench", 5, 1e-4, 1e-2)};
  Checker torch = tolerance_checker("torch-defaults", 1, 0, 0);
  torch.torch_defaults = true;
  all.push_back(torch);
  // |ref - out| <= 1e-4 + |ref| eps(dtype): the rtol given here is replaced by the epsilon.
  Checker llmc = tolerance_checker("llmc", 1, 1e-4, 1e-4);
  llmc.dtype_epsilon_rtol = true;
  llmc.skip_nonfinite_reference = true;
  all.push_back(llmc);
  return all;
}

Checker load_checker(const std::string& file) {
  const Location where{file, "", 0, 0};
  toml::table t;
  try {
    t = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    throw SpecError(Location{file, "", static_cast<int>(e.source().begin.line),
                             static_cast<int>(e.source().begin.column)},
                    std::string(e.description()));
  }
  static const std::set<std::string> known{"name", "draw", "seeds", "judge", "rtol", "atol",
                                           "rtol_half", "atol_half", "torch_defaults",
                                           "dtype_epsilon_rtol", "skip_nonfinite_reference"};
  for (const auto& [key, value] : t)
    if (!known.contains(std::string(key.str())))
      throw SpecError(where, fmt::format("checker: unknown key '{}'", key.str()));
  Checker c;
  c.name = t["name"].value_or(std::string());
  if (c.name.empty()) throw SpecError(where, "checker: 'name' is required");
  const std::string draw = t["draw"].value_or(std::string("default"));
  if (draw != "default" && draw != "first-shape")
    throw SpecError(where, fmt::format("checker: draw = '{}' (default | first-shape)", draw));
  c.draw = draw == "default" ? Checker::Draw::default_cases : Checker::Draw::first_shape_seeds;
  c.seeds = static_cast<int>(t["seeds"].value_or(std::int64_t{1}));
  if (c.seeds < 1 || c.seeds > 64) throw SpecError(where, "checker: seeds must be in [1, 64]");
  const std::string judge = t["judge"].value_or(std::string("tolerance"));
  if (judge != "problem" && judge != "tolerance")
    throw SpecError(where, fmt::format("checker: judge = '{}' (problem | tolerance)", judge));
  c.judge = judge == "problem" ? Checker::Judge::problem_policy : Checker::Judge::tolerance;
  auto number = [&](const char* key, double fallback) {
    const auto node = t[key];
    if (!node) return fallback;
    if (auto v = node.value<double>(); v && *v >= 0) return *v;
    throw SpecError(where, fmt::format("checker: '{}' must be a number >= 0", key));
  };
  c.rtol = number("rtol", 0);
  c.atol = number("atol", 0);
  c.rtol_half = number("rtol_half", c.rtol);
  c.atol_half = number("atol_half", c.atol);
  c.torch_defaults = t["torch_defaults"].value_or(false);
  c.dtype_epsilon_rtol = t["dtype_epsilon_rtol"].value_or(false);
  c.skip_nonfinite_reference = t["skip_nonfinite_reference"].value_or(false);
  return c;
}

std::vector<Checker> resolve_checkers(const std::vector<std::string>& names) {
  const std::vector<Checker> builtin = builtin_checkers();
  if (names.empty()) return builtin;
  std::vector<Checker> out;
  for (const std::string& n : names) {
    if (n.size() > 5 && n.ends_with(".toml")) {
      out.push_back(load_checker(n));
      continue;
    }
    const auto it = std::find_if(builtin.begin(), builtin.end(),
                                 [&](const Checker& c) { return c.name == n; });
    if (it == builtin.end())
      throw std::invalid_argument(fmt::format(
          "unknown checker '{}' (builtin: kjudge, kernelbench-v0, kernelbench, torch-defaults, "
          "llmc; or a .toml file)",
          n));
    out.push_back(*it);
  }
  return out;
}

} // namespace kj::mutate
