// `kjudge check`, `kjudge bench`, `kjudge serve` and the internal `kjudge --worker`: loading the problem and the
// candidate, the options of kj::check (and kj::bench), and the reporters. The judging itself is
// kj::check's; a candidate
// whose front-matter does not parse is judged here only in the sense that its SpecError becomes
// a FAIL(launch_error) verdict (the plan is part of the candidate), while a problem or an
// argument that is wrong stays exit 2.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <ostream>
#include <system_error>

#include <fmt/format.h>

#include "app.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/report.hpp"
#include "kjudge/serve.hpp"
#include "kjudge/spec.hpp"

namespace kj::cli {

namespace fs = std::filesystem;

namespace {

fs::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return fs::path(xdg) / "kjudge";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return fs::path(home) / ".cache" / "kjudge";
  return {}; // nowhere to cache: compile every time
}

fs::path self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw InternalError("cannot resolve /proc/self/exe: " + ec.message());
  return p;
}

void write_report(const std::string& path, const std::string& option,
                  const std::function<void(std::ostream&)>& write) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) throw SpecError({path, option, 0, 0}, "cannot open for writing");
  write(file);
  if (!file.flush()) throw SpecError({path, option, 0, 0}, "cannot write the file");
}

} // namespace

namespace {

// KJ_TEST_DISABLE turns defences off: refused unless the command line says it knows.
void refuse_silent_test_switches(bool allowed, const char* command) {
  const char* value = std::getenv("KJ_TEST_DISABLE");
  if (value == nullptr || *value == '\0') return;
  if (!allowed)
    throw SpecError({"KJ_TEST_DISABLE", "", 0, 0},
                    fmt::format("test switches ('{}') turn kjudge's defences off; {} refuses them "
                                "unless --unsafe-test-switches is given",
                                value, command));
}

} // namespace

std::optional<std::string> read_secret(const std::string& secret_file) {
  std::optional<std::string> secret;
  Location where{"", "KJUDGE_SECRET", 0, 0};
  if (const char* env = std::getenv("KJUDGE_SECRET"); env != nullptr && *env != '\0')
    secret = env;
  ::unsetenv("KJUDGE_SECRET");
  if (!secret_file.empty()) {
    where = {secret_file, "--secret-file", 0, 0};
    std::ifstream f(secret_file, std::ios::binary);
    if (!f) throw SpecError(where, "cannot read the secret file");
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (bytes.ends_with('\n')) bytes.pop_back();
    if (bytes.ends_with('\r')) bytes.pop_back();
    secret = std::move(bytes);
  }
  if (secret && secret->size() < kMinSecretBytes)
    throw SpecError(where, fmt::format("the secret is {} bytes; at least {} are needed, or a "
                                       "candidate's author could try every secret",
                                       secret->size(), kMinSecretBytes));
  return secret;
}

int run_check(const CheckArgs& a, std::ostream& out, std::ostream& err) {
  if (!a.secret.empty())
    throw SpecError({"", "--secret", 0, 0},
                    "a secret on the command line is readable by every process "
                    "(/proc/<pid>/cmdline): put it in a file for --secret-file, or in "
                    "$KJUDGE_SECRET");
  refuse_silent_test_switches(a.unsafe_test_switches, a.runs > 0 ? "bench" : "check");
  allow_test_switches(a.unsafe_test_switches);
  const Problem problem = load_problem(a.problem);
  std::error_code ec;
  if (!fs::is_regular_file(a.candidate, ec))
    throw SpecError({a.candidate, "--candidate", 0, 0}, "no such file");
  if (!a.against.empty() && !fs::is_regular_file(a.against, ec))
    throw SpecError({a.against, "--against", 0, 0}, "no such file");

  CheckOptions options;
  options.cases.secret = read_secret(a.secret_file);
  options.fail_fast = a.fail_fast;
  options.time_budget_s = a.time_budget_s;
  if (!a.case_id.empty()) options.only_case = a.case_id;
  if (!a.against.empty()) options.against = fs::path(a.against);
  options.device = a.device;
  options.cache_dir = a.cache.empty() ? default_cache_dir() : fs::path(a.cache);
  options.self_exe = self_executable();
  options.backend = parse_backend(a.backend).value_or(Backend::automatic);
  options.race_detection = !a.no_race_detection;
  options.exact_bounds = a.exact_bounds;
  options.exact_percentiles = a.exact_percentiles;

  Verdict verdict;
  std::optional<Candidate> candidate;
  try {
    candidate = load_candidate(a.candidate, problem);
  } catch (const SpecError& e) {
    verdict = unloadable_candidate_verdict(problem, a.candidate, e.what());
    verdict.manifest.backend = a.backend;
    verdict.manifest.trust = a.backend == "host" ? "host" : "device";
  }
  if (candidate)
    verdict = a.runs > 0 ? bench(problem, *candidate, BenchOptions{options, a.runs, a.timing})
                         : check(problem, *candidate, options);
  verdict.manifest.kjudge_version = KJUDGE_VERSION;

  ReportOptions report;
  report.redact_hidden = a.redact_hidden;
  std::ostream& console = a.json == "-" ? err : out;
  make_console_reporter(console, report)->report(verdict);
  if (a.json == "-")
    make_json_reporter(out, report)->report(verdict);
  else if (!a.json.empty())
    write_report(a.json, "--json",
                 [&](std::ostream& f) { make_json_reporter(f, report)->report(verdict); });
  if (!a.junit.empty())
    write_report(a.junit, "--junit", [&](std::ostream& f) {
      auto junit = make_junit_reporter(f, report);
      junit->report(verdict);
      junit->finish();
    });
  // A check that could not run must not look like a pass (docs/design.md: SKIP never passes).
  if (verdict.outcome == Outcome::skip) return static_cast<int>(ExitCode::internal);
  return static_cast<int>(verdict.exit_code());
}

