// `kjudge audit` and `kjudge card`: the library's audit (kjudge/audit.hpp) under the problem's
// policy and the ones --policy names, the table on standard output (unless the JSON goes there),
// the JSON where --json says; the card written beside problem.toml.
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "app.hpp"
#include "kjudge/audit.hpp"
#include "kjudge/error.hpp"

namespace kj::cli {

namespace fs = std::filesystem;

namespace {

// The audit into `audits`; the exit code when the backend cannot be had (its reason on `err`).
std::optional<int> run_audits(const audit::AuditOptions& options,
                              std::vector<audit::ProblemAudit>& audits, std::ostream& err) {
  try {
    audits = audit::run_audit(options);
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const Error*>(&e)) throw;
    err << "kjudge " << e.what() << '\n';
    return static_cast<int>(ExitCode::internal);
  }
  return std::nullopt;
}

} // namespace

int run_audit(const AuditArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.kernelbench.empty()) {
    if (!args.problems.empty() || !args.policies.empty() || args.ladder || !args.html.empty())
      throw SpecError({}, "audit --kernelbench: PROBLEM, --policy, --ladder and --html are for "
                      "kjudge's own problems; the KernelBench audit takes a folder and --json");
    std::vector<std::string> forwarded{args.kernelbench};
    if (!args.json.empty()) forwarded.insert(forwarded.end(), {"--json", args.json});
    return run_python_module("audit --kernelbench", "kjudge.kernelbench.audit", forwarded, err);
  }
  if (args.problems.empty()) throw SpecError({}, "audit: PROBLEM is required (or --kernelbench DIR)");
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
  options.ladder = args.ladder;
  std::vector<audit::ProblemAudit> audits;
  if (const auto failed = run_audits(options, audits, err)) return *failed;
  if (args.json != "-") out << audit::audit_console(audits);
  if (!args.html.empty()) {
    std::ofstream f(args.html, std::ios::binary);
    f << audit::audit_html(audits);
    if (!f) throw SpecError(Location{args.html, "--html", 0, 0}, "cannot write the file");
  }
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

int run_card(const CardArgs& args, std::ostream& out, std::ostream& err) {
  const Problem problem = load_problem(args.problem);
  audit::AuditOptions options;
  options.problems = {problem.dir.string()};
  options.checkers = mutate::resolve_checkers({"kjudge"});
  options.backend = args.backend;
  options.self_exe = self_executable().string();
  options.ladder = true; // the solutions' errors and the ceiling go on the card too
  std::vector<audit::ProblemAudit> audits;
  if (const auto failed = run_audits(options, audits, err)) return *failed;
  const fs::path file = problem.dir / "card.toml";
  std::ofstream f(file, std::ios::binary);
  f << audit::card_toml(problem, audits.at(0));
  if (!f) throw SpecError(Location{file.string(), "", 0, 0}, "cannot write the card");
  out << audit::audit_console(audits) << "wrote " << file.string() << '\n';
  return audits[0].ok() ? 0 : static_cast<int>(ExitCode::fail);
}

} // namespace kj::cli
