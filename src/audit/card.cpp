// Tolerance cards (include/kjudge/audit.hpp): written from an audit, read back by `check` to
// refuse a policy looser than the one the card records (kjudge/card.hpp).
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "kjudge/audit.hpp"
#include "kjudge/card.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/error.hpp"

namespace kj::audit {

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
    const ProblemAudit::SolutionError* best = nullptr;
    for (const ProblemAudit::SolutionError& e : audit.solution_errors)
      if (e.output == o.name && (!best || e.rms_over_scale < best->rms_over_scale)) best = &e;
    if (best) {
      t.insert("best_solution", best->candidate);
      t.insert("best_solution_max_over_scale", best->max_over_scale);
      t.insert("best_solution_rms_over_scale", best->rms_over_scale);
    }
    toml::array rejected;
    for (const TrivialResult& r : own.trivial)
      if (r.output == o.name && r.cases > 0 && !r.passes())
        rejected.push_back(toml::table{{"candidate", r.name}, {"log_error_ratio", r.margin}});
    for (const DowngradeResult& d : own.downgrades)
      if (!d.undetectable())
        rejected.push_back(toml::table{{"candidate", d.label()}, {"log_error_ratio", d.margin}});
    t.insert("rejected", std::move(rejected));
    outputs.push_back(std::move(t));
  }
  const toml::table card{{"kjudge_version", std::string(KJUDGE_VERSION)},
                         {"problem_hash", problem.short_hash()},
                         {"backend", audit.backend},
                         {"audit", fmt::format("{}", fmt::join(findings, ", "))},
                         {"cases", own.cases},
                         {"ceiling", [&] {
                            toml::table c;
                            for (const auto& [family, rung] : own.ceiling) c.insert(family, rung);
                            return c;
                          }()},
                         {"output", std::move(outputs)}};
  std::ostringstream text;
  text << "# The tolerance card of " << problem.name
       << ", written by `kjudge card` (docs/design.md \"Audit\"). Not part of\n# the problem's "
          "hash. `kjudge check` refuses a policy looser than the one recorded here unless\n# "
          "--allow-loosen is given: tolerances only tighten.\n"
       << card << '\n';
  return text.str();
}

} // namespace kj::audit
