// The subcommands that read a problem folder and need no GPU: `validate`, `export` and
// `cases`. Loading, checking, exporting and enumerating are library calls; the rendering is the
// report module's; what is left here is the choice of output and the exit code.
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app.hpp"
#include "kjudge/cases.hpp"
#include "kjudge/report.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/validate.hpp"

namespace kj::cli {

namespace fs = std::filesystem;

int run_validate(const ValidateArgs& args, std::ostream& out, std::ostream& err) {
  bool all_ok = true;
  nlohmann::json reports = nlohmann::json::array();
  for (const auto& path : args.problems) {
    // A problem that does not load is reported like one that loads with errors: the user
    // validating five problems wants all five verdicts, not the first failure.
    Problem problem;
    ValidationReport report;
    try {
      problem = load_problem(path);
      report = validate_problem(problem);
    } catch (const SpecError& e) {
      problem = Problem{};
      problem.name = path;
      problem.dir = path;
      Location where = e.where();
      if (where.file.empty()) where.file = path;
      report = ValidationReport{};
      report.diagnostics.push_back({Diagnostic::Severity::error, where, e.bare_message()});
    }
    all_ok = all_ok && report.ok();
    if (args.json)
      reports.push_back(validation_json(problem, report));
    else
      print_validation(out, err, problem, report);
  }
  if (args.json)
    out << reports.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
  return static_cast<int>(all_ok ? ExitCode::pass : ExitCode::spec_error);
}

namespace {

// Where a problem's file goes in the exported folder: the same path relative to the problem
// folder, or just its name when it lives outside it.
fs::path export_path(const fs::path& file, const fs::path& problem_dir) {
  fs::path rel = file.lexically_relative(problem_dir);
  if (rel.empty() || *rel.begin() == "..") rel = file.filename();
  return rel;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) throw SpecError({path.string(), "", 0, 0}, "cannot write the file");
}

}  // namespace

int run_export(const ExportArgs& args, std::ostream& out, std::ostream&) {
  const Problem problem = load_problem(args.problem);
  const std::string toml = export_problem_toml(problem);
  if (args.output.empty()) {
    out << toml;
    return 0;
  }
  const fs::path dir = args.output;
  const Location where{args.output, "--output", 0, 0};
  std::error_code ec;
  if (fs::exists(dir, ec) && fs::equivalent(dir, problem.dir, ec))
    throw SpecError(where, "refusing to export into the problem's own folder (the export has "
                           "no hidden shapes and would replace the original)");
  fs::create_directories(dir, ec);
  if (ec) throw SpecError(where, "cannot create the folder: " + ec.message());

  // Every file the exported problem.toml names, so the folder loads on its own.
  std::set<fs::path> files{problem.reference.path};
  if (problem.golden) files.insert(problem.golden->path);
  if (problem.timed_baseline && problem.timed_baseline->plan)
    files.insert(problem.timed_baseline->plan->path);
  for (const auto& input : problem.inputs)
    if (input.dist.kind == Distribution::Kind::file) {
      const fs::path f = input.dist.file;
      files.insert(f.is_absolute() ? f : problem.dir / f);
    }

  write_text(dir / "problem.toml", toml);
  std::vector<std::string> written{"problem.toml"};
  for (const auto& file : files) {
    const fs::path rel = export_path(file, problem.dir);
    const fs::path target = dir / rel;
    fs::create_directories(target.parent_path(), ec);
    fs::copy_file(file, target, fs::copy_options::overwrite_existing, ec);
    if (ec)
      throw SpecError({file.string(), "", 0, 0},
                      fmt::format("cannot copy to {}: {}", target.string(), ec.message()));
    written.push_back(rel.string());
  }
  out << fmt::format("exported {} to {}: {}\n", problem.name, dir.string(),
                     fmt::join(written, ", "));
  return 0;
}

int run_cases(const CasesArgs& args, std::ostream& out, std::ostream&) {
  const Problem problem = load_problem(args.problem);
  CaseOptions options;
  options.secret = read_secret(args.secret_file);
  const CasePlan plan = enumerate_cases(problem, options);
  if (args.json)
    out << case_plan_json(problem, plan)
               .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
        << '\n';
  else
    print_case_plan(out, problem, plan);
  return 0;
}

}  // namespace kj::cli
