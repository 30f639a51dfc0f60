// The audit's reports (include/kjudge/audit.hpp): the console table and the JSON object.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "kjudge/audit.hpp"

namespace kj::audit {

namespace {

std::string statuses(const PolicyAudit& p) {
  std::vector<std::string> names;
  for (const Status s : p.status) names.emplace_back(status_name(s));
  return fmt::format("{}", fmt::join(names, ", "));
}

// JSON has no infinity: an exact policy's unbounded signal over bound is null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

} // namespace

std::string audit_console(const std::vector<ProblemAudit>& audits) {
  std::string out;
  for (const ProblemAudit& a : audits)
    for (const PolicyAudit& p : a.policies) {
      std::vector<std::string> signal;
      for (const auto& [output, sb] : p.signal_over_bound)
        signal.push_back(fmt::format("{} {:.3g}", output, sb));
      out += fmt::format("{:<20} {:<16} {:<22} {:>3} cases   signal/bound: {}\n", a.problem,
                         p.policy, statuses(p), p.cases,
                         signal.empty() ? "n/a" : fmt::format("{}", fmt::join(signal, ", ")));
      for (const TrivialResult& t : p.trivial)
        if (t.passes())
          out += fmt::format("  hollow: '{}' passes {} on {} of {} cases (best on {}: log10 "
                             "error/bound {:.2f})\n",
                             t.name, t.output, t.passed, t.cases, t.closest_case, t.margin);
      for (const DowngradeResult& r : p.downgrades)
        if (r.undetectable())
          out += fmt::format("  downgrade undetectable: the reference on {} inputs passes all {} "
                             "cases (closest to failing on {}: log10 error/bound {:.2f})\n",
                             r.format, r.cases, r.closest_case, r.margin);
      for (const ReferenceFault& f : p.reference_faults)
        out += fmt::format("  {}: {} on {}: {}\n", f.special ? "excused" : "unjudgeable", f.output,
                           f.case_id, f.why);
    }
  return out;
}

std::string audit_json(const std::vector<ProblemAudit>& audits) {
  nlohmann::json problems = nlohmann::json::array();
  for (const ProblemAudit& a : audits) {
    nlohmann::json policies = nlohmann::json::array();
    for (const PolicyAudit& p : a.policies) {
      nlohmann::json status = nlohmann::json::array(), trivial = nlohmann::json::array(),
                     faults = nlohmann::json::array(), signal = nlohmann::json::object();
      for (const Status s : p.status) status.push_back(std::string(status_name(s)));
      for (const TrivialResult& t : p.trivial)
        trivial.push_back({{"name", t.name},
                           {"output", t.output},
                           {"cases", t.cases},
                           {"passed", t.passed},
                           {"passes", t.passes()},
                           {"closest_case", t.closest_case},
                           {"log_error_ratio", t.margin}});
      for (const ReferenceFault& f : p.reference_faults)
        faults.push_back({{"case_id", f.case_id},
                          {"output", f.output},
                          {"special", f.special},
                          {"mismatches", f.mismatches},
                          {"first_index", f.first_index},
                          {"max_over_scale", number(f.max_over_scale)},
                          {"rms_over_scale", number(f.rms_over_scale)},
                          {"ceiling", f.ceiling},
                          {"why", f.why}});
      for (const auto& [output, sb] : p.signal_over_bound) signal[output] = number(sb);
      nlohmann::json downgrades = nlohmann::json::array();
      for (const DowngradeResult& r : p.downgrades)
        downgrades.push_back({{"format", r.format},
                              {"cases", r.cases},
                              {"passed", r.passed},
                              {"undetectable", r.undetectable()},
                              {"closest_case", r.closest_case},
                              {"log_error_ratio", r.margin}});
      policies.push_back({{"policy", p.policy},
                          {"description", p.description},
                          {"status", status},
                          {"cases", p.cases},
                          {"trivial", trivial},
                          {"reference_faults", faults},
                          {"excused_cases", p.excused_cases},
                          {"downgrades", downgrades},
                          {"signal_over_bound", signal}});
    }
    problems.push_back({{"problem", a.problem},
                        {"hash", a.hash},
                        {"backend", a.backend},
                        {"ok", a.ok()},
                        {"policies", policies}});
  }
  return nlohmann::json{{"schema_version", 1}, {"problems", problems}}.dump(2) + "\n";
}

} // namespace kj::audit
