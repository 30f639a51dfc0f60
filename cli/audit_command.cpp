// `kjudge audit`: the library's audit (kjudge/audit.hpp) under the problem's policy and the ones
// --policy names, the table on standard output (unless the JSON goes there), the JSON where
// --json says.
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "app.hpp"
#include "kjudge/audit.hpp"
#include "kjudge/error.hpp"

namespace kj::cli {

int run_audit(const AuditArgs& args, std::ostream& out, std::ostream& err) {
  audit::AuditOptions options;
  options.problems = args.problems;
  std::vector<std::string> names{"kjudge"};
  for (const std::string& p : args.policies)
    if (p != "kjudge") names.push_back(p);
  try {
    options.checkers = mutate::resolve_checkers(names);
  } catch (const std::invalid_argument& e) {
    err << "kjudge audit: --policy: " << e.what() << '\n';
    return static_cast<int>(ExitCode::spec_error);
  }
  options.backend = args.backend;
  options.self_exe = self_executable().string();
  std::vector<audit::ProblemAudit> audits;
  try {
    audits = audit::run_audit(options);
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const Error*>(&e)) throw;
    err << "kjudge " << e.what() << '\n';
    return static_cast<int>(ExitCode::internal);
  }
  if (args.json != "-") out << audit::audit_console(audits);
  if (!args.json.empty()) {
    const std::string text = audit::audit_json(audits);
    if (args.json == "-") {
      out << text;
    } else {
      std::ofstream f(args.json, std::ios::binary);
      f << text;
      if (!f) throw SpecError(Location{args.json, "--json", 0, 0}, "cannot write the file");
    }
  }
  for (const audit::ProblemAudit& a : audits)
    if (!a.ok()) return static_cast<int>(ExitCode::fail);
  return 0;
}

} // namespace kj::cli
