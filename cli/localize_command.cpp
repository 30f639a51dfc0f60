// `kjudge localize PROBLEM --candidate FILE`: the library's decomposition (kjudge/localize.hpp),
// the table on standard output (unless the JSON goes there), the JSON where --json says.
#include <fstream>
#include <ostream>

#include "app.hpp"
#include "kjudge/error.hpp"
#include "kjudge/localize.hpp"

namespace kj::cli {

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
  const localize::Localization l = localize::localize(problem, candidate, o);
  const std::string json = localize::localization_json(l).dump(1) + "\n";
  if (a.json == "-") {
    out << json;
  } else {
    out << localize::localization_text(l);
    if (!a.json.empty()) {
      std::ofstream f(a.json);
      f << json;
      if (!f) throw SpecError({a.json, "", 0, 0}, "cannot write the JSON report");
    }
  }
  return 0;
}

} // namespace kj::cli