int run_serve(const ServeArgs& a, std::istream& in, std::ostream& out, std::ostream&) {
  refuse_silent_test_switches(false, "serve");
  allow_test_switches(false);
  ServeOptions options;
  options.defaults.backend = parse_backend(a.backend).value_or(Backend::automatic);
  options.defaults.device = a.device;
  options.defaults.cache_dir = a.cache.empty() ? default_cache_dir() : fs::path(a.cache);
  options.defaults.self_exe = self_executable();
  options.defaults.cases.secret = read_secret(a.secret_file);
  options.case_cache_bytes = a.case_cache_mib << 20;
  options.devices = a.devices;
  options.spare_workers = !a.no_spare_workers;
  return serve(in, out, std::move(options));
}

int run_worker(const std::vector<std::string>& args, std::ostream& err) {
  int fd = -1, device = 0, memory_mb = -1, arena_fd = -1;
  std::string module_dir;
  bool compile_only = false, host = false;
  auto number = [&](std::size_t i, const char* what) {
    if (i >= args.size()) throw SpecError({"", what, 0, 0}, "a number is missing");
    try {
      std::size_t used = 0;
      const int v = std::stoi(args[i], &used);
      if (used != args[i].size() || v < 0) throw std::invalid_argument(args[i]);
      return v;
    } catch (const std::exception&) {
      throw SpecError({"", what, 0, 0}, fmt::format("'{}' is not a non-negative number", args[i]));
    }
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--fd") {
      fd = number(++i, "--fd");
    } else if (args[i] == "--device") {
      device = number(++i, "--device");
    } else if (args[i] == "--compile-only") {
      compile_only = true;
    } else if (args[i] == "--memory-mb") {
      memory_mb = number(++i, "--memory-mb");
    } else if (args[i] == "--host") {
      host = true;
    } else if (args[i] == "--arena-fd") {
      arena_fd = number(++i, "--arena-fd");
    } else if (args[i] == "--module-dir" && i + 1 < args.size()) {
      module_dir = args[++i];
    } else {
      throw SpecError({"", "--worker", 0, 0}, fmt::format("unknown argument '{}'", args[i]));
    }
  }
  if (fd < 0) {
    err << "kjudge --worker: --fd N is required (the worker is started by `kjudge check`)\n";
    return static_cast<int>(ExitCode::spec_error);
  }
  if (host) {
    if (arena_fd < 0) {
      err << "kjudge --worker --host: --arena-fd N is required\n";
      return static_cast<int>(ExitCode::spec_error);
    }
    return host_worker_main(fd, arena_fd, module_dir);
  }
  if (compile_only) {
    const std::uint64_t cap =
        memory_mb < 0 ? kCompileMemoryCapBytes : static_cast<std::uint64_t>(memory_mb) << 20;
    return compile_worker_main(fd, cap);
  }
  return worker_main(fd, device);
}

} // namespace kj::cli
