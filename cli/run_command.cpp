// `kjudge run` and `kjudge merge`: the suite library (kjudge/suite.hpp) with its folder named,
// a progress line on a terminal, and the summary's Markdown on standard output.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ostream>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "app.hpp"
#include "kjudge/error.hpp"
#include "kjudge/suite.hpp"

namespace kj::cli {

namespace fs = std::filesystem;

namespace {

suite::Selection selection_of(const RunArgs& a) {
  suite::Selection s;
  s.only = a.only;
  s.debug = a.debug;
  if (!a.shard.empty()) {
    int i = -1, n = 0;
    char slash = 0, extra = 0;
    if (std::sscanf(a.shard.c_str(), "%d%c%d%c", &i, &slash, &n, &extra) != 3 || slash != '/')
      throw SpecError({"--shard", "", 0, 0}, fmt::format("'{}': give i/n, e.g. 0/4", a.shard));
    s.shard_index = i;
    s.shard_count = n;
  }
  return s;
}

fs::path result_folder(const RunArgs& a, const suite::Suite& s) {
  if (!a.resume.empty()) {
    std::error_code ec;
    if (!fs::is_directory(a.resume, ec))
      throw SpecError({a.resume, "--resume", 0, 0}, "no such result folder");
    return a.resume;
  }
  if (!a.out.empty()) return a.out;
  return fs::path("runs") / fmt::format("{}-{:%Y%m%d-%H%M%S}", s.name,
                                        fmt::gmtime(std::chrono::system_clock::now()));
}

// A KernelBench suite's judges: `python -m kjudge.kernelbench.serve` per device (`--devices`,
// else the default one) and `--jobs`, the cores less one shared among their build farms unless
// --build-jobs says, their builds beside the NVRTC cache's entries (where `kjudge cache` finds
// them).
std::vector<std::vector<std::string>> kernelbench_judges(const RunArgs& a, const fs::path& cache) {
  const char* python = std::getenv("KJUDGE_PYTHON");
  std::vector<std::string> devices;
  if (a.backend == "host") devices.push_back("cpu");
  else
    for (const int d : a.devices)
      devices.push_back(fmt::format("cuda:{}", d));
  if (devices.empty()) devices.push_back(""); // the adapter's default device
  const std::size_t judges = devices.size() * static_cast<std::size_t>(a.jobs);
  const long cores = std::max(2L, ::sysconf(_SC_NPROCESSORS_ONLN));
  const int build_jobs = a.build_jobs >= 0 ? a.build_jobs
                                           : static_cast<int>(std::max<long>(
                                                 1, (cores - 1) / static_cast<long>(judges)));
  std::vector<std::vector<std::string>> commands;
  for (const std::string& device : devices)
    for (int j = 0; j < a.jobs; ++j) {
      std::vector<std::string> c = {python && *python ? python : "python3", "-m",
                                    "kjudge.kernelbench.serve", "--build-jobs",
                                    std::to_string(build_jobs)};
      if (!device.empty()) c.insert(c.end(), {"--device", device});
      if (!cache.empty()) c.insert(c.end(), {"--build-cache", cache.string()});
      commands.push_back(std::move(c));
    }
  return commands;
}

} // namespace

int run_run(const RunArgs& a, std::ostream& out, std::ostream& err) {
  const suite::Suite s = suite::load_suite(a.suite);
  std::vector<suite::Sample> samples =
      a.samples.empty() ? suite::bundled_samples(s) : suite::load_samples(a.samples, s);
  samples = suite::select_samples(s, std::move(samples), selection_of(a));
  suite::RunOptions o;
  o.judge.defaults.backend = parse_backend(a.backend).value_or(Backend::automatic);
  o.judge.defaults.cache_dir = a.cache.empty() ? default_cache_dir() : fs::path(a.cache);
  o.judge.defaults.case_cache_dir = case_cache_dir_of("");
  o.judge.defaults.self_exe = self_executable();
  o.judge.defaults.cases.secret = read_secret(a.secret_file);
  o.judge.devices = a.devices;
  o.judge.jobs = a.jobs;
  const auto kernelbench = std::count_if(s.problems.begin(), s.problems.end(),
                                         [](const suite::Entry& e) { return e.kernelbench; });
  if (kernelbench > 0) {
    // KernelBench-format problems are judged by the Python adapter, speaking serve's protocol
    // (on Ray, the actors' `kjudge serve` hands them to it).
    if (static_cast<std::size_t>(kernelbench) != s.problems.size())
      throw SpecError({(fs::path(a.suite) / "manifest.toml").string(), "problem", 0, 0},
                      "a suite of KernelBench problems holds no other kind");
    o.judge_commands = kernelbench_judges(a, o.judge.defaults.cache_dir);
  }
  if (!a.ray.empty()) {
    // The secret stays on this machine: Ray's judges are other machines' processes.
    if (o.judge.defaults.cases.secret)
      throw SpecError({a.secret_file.empty() ? "KJUDGE_SECRET" : a.secret_file, "--secret-file",
                       0, 0},
                      "hidden shapes drawn with a secret are judged here, not on Ray: the secret "
                      "would travel to the cluster's nodes");
    const char* python = std::getenv("KJUDGE_PYTHON");
    std::vector<std::string> ray = {python && *python ? python : "python3", "-m", "kjudge.ray",
                                    "--address", a.ray, "--backend", a.backend, "--kjudge",
                                    self_executable().string()};
    if (a.actors > 0) ray.insert(ray.end(), {"--actors", std::to_string(a.actors)});
    o.judge_commands = {ray};
  }
  o.runs = a.runs;
  o.timing.min_time_s = a.min_time;
  o.fail_fast = !a.all_cases;
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  const auto began = std::chrono::steady_clock::now();
  o.progress = [&](std::size_t done, std::size_t total) {
    if (!terminal) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    const double eta = done ? elapsed / static_cast<double>(done) * static_cast<double>(total - done) : 0;
    err << fmt::format("\r{}/{} samples judged, {:.0f} s, about {:.0f} s left ", done, total,
                       elapsed, eta)
        << std::flush;
  };
  const fs::path dir = result_folder(a, s);
  const suite::RunReport report = suite::run_suite(s, samples, dir, o);
  if (terminal) err << "\n";
  out << suite::summary_markdown(report.summary);
  out << fmt::format("\n{} samples judged, {} already in {}; results.jsonl, summary.json, "
                     "summary.md, junit.xml and report.html there\n",
                     report.judged, report.resumed, dir.string());
  return 0;
}

int run_merge(const MergeArgs& a, std::ostream& out, std::ostream&) {
  const suite::Suite s = suite::load_suite(a.suite);
  std::vector<fs::path> from(a.folders.begin(), a.folders.end());
  const suite::RunReport report = suite::merge_results(s, from, a.out);
  out << suite::summary_markdown(report.summary);
  out << fmt::format("\nmerged {} folders into {}\n", from.size(), a.out);
  return 0;
}

} // namespace kj::cli
