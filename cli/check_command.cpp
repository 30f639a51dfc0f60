// `kjudge check`, `kjudge bench` and `kjudge serve`: the problem and candidate loaded, the
// options of kj::check (and kj::bench) filled from the arguments, and the reporters picked. The
// judging is kj::check's; a candidate whose front-matter does not parse becomes a
// FAIL(launch_error) verdict (the plan is part of the candidate), while a wrong problem or
// argument stays exit 2.
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
#include "kjudge/card.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/test_switches.hpp"
#include "kjudge/report.hpp"
#include "kjudge/serve.hpp"
#include "kjudge/spec.hpp"

namespace kj::cli {

namespace fs = std::filesystem;

namespace {

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

fs::path self_executable() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw InternalError("cannot resolve /proc/self/exe: " + ec.message());
  return p;
}

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
  const std::optional<std::string> refusal = card_refusal(problem);
  if (refusal && !a.allow_loosen)
    throw SpecError({(problem.dir / "card.toml").string(), "policy", 0, 0}, *refusal);
  std::error_code ec;
  if (!fs::is_regular_file(a.candidate, ec))
    throw SpecError({a.candidate, "--candidate", 0, 0}, "no such file");
  if (!a.against.empty() && !fs::is_regular_file(a.against, ec))
    throw SpecError({a.against, "--against", 0, 0}, "no such file");

  CheckOptions options = a.options;
  options.loosened_card = refusal.value_or("");
  options.cases.secret = read_secret(a.secret_file);
  if (!a.case_id.empty()) options.only_case = a.case_id;
  if (!a.against.empty()) options.against = fs::path(a.against);
  options.cache_dir = a.cache.empty() ? default_cache_dir() : fs::path(a.cache);
  options.case_cache_dir = case_cache_dir_of(a.case_cache_dir);
  options.case_cache_dir_bytes = a.case_cache_dir_mib << 20;
  options.self_exe = self_executable();
  options.backend = parse_backend(a.backend).value_or(Backend::automatic);
  options.race_detection = !a.no_race_detection;

  Verdict verdict;
  std::optional<Candidate> candidate;
  try {
    candidate = load_candidate(a.candidate, problem);
  } catch (const SpecError& e) {
    verdict = unloadable_candidate_verdict(problem, a.candidate, e.what());
    verdict.manifest.backend = a.backend;
    verdict.manifest.trust = a.backend == "host" ? "host" : "cuda";
  }
  if (candidate)
    verdict = a.runs > 0 ? bench(problem, *candidate,
                                 BenchOptions{options, a.runs, a.timing, a.slo_p99_ms})
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

namespace {

// --http's [HOST:]PORT ([::1]:PORT for IPv6) and the token file's first line.
HttpOptions http_options(const ServeArgs& a, std::ostream& err) {
  HttpOptions h;
  std::string port = a.http;
  if (const auto colon = a.http.rfind(':'); colon != std::string::npos) {
    h.host = a.http.substr(0, colon);
    if (h.host.size() > 1 && h.host.front() == '[' && h.host.back() == ']')
      h.host = h.host.substr(1, h.host.size() - 2);
    port = a.http.substr(colon + 1);
  }
  char* end = nullptr;
  const long n = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || n < 0 || n > 65535 || h.host.empty())
    throw SpecError({"--http", "", 0, 0}, fmt::format("'{}': give [HOST:]PORT, PORT 0 to 65535", a.http));
  h.port = static_cast<int>(n);
  if (!a.token_file.empty()) {
    std::ifstream f(a.token_file);
    if (!f || !std::getline(f, h.token) || h.token.size() < 16)
      throw SpecError({a.token_file, "--token-file", 0, 0},
                      "cannot read a token of at least 16 characters from its first line");
  }
  h.max_idle_s = a.max_idle;
  h.listening = [&err, host = h.host](int bound) {
    err << fmt::format("kjudge serve: listening on http://{}:{}\n", host, bound) << std::flush;
  };
  return h;
}

} // namespace

int run_serve(const ServeArgs& a, std::istream& in, std::ostream& out, std::ostream& err) {
  refuse_silent_test_switches(false, "serve");
  allow_test_switches(false);
  ServeOptions options;
  options.defaults.backend = parse_backend(a.backend).value_or(Backend::automatic);
  options.defaults.device = a.device;
  options.defaults.cache_dir = a.cache.empty() ? default_cache_dir() : fs::path(a.cache);
  options.defaults.case_cache_dir = case_cache_dir_of(a.case_cache_dir);
  options.defaults.case_cache_dir_bytes = a.case_cache_dir_mib << 20;
  options.defaults.self_exe = self_executable();
  options.defaults.cases.secret = read_secret(a.secret_file);
  options.case_cache_bytes = a.case_cache_mib << 20;
  options.devices = a.devices;
  options.spare_workers = !a.no_spare_workers;
  options.jobs = a.jobs;
  options.unordered = a.unordered;
  options.allow_loosen = a.allow_loosen;
  if (a.http.empty()) return serve(in, out, std::move(options));
  return serve_http(http_options(a, err), options);
}

} // namespace kj::cli
