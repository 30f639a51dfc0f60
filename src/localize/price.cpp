// kj::localize::price (`kjudge localize --price NEW.cu`): a fix priced by the benchmark's own
// formula before it is kept. Both versions are benched; each case's pass and score feed the
// problem's [score] gain and cost, and both sides of that arithmetic are shown.
#include <map>

#include <fmt/format.h>

#include "kjudge/error.hpp"
#include "kjudge/localize.hpp"
#include "kjudge/verdict.hpp"

namespace kj::localize {

using nlohmann::json;

namespace {

// The per-case score: reference time over candidate time on a timed case (the medians bench
// reports), 0 elsewhere.
double case_score(const CaseFinding& f) {
  if (!f.timing || f.timing->candidate_ms.empty() || f.timing->reference_ms.empty()) return 0;
  const double mine = sample_stats(f.timing->candidate_ms).median;
  return mine > 0 ? sample_stats(f.timing->reference_ms).median / mine : 0;
}

} // namespace

Pricing price(const Problem& problem, const Candidate& old_version, const Candidate& fix,
              const CheckOptions& check, int host_runs) {
  if (!problem.score)
    throw SpecError({problem.dir.string(), "", 0, 0},
                    fmt::format("--price: problem '{}' has no [score] formula (per_case, gain, "
                                "cost) to price a fix by",
                                problem.name));
  Pricing p;
  const ScoreFormula& f = *problem.score;
  p.per_case = f.per_case;
  p.gain_formula = f.gain.text();
  p.cost_formula = f.cost.text();
  BenchOptions bench_options;
  bench_options.check = check;
  bench_options.check.fail_fast = false; // every case's pass counts
  bench_options.runs = host_runs;
  p.old_verdict = bench(problem, old_version, bench_options);
  p.new_verdict = bench(problem, fix, bench_options);
  std::map<std::string, const CaseFinding*> fixed;
  for (const CaseFinding& c : p.new_verdict.cases) fixed[c.case_id] = &c;
  std::vector<Expr::RealEnv> cases;
  for (const CaseFinding& c : p.old_verdict.cases) {
    if (c.excluded) continue;
    const auto it = fixed.find(c.case_id);
    CasePrice row{c.case_id, c.pass(), it != fixed.end() && it->second->pass(), case_score(c),
                  it != fixed.end() ? case_score(*it->second) : 0};
    p.newly_passing += row.new_pass && !row.old_pass;
    p.newly_failing += row.old_pass && !row.new_pass;
    cases.push_back({{"old_pass", row.old_pass}, {"new_pass", row.new_pass},
                     {"old_score", row.old_score}, {"new_score", row.new_score}});
    p.cases.push_back(std::move(row));
  }
  const Expr::RealEnv global{{"N", static_cast<double>(cases.size())}};
  p.gain = f.gain.eval_real(global, cases);
  p.cost = f.cost.eval_real(global, cases);
  p.build = p.gain > p.cost;
  return p;
}

std::string pricing_text(const Pricing& p) {
  auto line = [](const Verdict& v) {
    return fmt::format("{}{} ({} of {} cases passed)", outcome_name(v.outcome),
                       v.reason == Reason::none ? "" : fmt::format("({})", reason_name(v.reason)),
                       v.cases_passed, v.cases.size());
  };
  std::string t = fmt::format("old: {}\nnew: {}\n", line(p.old_verdict), line(p.new_verdict));
  t += fmt::format("cases: {} priced, {} newly passing, {} newly failing (score: {})\n",
                   p.cases.size(), p.newly_passing, p.newly_failing, p.per_case);
  t += fmt::format("gain = {} = {:.4g}\ncost = {} = {:.4g}\n", p.gain_formula, p.gain,
                   p.cost_formula, p.cost);
  t += p.build ? fmt::format("decision: build the fix (gain {:.4g} > cost {:.4g})\n", p.gain, p.cost)
               : fmt::format("decision: do not build it (gain {:.4g} <= cost {:.4g})\n", p.gain,
                             p.cost);
  return t;
}

json pricing_json(const Pricing& p) {
  json cases = json::array();
  for (const CasePrice& c : p.cases)
    cases.push_back({{"case", c.case_id}, {"old_pass", c.old_pass}, {"new_pass", c.new_pass},
                     {"old_score", c.old_score}, {"new_score", c.new_score}});
  return {{"schema_version", 1},
          {"per_case", p.per_case},
          {"gain", {{"formula", p.gain_formula}, {"value", p.gain}}},
          {"cost", {{"formula", p.cost_formula}, {"value", p.cost}}},
          {"build", p.build},
          {"newly_passing", p.newly_passing},
          {"newly_failing", p.newly_failing},
          {"old", {{"outcome", outcome_name(p.old_verdict.outcome)},
                   {"cases_passed", p.old_verdict.cases_passed}}},
          {"new", {{"outcome", outcome_name(p.new_verdict.outcome)},
                   {"cases_passed", p.new_verdict.cases_passed}}},
          {"cases", cases}};
}

} // namespace kj::localize
