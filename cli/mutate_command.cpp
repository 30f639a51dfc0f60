// `kjudge mutate`: the campaign of the library (kjudge/mutate.hpp) with its reports written
// where the options say, a progress line on a terminal, the console table on standard output.
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app.hpp"
#include "kjudge/error.hpp"
#include "kjudge/mutate.hpp"

namespace kj::cli {

namespace fs = std::filesystem;

namespace {

void write_report(const std::string& file, const std::string& text, const char* option) {
  if (file.empty()) return;
  std::ofstream f(file, std::ios::binary);
  f << text;
  if (!f) throw SpecError(Location{file, "", 0, 0}, fmt::format("{}: cannot write the file", option));
}

// --emit-cases: one file per problem with something to adopt, a line per problem on `out`.
void emit_cases(const mutate::Campaign& campaign, const fs::path& dir, std::ostream& out) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw SpecError(Location{dir.string(), "", 0, 0}, "--emit-cases: cannot create the folder");
  std::size_t complete = 0;
  for (const mutate::CasesToAdopt& a : mutate::cases_to_adopt(campaign)) {
    if (a.missed == 0) {
      ++complete;
      continue;
    }
    std::size_t exposed = 0;
    for (const auto& g : a.gains) exposed += g.size();
    if (a.picks.empty()) {
      out << fmt::format("emit-cases: {}: the default cases miss {} of {} killed mutants; no "
                         "[[case]] exposes them\n", a.problem, a.missed, a.killed);
      continue;
    }
    const fs::path file = dir / (a.problem + ".toml");
    write_report(file.string(), mutate::adopted_cases_toml(campaign, a), "--emit-cases");
    out << fmt::format("emit-cases: {}: the default cases miss {} of {} killed mutants; {} "
                       "[[case]]{} expose {} -> {}\n",
                       a.problem, a.missed, a.killed, a.picks.size(), a.picks.size() == 1 ? "" : "s",
                       exposed, file.string());
  }
  if (complete > 0)
    out << fmt::format("emit-cases: {} problem{}: the default cases expose every killed mutant\n",
                       complete, complete == 1 ? "" : "s");
}

} // namespace

// `--kernelbench DIR`: the campaign of kjudge.kernelbench.mutate (Python, torch), which hands
// its results to this library's analysis and reports.
int run_kernelbench_mutate(const MutateArgs& args, std::ostream& err) {
  if (!args.problems.empty() || args.backend != "auto" || !args.cache.empty() ||
      !args.emit_cases.empty())
    throw SpecError({}, "mutate --kernelbench: PROBLEM, --backend, --cache and --emit-cases are "
                    "for kjudge's own problems");
  const auto joined = [](const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ",")); };
  std::vector<std::string> forwarded{args.kernelbench};
  const std::pair<const char*, std::string> options[] = {
      {"--checkers", joined(args.checkers)}, {"--operators", joined(args.operators)},
      {"--sites", args.sites}, {"--ray", args.ray}, {"--state", args.state}, {"--html", args.html},
      {"--json", args.json}, {"--jsonl", args.jsonl}, {"--campaign", args.campaign},
      {"--budget", args.budget > 0 ? std::to_string(args.budget) : ""},
      {"--build-jobs", args.jobs > 0 ? std::to_string(args.jobs) : ""}};
  for (const auto& [flag, value] : options)
    if (!value.empty()) forwarded.insert(forwarded.end(), {flag, value});
  if (args.fresh) forwarded.push_back("--fresh");
  return run_python_module("mutate --kernelbench", "kjudge.kernelbench.mutate", forwarded, err);
}

int run_mutate(const MutateArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.kernelbench.empty()) return run_kernelbench_mutate(args, err);
  if (args.problems.empty()) throw SpecError({}, "mutate: PROBLEM is required (or --kernelbench DIR)");
  if (!args.sites.empty() || !args.ray.empty())
    throw SpecError({}, "mutate: --sites and --ray are for --kernelbench");
  mutate::CampaignOptions options;
  options.problems = args.problems;
  try {
    options.checkers = mutate::resolve_checkers(args.checkers);
  } catch (const std::invalid_argument& e) {
    err << "kjudge mutate: --checkers: " << e.what() << '\n';
    return static_cast<int>(ExitCode::spec_error);
  }
  options.operators = args.operators;
  options.budget = args.budget;
  options.jobs = args.jobs > 0 ? args.jobs
                               : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.backend = args.backend;
  options.self_exe = self_executable().string();
  const fs::path cache = args.cache.empty() ? default_cache_dir() : fs::path(args.cache);
  options.cache_dir = cache.string();
  options.state_dir = !args.state.empty() ? args.state
                      : cache.empty()     ? std::string()
                                          : (cache / "mutate").string();
  if (args.fresh && !options.state_dir.empty())
    fs::remove(fs::path(options.state_dir) / "results.jsonl");
  const bool tty = isatty(STDERR_FILENO) != 0;
  const auto began = std::chrono::steady_clock::now();
  options.on_progress = [&](std::size_t done, std::size_t total, std::size_t kills) {
    if (!tty) return;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    const double rate = s > 0 ? static_cast<double>(done) / s : 0;
    err << fmt::format("\r{} of {} mutants, {} killed, {:.1f}/s, ETA {:.0f} s   ", done, total,
                       kills, rate, rate > 0 ? static_cast<double>(total - done) / rate : 0)
        << std::flush;
  };
  mutate::Campaign campaign;
  try {
    for (const std::string& o : args.operators) (void)mutate::generate_mutants("", "", {o});
    campaign = mutate::run_campaign(options);
  } catch (const std::invalid_argument& e) {
    err << "kjudge mutate: --operators: " << e.what() << '\n';
    return static_cast<int>(ExitCode::spec_error);
  } catch (const std::runtime_error& e) {
    if (dynamic_cast<const Error*>(&e)) throw;
    err << "kjudge " << e.what() << '\n';
    return static_cast<int>(ExitCode::spec_error);
  }
  if (tty) err << '\n';
  mutate::write_console(out, campaign);
  write_report(args.html, mutate::html_report(campaign), "--html");
  write_report(args.json, mutate::mutation_report_json(campaign), "--json");
  write_report(args.jsonl, mutate::mutants_jsonl(campaign), "--jsonl");
  write_report(args.campaign, mutate::campaign_json(campaign), "--campaign");
  if (!args.emit_cases.empty()) emit_cases(campaign, args.emit_cases, out);
  return 0;
}

} // namespace kj::cli
