// `kjudge compare`: kj::compare_files on the parsed arguments, then the console and JSON
// reporters.
#include <fstream>
#include <ostream>

#include "app.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/report.hpp"

namespace kj::cli {

int run_compare(const CompareArgs& a, std::ostream& out, std::ostream& err) {
  Verdict verdict = compare_files(a.files);
  verdict.manifest.kjudge_version = KJUDGE_VERSION;
  std::ostream& console = a.json == "-" ? err : out;
  make_console_reporter(console)->report(verdict);
  if (a.json == "-") {
    make_json_reporter(out)->report(verdict);
  } else if (!a.json.empty()) {
    std::ofstream file(a.json, std::ios::binary | std::ios::trunc);
    if (!file) throw SpecError({a.json, "--json", 0, 0}, "cannot open for writing");
    make_json_reporter(file)->report(verdict);
    if (!file.flush()) throw SpecError({a.json, "--json", 0, 0}, "cannot write the file");
  }
  return static_cast<int>(verdict.exit_code());
}

}  // namespace kj::cli
