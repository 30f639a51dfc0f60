// A localisation as a person reads it (the harness's verdict first, then per stage and output the
// terms x percentiles as kernel / reference, the diagnostic, the stage to fix) and as JSON.
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kjudge/localize.hpp"
#include "kjudge/report.hpp"

namespace kj::localize {

using nlohmann::json;

namespace {

std::string versus(double kernel, double reference) {
  if (reference > 0) return fmt::format("{:.3g} / {:.3g} = {:.2f}x", kernel, reference, kernel / reference);
  return fmt::format("{:.3g} / {:.3g}", kernel, reference);
}

json stats_json(const TermStats& s) {
  return {{"p50", s.p50}, {"p99", s.p99}, {"p99.9", s.p999}, {"max", s.max},
          {"rms", s.rms}, {"mean", s.mean}, {"count", s.count}};
}

std::string harness_line(const Verdict& v) {
  return fmt::format("harness: {}{} ({} of {} cases passed): read every figure below with it",
                     outcome_name(v.outcome),
                     v.reason == Reason::none ? "" : fmt::format("({})", reason_name(v.reason)),
                     v.cases_passed, v.cases.size());
}

} // namespace

std::string localization_text(const Localization& l) {
  std::string t = harness_line(l.harness) + "\n";
  t += fmt::format("cases decomposed: {}\n\n", l.cases.size());
  for (const StageError& s : l.stage_errors)
    t += fmt::format("stage {}: |device - golden| p99.9 {}, max {}\n", s.stage,
                     versus(s.kernel.p999, s.reference.p999), versus(s.kernel.max, s.reference.max));
  for (const CutAtOutput& c : l.cuts) {
    t += fmt::format("\ncut at stage {}, output {} ({} error; kernel / reference)\n", c.stage,
                     c.output, c.statistic);
    t += fmt::format("  {:<12} {:<34} {:<34} {:<34} {}\n", "term", "p50", "p99", "p99.9", "max");
    for (const Term& term : c.terms)
      t += fmt::format("  {:<12} {:<34} {:<34} {:<34} {}\n", term.name,
                       versus(term.kernel.p50, term.reference.p50),
                       versus(term.kernel.p99, term.reference.p99),
                       versus(term.kernel.p999, term.reference.p999),
                       versus(term.kernel.max, term.reference.max));
    const Orthogonality& o = c.orthogonality;
    t += fmt::format("  diagnostic only: rms(total)^2 {:.3g} against rms(inherited)^2 + rms(own)^2 "
                     "{:.3g}{}\n",
                     o.total_sq, o.sum_sq,
                     o.failed.empty() ? " (its assumptions hold)" : "; its assumptions fail:");
    for (const std::string& f : o.failed) t += "    - " + f + "\n";
  }
  t += fmt::format("\nculprit: {} ({})\n", l.culprit, l.explanation);
  if (!l.leaves.empty()) {
    t += fmt::format("\nagainst --baseline, bit for bit (the fix changed {}):\n",
                     l.fixed_stage.empty() ? std::string("nothing") : "stage:" + l.fixed_stage);
    for (const LeafControl& leaf : l.leaves)
      t += fmt::format("  {:<12} {}{}\n", leaf.tensor,
                       leaf.differing == 0 ? std::string("identical")
                                           : fmt::format("moved ({} elements differ)", leaf.differing),
                       leaf.must_not_move ? " (upstream of the fix: must not move)" : "");
    t += l.moved_leaves.empty()
             ? std::string("untouched-leaf control: holds\n")
             : fmt::format("untouched-leaf control: FAILS: {} moved\n", fmt::join(l.moved_leaves, ", "));
  }
  return t;
}

json localization_json(const Localization& l) {
  json stages = json::array(), cuts = json::array();
  for (const StageError& s : l.stage_errors)
    stages.push_back({{"stage", s.stage}, {"kernel", stats_json(s.kernel)},
                      {"reference", stats_json(s.reference)}});
  for (const CutAtOutput& c : l.cuts) {
    json terms = json::object();
    for (const Term& t : c.terms)
      terms[t.name] = {{"kernel", stats_json(t.kernel)}, {"reference", stats_json(t.reference)}};
    cuts.push_back({{"stage", c.stage},
                    {"output", c.output},
                    {"statistic", c.statistic},
                    {"terms", terms},
                    {"orthogonality",
                     {{"total_sq", c.orthogonality.total_sq},
                      {"inherited_plus_own_sq", c.orthogonality.sum_sq},
                      {"correlation", c.orthogonality.correlation},
                      {"assumptions_failed", c.orthogonality.failed},
                      {"note", "a diagnostic, never the verdict"}}}});
  }
  json leaves = nullptr;
  if (!l.leaves.empty()) {
    leaves = {{"fixed_stage", l.fixed_stage}, {"moved", l.moved_leaves},
              {"holds", l.moved_leaves.empty()}, {"tensors", json::array()}};
    for (const LeafControl& leaf : l.leaves)
      leaves["tensors"].push_back({{"tensor", leaf.tensor}, {"differing", leaf.differing},
                                   {"must_not_move", leaf.must_not_move}});
  }
  return {{"schema_version", 1},
          {"baseline_control", leaves},
          {"harness", {{"outcome", outcome_name(l.harness.outcome)},
                       {"reason", reason_name(l.harness.reason)},
                       {"passed", l.harness.outcome == Outcome::pass},
                       {"cases_passed", l.harness.cases_passed},
                       {"cases", l.harness.cases.size()}}},
          {"cases", l.cases},
          {"stage_errors", stages},
          {"cuts", cuts},
          {"culprit", l.culprit},
          {"factor", std::isfinite(l.factor) ? json(l.factor) : json("inf")},
          {"explanation", l.explanation},
          {"tail", "p99.9 of |error| in the output's statistic; a stage owns the error past 1.5x "
                   "the reference's"}};
}

} // namespace kj::localize
