// The audit's reports (include/kjudge/audit.hpp): the console table and the JSON object.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "audit/audit_internal.hpp"

namespace kj::audit {

std::string detail::status_text(const PolicyAudit& p) {
  std::vector<std::string> names;
  for (const Status s : p.status) names.emplace_back(status_name(s));
  return fmt::format("{}", fmt::join(names, ", "));
}

namespace {

// JSON has no infinity: an exact policy's unbounded signal over bound is null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

// The ladder, a line per family: each rung, with the solutions that fail there and their
// log10 error over bound (or their fault), and the family's ceiling.
std::string ladder_lines(const PolicyAudit& p) {
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> families;
  for (const LadderStep& s : p.ladder) {
    if (families.empty() || families.back().first != s.family) families.push_back({s.family, {}});
    auto& rungs = families.back().second;
    if (rungs.empty() || rungs.back().first != s.rung) rungs.push_back({s.rung, ""});
    if (!s.pass)
      rungs.back().second += fmt::format("{}{} {}", rungs.back().second.empty() ? "" : ", ",
                                         s.candidate,
                                         s.note.empty() ? fmt::format("{:+.2f}", s.margin) : s.note);
  }
  std::string out;
  for (const auto& [family, rungs] : families) {
    std::vector<std::string> texts;
    for (const auto& [rung, failing] : rungs)
      texts.push_back(failing.empty() ? rung : fmt::format("{} FAIL {}", rung, failing));
    const auto ceiling = p.ceiling.find(family);
    out += fmt::format("  ladder {}: {}; ceiling: {}\n", family, fmt::join(texts, " | "),
                       ceiling == p.ceiling.end() ? "none" : ceiling->second);
  }
  return out;
}

// Under an undetectable downgrade: the input that would expose it, or that none searched does.
std::string exposure_line(const DowngradeResult& r) {
  if (!r.exposed_by.empty())
    return fmt::format("    would be exposed by {} ({})\n", r.exposed_recipe,
                       r.exposed_by);
  if (r.searched == 0) return "";
  return fmt::format("    exposed by none of {} other inputs kjudge makes: only a tighter "
                     "tolerance tells it apart\n",
                     r.searched);
}

} // namespace

std::string audit_console(const std::vector<ProblemAudit>& audits) {
  std::string out;
  for (const ProblemAudit& a : audits) {
    for (const PolicyAudit& p : a.policies) {
      std::vector<std::string> signal;
      for (const auto& [output, sb] : p.signal_over_bound)
        signal.push_back(fmt::format("{} {:.3g}", output, sb));
      out += fmt::format("{:<20} {:<16} {:<22} {:>3} cases   signal/bound: {}\n", a.problem,
                         p.policy, detail::status_text(p), p.cases,
                         signal.empty() ? "n/a" : fmt::format("{}", fmt::join(signal, ", ")));
      for (const TrivialResult& t : p.trivial)
        if (t.passes())
          out += fmt::format("  hollow: '{}' passes {} on {} of {} cases (best on {}: log10 "
                             "error/bound {:.2f})\n",
                             t.name, t.output, t.passed, t.cases, t.closest_case, t.margin);
      for (const DowngradeResult& r : p.downgrades)
        if (r.undetectable())
          out += fmt::format("  downgrade undetectable: {} {} passes all {} cases (closest to "
                             "failing on {}: log10 error/bound {:.2f})\n",
                             r.declared ? "the declared" : "the reference with", r.label(),
                             r.cases, r.closest_case, r.margin) +
                 exposure_line(r);
      for (const ReferenceFault& f : p.reference_faults)
        out += fmt::format("  {}: {} on {}: {}\n", f.special ? "excused" : "unjudgeable", f.output,
                           f.case_id, f.why);
      out += ladder_lines(p);
    }
    for (const std::string& note : a.notes) out += fmt::format("  note: {}\n", note);
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
                              {"arithmetic", r.arithmetic},
                              {"declared", r.declared},
                              {"cases", r.cases},
                              {"passed", r.passed},
                              {"undetectable", r.undetectable()},
                              {"exposed_by", r.exposed_by.empty() ? nlohmann::json(nullptr)
                                                                  : nlohmann::json{{"case", r.exposed_by},
                                                                                   {"recipe", r.exposed_recipe}}},
                              {"exposure_searched", r.searched},
                              {"closest_case", r.closest_case},
                              {"log_error_ratio", r.margin}});
      nlohmann::json ladder = nlohmann::json::array();
      for (const LadderStep& l : p.ladder)
        ladder.push_back({{"family", l.family},
                          {"rung", l.rung},
                          {"candidate", l.candidate},
                          {"pass", l.pass},
                          {"log_error_ratio", l.margin},
                          {"note", l.note}});
      policies.push_back({{"policy", p.policy},
                          {"description", p.description},
                          {"status", status},
                          {"cases", p.cases},
                          {"trivial", trivial},
                          {"reference_faults", faults},
                          {"excused_cases", p.excused_cases},
                          {"ladder", ladder},
                          {"ceiling", p.ceiling},
                          {"downgrades", downgrades},
                          {"signal_over_bound", signal}});
    }
    problems.push_back({{"problem", a.problem},
                        {"hash", a.hash},
                        {"backend", a.backend},
                        {"ok", a.ok()},
                        {"notes", a.notes},
                        {"policies", policies}});
  }
  return nlohmann::json{{"schema_version", 1}, {"problems", problems}}.dump(2) + "\n";
}

} // namespace kj::audit
