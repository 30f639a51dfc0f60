// `kjudge localize PROBLEM --candidate FILE` and `kjudge whatif PROBLEM --scheme FILE`: the
// library's decomposition and precision replay (kjudge/localize.hpp), the table on standard
// output (unless the JSON goes there), the JSON where --json says.
#include <fstream>
#include <ostream>

#include "app.hpp"
#include "kjudge/error.hpp"
#include "kjudge/localize.hpp"

namespace kj::cli {

namespace {

// The table on `out`, or the JSON there with "-"; the JSON also to a file.
void write_report(const std::string& text, const nlohmann::json& j, const std::string& where,
                  std::ostream& out) {
  const std::string json = j.dump(1) + "\n";
  if (where == "-") {
    out << json;
    return;
  }
  out << text;
  if (where.empty()) return;
  std::ofstream f(where);
  f << json;
  if (!f) throw SpecError({where, "", 0, 0}, "cannot write the JSON report");
}

} // namespace

int run_whatif(const WhatifArgs& a, std::ostream& out, std::ostream& err) {
  (void)err;
  const Problem problem = load_problem(a.problem);
  const std::vector<localize::Scheme> schemes = localize::load_schemes(a.scheme, problem);
  localize::WhatIfOptions o;
  o.check.cache_dir = a.cache.empty() ? default_cache_dir() : std::filesystem::path(a.cache);
  o.check.self_exe = self_executable();
  o.max_cases = a.max_cases;
  const localize::WhatIf w = localize::whatif(problem, schemes, o);
  write_report(localize::whatif_text(w), localize::whatif_json(w), a.json, out);
  return 0;
}

int run_localize(const LocalizeArgs& a, std::ostream& out, std::ostream& err) {
  (void)err;
  const Problem problem = load_problem(a.problem);
  const Candidate candidate = load_candidate(a.candidate, problem);
  localize::LocalizeOptions o;
  o.check.cache_dir = a.cache.empty() ? default_cache_dir() : std::filesystem::path(a.cache);
  o.check.self_exe = self_executable();
  o.check.backend = parse_backend(a.backend).value_or(Backend::automatic);
  if (!a.case_id.empty()) o.only_case = a.case_id;
  o.max_cases = a.max_cases;
  if (!a.price.empty()) {
    const localize::Pricing p =
        localize::price(problem, candidate, load_candidate(a.price, problem), o.check);
    write_report(localize::pricing_text(p), localize::pricing_json(p), a.json, out);
    return 0;
  }
  if (!a.baseline.empty()) o.baseline = load_candidate(a.baseline, problem);
  o.fixed_stage = a.fixed;
  const localize::Localization l = localize::localize(problem, candidate, o);
  write_report(localize::localization_text(l), localize::localization_json(l), a.json, out);
  if (!a.html.empty()) {
    std::ofstream f(a.html);
    f << localize::localization_html(l);
    if (!f) throw SpecError({a.html, "", 0, 0}, "cannot write the HTML page");
  }
  return l.moved_leaves.empty() ? 0 : 1; // the untouched-leaf control failed
}

} // namespace kj::cli
