// Tolerance cards (include/kjudge/audit.hpp): written from an audit, read back by `check` to
// refuse a policy looser than the one the card records.
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "kjudge/audit.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/error.hpp"

namespace kj::audit {

namespace {

// The bounds a policy allows, defaults resolved, as "larger is looser" numbers; cosine's and
// topk's agreement enter as 1 - value.
std::vector<double> looseness(const PolicySpec& p, DType t) {
  using K = PolicySpec::Kind;
  switch (p.kind) {
  case K::relative: return {p.k.value_or(is_float(t) ? default_relative_k(t) : 0)};
  case K::allclose: {
    const auto [rtol, atol] = torch_default_tolerances(t);
    return {p.rtol.value_or(rtol), p.atol.value_or(atol)};
  }
  case K::ulp: return {p.ulps};
  case K::ratio: return {p.threshold, p.max_fraction};
  case K::metric:
    if (p.metric == "rel_l2") return {p.metric_threshold};
    return {1 - p.metric_threshold, p.metric == "topk" ? -static_cast<double>(p.topk) : 0.0};
  case K::exact:
  case K::regions: return {};
  }
  return {};
}

// A policy as written, or its kind where the problem wrote none.
std::string policy_text(const PolicySpec& p) {
  return p.text.empty() ? std::string(policy_kind_name(p.kind)) : p.text;
}

} // namespace

bool policy_looser(const PolicySpec& now, const PolicySpec& recorded, DType t) {
  if (now.kind != recorded.kind || now.metric != recorded.metric) return true;
  if (now.expected != recorded.expected) return true;
  const std::vector<double> a = looseness(now, t), b = looseness(recorded, t);
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] > b[i]) return true;
  return false;
}

std::string card_toml(const Problem& problem, const ProblemAudit& audit) {
  const PolicyAudit& own = audit.policies.at(0);
  std::vector<std::string> findings;
  for (const Status s : own.status) findings.emplace_back(status_name(s));
  toml::array outputs;
  for (const OutputSpec& o : problem.outputs) {
    toml::table t{{"name", o.name}, {"policy", policy_text(o.policy)}};
    if (const auto it = own.signal_over_bound.find(o.name);
        it != own.signal_over_bound.end() && std::isfinite(it->second))
      t.insert("signal_over_bound", it->second);
    if (const auto it = own.reference_over_scale.find(o.name); it != own.reference_over_scale.end()) {
      t.insert("reference_max_over_scale", it->second.first);
      t.insert("reference_rms_over_scale", it->second.second);
    }
    toml::array rejected;
    for (const TrivialResult& r : own.trivial)
      if (r.output == o.name && r.cases > 0 && !r.passes())
        rejected.push_back(toml::table{{"candidate", r.name}, {"log_error_ratio", r.margin}});
    for (const DowngradeResult& d : own.downgrades)
      if (!d.undetectable())
        rejected.push_back(toml::table{{"candidate", d.format + " inputs"}, {"log_error_ratio", d.margin}});
    t.insert("rejected", std::move(rejected));
    outputs.push_back(std::move(t));
  }
  const toml::table card{{"kjudge_version", std::string(KJUDGE_VERSION)},
                         {"problem_hash", problem.short_hash()},
                         {"backend", audit.backend},
                         {"audit", fmt::format("{}", fmt::join(findings, ", "))},
                         {"cases", own.cases},
                         {"output", std::move(outputs)}};
  std::ostringstream text;
  text << "# The tolerance card of " << problem.name
       << ", written by `kjudge card` (docs/design.md \"Audit\"). Not part of\n# the problem's "
          "hash. `kjudge check` refuses a policy looser than the one recorded here unless\n# "
          "--allow-loosen is given: tolerances only tighten.\n"
       << card << '\n';
  return text.str();
}

std::optional<std::string> card_refusal(const Problem& problem) {
  const std::filesystem::path file = problem.dir / "card.toml";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  toml::table card;
  try {
    card = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw SpecError(Location{file.string(), "", static_cast<int>(e.source().begin.line),
                             static_cast<int>(e.source().begin.column)},
                    std::string(e.description()));
  }
  const toml::array* outputs = card["output"].as_array();
  if (!outputs) return std::nullopt;
  for (std::size_t i = 0; i < outputs->size(); ++i) {
    const toml::table* t = (*outputs)[i].as_table();
    const std::string field = fmt::format("output[{}]", i);
    const auto name = t ? (*t)["name"].value<std::string>() : std::nullopt;
    const auto policy = t ? (*t)["policy"].value<std::string>() : std::nullopt;
    if (!name || !policy)
      throw SpecError(Location{file.string(), field, 0, 0}, "a card's output needs a name and a policy");
    const OutputSpec* now = problem.find_output(*name);
    if (!now) continue; // an output the problem no longer has: nothing to loosen
    const PolicySpec recorded = parse_policy(*policy, Location{file.string(), field + ".policy", 0, 0});
    if (policy_looser(now->policy, recorded, now->dtype))
      return fmt::format("output '{}': the policy '{}' is looser than '{}' that {} records; "
                         "tighten it, write a new card (kjudge card), or pass --allow-loosen",
                         *name, policy_text(now->policy), *policy, file.string());
  }
  return std::nullopt;
}

} // namespace kj::audit
