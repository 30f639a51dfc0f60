// kj::check: the verdict of a candidate over a problem's cases (docs/design.md "The path of a
// verdict"), as a few named steps: resolve the settings, plan the cases, make the backend,
// start the kernels, judge the cases (judge/case_loop.hpp), time them (bench on the GPU), and
// assemble the verdict. Everything that can go wrong ends in the verdict (FAIL for the
// candidate's faults, ERROR for the problem's and kjudge's), never in an exception; a check
// asked for the CUDA backend on a machine without a usable GPU, or for a kernel the host backend
// cannot run, is a SKIP.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "judge/backend.hpp"
#include "judge/case_cache.hpp"
#include "judge/case_loop.hpp"
#include "judge/defences.hpp"
#include "judge/host/host_backend.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/report.hpp"
#include "kjudge/sha256.hpp"
#include "kjudge/test_switches.hpp"

namespace kj {

namespace fs = std::filesystem;
using namespace kj::judge;

namespace {

double milliseconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The verdict as a check builds it, and its three ways to end: assembled (finalized, with the
// replay command of its first failing case), failed before any case, or skipped.
struct VerdictDraft {
  const Problem& problem;
  const Candidate& candidate;
  const CheckOptions& options;
  Verdict v;
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();

  VerdictDraft(const Problem& p, const Candidate& c, const CheckOptions& o)
      : problem(p), candidate(c), options(o) {
    v.manifest.problem = p.name;
    v.manifest.problem_hash = p.hash;
    v.manifest.candidate = c.path.string();
    v.manifest.candidate_hash = sha256_hex(c.source.text);
    record_problem_dtypes(p, v);
  }

  Verdict assembled() {
    v.finalize();
    v.judge_time.wall_ms = milliseconds_since(started);
    if (v.first_failing_case) {
      v.replay_command =
          fmt::format("kjudge check {} --candidate {} --case {}", shell_quote(problem.dir.string()),
                      shell_quote(candidate.path.string()), shell_quote(*v.first_failing_case));
      if (v.manifest.backend == "host") v.replay_command += " --backend host";
      if (options.against)
        v.replay_command += " --against " + shell_quote(options.against->string());
    }
    return v;
  }
  Verdict failed_early(Reason reason, std::string message) {
    v.reason = reason;
    v.message = std::move(message);
    if (reason == Reason::compile_error) v.compiled = false;
    return assembled();
  }
  // An error that reached the check, by whose fault it is (kjudge/error.hpp). A candidate's
  // fault is classified where it happens (the runners); one that gets here is kjudge's.
  Verdict ended_by(const Error& e) {
    switch (e.kind()) {
    case ErrorKind::unsupported:
      return skipped(e.what());
    case ErrorKind::spec:
      // The oracle's faults include a reference that lost its CUDA context: start afresh.
      if (options.case_cache) options.case_cache->clear();
      return failed_early(Reason::spec_error, e.what());
    case ErrorKind::cuda:
      if (options.case_cache) options.case_cache->clear(); // its context may be lost
      return failed_early(Reason::internal, fmt::format("CUDA in the oracle: {}", e.what()));
    case ErrorKind::candidate:
    case ErrorKind::internal:
      break;
    }
    return failed_early(Reason::internal, e.what());
  }
  Verdict skipped(const std::string& why) {
    v.cases.clear();
    v.skips.push_back(fmt::format("SKIP({}) check {} of {}", why, problem.name,
                                  candidate.path.filename().string()));
    return assembled(); // no cases and no reason: SKIP
  }
};

// The NVIDIA kernel module's release ("580.65.06"): the first word of
// /proc/driver/nvidia/version's first line that starts with a digit and holds a dot (the line
// reads "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64]  580.65.06  Release Build
// ..."); empty where there is no such file. The driver API gives only its CUDA version.
std::string nvidia_driver_release() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line, word;
  std::getline(file, line);
  std::istringstream words(line);
  while (words >> word)
    if (std::isdigit(static_cast<unsigned char>(word.front())) &&
        word.find('.') != std::string::npos)
      return word;
  return "";
}

// The machine's facts the verdict's provenance gives on the CUDA backend: the driver's release
// and the rated SM clock (the manifest's `clocks`, "1980 MHz", as the CUDA backend writes it),
// which a GPU bench replaces by the clock it measured.
void record_cuda_provenance(Verdict& v) {
  v.provenance.driver_release = nvidia_driver_release();
  const double rated = std::strtod(v.manifest.clocks.c_str(), nullptr);
  if (rated > 0) {
    v.provenance.sm_clock_mhz = rated;
    v.provenance.sm_clock_source = "rated";
  }
}

// The host plan's cases (the mutation pool's are drawn from it) and witness_cases of its first
// unperturbed case (seeds enough for the one `id` names), appended to `plan`.
void append_witness_cases(const Problem& problem, std::string_view id, CasePlan& plan) {
  CaseOptions small;
  small.include_hidden = false;
  std::string budget;
  CasePlan host = host_case_plan(problem, small, budget);
  // <hash>:<set>:<seed>:<transform>; a malformed id is find_case's to refuse.
  int seeds = 1;
  if (const auto c2 = id.find(':', id.find(':') + 1); c2 != std::string_view::npos) {
    const std::string_view rest = id.substr(c2 + 1);
    std::uint64_t seed = 0;
    const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), seed);
    if (ec == std::errc{} && seed < (1u << 16)) seeds = static_cast<int>(seed) + 1;
  }
  for (Case& c : witness_cases(problem, host, seeds)) host.cases.push_back(std::move(c));
  std::move(host.cases.begin(), host.cases.end(), std::back_inserter(plan.cases));
}

// The cases the check judges, in plan order: the backend's plan, or the one --case names.
// `plan` keeps them.
std::vector<const Case*> plan_cases(const CheckSettings& settings, const Problem& problem,
                                    CasePlan& plan, Verdict& v) {
  const CheckOptions& asked = settings.asked;
  plan = settings.backend == Backend::host
             ? host_case_plan(problem, asked.cases, v.manifest.case_budget)
             : enumerate_cases(problem, asked.cases);
  std::vector<const Case*> cases;
  if (asked.only_case) {
    // A case the host check added for coverage replays too, and on either backend the small
    // shapes of the host plan and the mutation pool's witnesses (kjudge mutate prints them).
    if (settings.backend == Backend::host) {
      CasePlan larger = host_coverage_plan(problem, asked.cases);
      std::move(larger.cases.begin(), larger.cases.end(), std::back_inserter(plan.cases));
    }
    append_witness_cases(problem, *asked.only_case, plan);
    cases.push_back(&find_case(plan, problem, *asked.only_case, asked.cases.secret));
    v.manifest.case_budget.clear();
    return cases;
  }
  for (const Case& c : plan.cases)
    cases.push_back(&c);
  for (const CaseSkip& s : plan.skipped)
    v.skips.push_back(fmt::format("SKIP({}) {}", s.why, s.what));
  return cases;
}

// "C = 1001": the values of the names a precondition reads.
std::string describe_names(const Precondition& r, const Env& env) {
  std::vector<std::string> parts;
  if (r.expr)
    for (const std::string& name : r.expr->names())
      if (const auto it = env.find(name); it != env.end())
        parts.push_back(fmt::format("{} = {}", name, it->second));
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The cases whose shapes do not meet a precondition the candidate declared, taken out of
// `cases` as findings of their own: not run, counted as not passed. A hidden case's message
// names the precondition, never its dims.
std::vector<CaseFinding> exclude_by_preconditions(const Problem& problem,
                                                  const Candidate& candidate,
                                                  std::vector<const Case*>& cases) {
  std::vector<CaseFinding> excluded;
  if (candidate.requirements.empty()) return excluded;
  std::vector<const Case*> kept;
  for (const Case* c : cases) {
    const Precondition* unmet = unmet_precondition(problem, candidate, *c);
    if (!unmet) {
      kept.push_back(c);
      continue;
    }
    CaseFinding f;
    f.case_id = c->id;
    f.case_class = c->case_class();
    f.shape_set = c->shapes.id;
    f.hidden = c->shapes.hidden;
    f.excluded = true;
    f.message = fmt::format("not run: the candidate requires '{}', which {} do not meet",
                            unmet->text,
                            f.hidden ? std::string("this hidden case's shapes")
                                     : fmt::format("its shapes ({})",
                                                   describe_names(*unmet, shape_env(problem, c->shapes.dims))));
    excluded.push_back(std::move(f));
  }
  cases = std::move(kept);
  return excluded;
}

// The declared shape sets (public and hidden, not perturbations of them) whose every case the
// candidate's preconditions exclude: it is not judged on a shape the problem names, so the
// verdict is FAIL(precondition). Empty when none is.
std::string shape_sets_excluded(const CasePlan& plan, const std::vector<CaseFinding>& excluded) {
  std::map<std::string, std::pair<int, int>> per_set; // id -> (cases, excluded)
  std::set<std::string> excluded_ids;
  for (const CaseFinding& f : excluded)
    excluded_ids.insert(f.case_id);
  for (const Case& c : plan.cases) {
    if (c.shapes.perturbation) continue;
    auto& [all, out] = per_set[c.shapes.id];
    ++all;
    if (excluded_ids.contains(c.id)) ++out;
  }
  std::vector<std::string> sets;
  for (const auto& [id, counts] : per_set)
    if (counts.first > 0 && counts.first == counts.second) sets.push_back(id);
  if (sets.empty()) return {};
  return fmt::format("the candidate's preconditions exclude every case of shape set{} {}: a "
                     "candidate must run on every shape set the problem declares",
                     sets.size() == 1 ? "" : "s", fmt::join(sets, ", "));
}

// The candidate's runner and, with --against, the old kernel's (as untrusted as the candidate:
// its own worker and defences), both started. An early end of the check when either cannot
// start: the candidate's fault, or for the old kernel the problem's.
struct StartedKernels {
  std::unique_ptr<Candidate> old; // on the heap: its runner holds a reference to it
  std::unique_ptr<KernelUnderTest> candidate, against;
  std::optional<Verdict> early_end;
};
StartedKernels start_kernels(CheckBackend& backend, const CheckSettings& settings,
                             const Problem& problem, const Candidate& candidate,
                             VerdictDraft& draft) {
  StartedKernels k;
  k.candidate = backend.make_runner("candidate", candidate);
  const std::optional<StartFailure> failed = [&] {
    const PhaseTrace::Scope timed(*settings.trace, "candidate start (compile, worker, load)");
    return k.candidate->start();
  }();
  if (failed) {
    // What the host backend cannot run in a candidate is refused, never a SKIP: a SKIP carries
    // no penalty, so one dead asm line would turn any wrong kernel's FAIL into it.
    k.early_end = failed->unsupported
                      ? draft.failed_early(Reason::forbidden_construct,
                                           failed->message + " (the host backend cannot judge "
                                                             "it; a GPU can: --backend cuda)")
                      : draft.failed_early(failed->reason, failed->message);
    return k;
  }
  if (!settings.asked.against) return k;
  try {
    k.old = std::make_unique<Candidate>(load_candidate(*settings.asked.against, problem));
  } catch (const SpecError& e) {
    k.early_end = draft.failed_early(Reason::spec_error, fmt::format("--against: {}", e.what()));
    return k;
  }
  k.against = backend.make_runner("--against kernel", *k.old);
  if (auto old_failed = k.against->start()) {
    k.early_end = old_failed->unsupported
                      ? draft.skipped("the --against kernel: " + old_failed->message)
                      : draft.failed_early(Reason::spec_error,
                                           fmt::format("the --against kernel {}: {}",
                                                       old_failed->reason == Reason::compile_error
                                                           ? "does not compile"
                                                           : "cannot run",
                                                       old_failed->message));
  }
  return k;
}

// The cases not run after a timeout, or once the budget ran out, fail as timeouts: the verdict
// already stands, and a reward must not grow by stalling.
void fail_cases_not_run(const JudgedCases& judged, const CheckSettings& settings,
                        const std::vector<const Case*>& cases, Verdict& v) {
  std::string cause;
  if (judged.out_of_budget)
    cause = fmt::format("the check's time budget of {} s of the candidate's run time ran out "
                        "({:.3g} s spent)",
                        settings.time_budget_s, judged.spent_s);
  else if (!v.cases.empty() && v.cases.back().reason == Reason::timeout &&
           v.cases.size() < cases.size())
    // A hidden case's id may carry its dims (hidden0~C=4097), and skip lines are never
    // redacted: it is named by its place alone.
    cause = v.cases.back().hidden
                ? fmt::format("the candidate timed out on hidden case {}", v.cases.size())
                : fmt::format("the candidate timed out on case {}", v.cases.back().case_id);
  if (cause.empty()) return;
  const std::size_t count = cases.size() - v.cases.size();
  for (std::size_t k = v.cases.size(); k < cases.size(); ++k) {
    CaseFinding f;
    f.case_id = cases[k]->id;
    f.case_class = cases[k]->case_class();
    f.shape_set = cases[k]->shapes.id;
    f.hidden = cases[k]->shapes.hidden;
    f.reason = Reason::timeout;
    f.message = "not run: " + cause;
    v.cases.push_back(std::move(f));
  }
  v.skips.push_back(
      fmt::format("SKIP(timeout) {} cases not run: {}; they count as failed", count, cause));
}

// Cases kept between checks: not for timed runs (the reference is timed afresh), nor under the
// isolation switch (whose expected outputs stay allocated for the candidate to find). The rule
// holds for both tiers; the GPU bench's check pass is untimed (the timing loop makes its own
// visits afterwards), so it reads its cases from the disk tier like `check`.
bool cases_may_be_kept(const CheckSettings& settings) {
  return settings.asked.timed_runs == 0 && settings.defences.isolation;
}
CaseCache* usable_case_cache(const CheckSettings& settings) {
  return cases_may_be_kept(settings) ? settings.asked.case_cache.get() : nullptr;
}

// The check's source of cases: the memory tier `memory` (perhaps dropped by the backend), then
// the folder of CheckOptions::case_cache_dir where the backend can store cases.
CaseSource make_case_source(const CheckSettings& settings, const Problem& problem,
                            const CheckBackend& backend, CaseCache* memory, const Verdict& v) {
  const CheckOptions& asked = settings.asked;
  const std::string backend_id(backend_name(settings.backend));
  CaseKeyParts key{case_cache_build_id(), problem.hash, backend_id, {},
                   !asked.against.has_value(), v.defences_disabled};
  std::unique_ptr<CaseDiskCache> disk;
  if (!asked.case_cache_dir.empty() && cases_may_be_kept(settings)) {
    key.identity = backend.case_identity();
    if (!key.identity.empty())
      disk = std::make_unique<CaseDiskCache>(asked.case_cache_dir, asked.case_cache_dir_bytes);
  }
  return CaseSource(memory,
                    fmt::format("{}|{}|{}|{}|", problem.hash, backend_id, asked.device,
                                !asked.against.has_value()),
                    std::move(disk), std::move(key), problem);
}

// What the check's cases came from, into the manifest (`case_cache` in JSON).
void record_case_sources(const CaseSourceCounts& n, Verdict& v) {
  Manifest& m = v.manifest;
  m.case_cache_hits = n.hits;
  m.case_cache_misses = n.misses;
  m.case_cache_disk_hits = n.disk_hits;
  m.case_cache_disk_stored = n.disk_stored;
  m.case_cache_disk_corrupt = n.disk_corrupt;
  m.case_cache_disk_declined = n.disk_declined;
}

} // namespace

std::unique_ptr<CheckBackend> judge::make_backend(CheckSettings& settings, const Problem& problem,
                                                  CaseCache*& cache, Verdict& v) {
  const PhaseTrace::Scope timed(*settings.trace,
                                "oracle set-up (context, reference and builtin builds)");
  if (settings.backend == Backend::cuda) return make_cuda_backend(settings, problem, cache, v);
  return make_host_backend(settings, problem, v);
}

std::optional<std::string> judge::resolve_check_settings(CheckSettings& settings, Verdict& v) {
  const CheckOptions& asked = settings.asked;
  const char* env = std::getenv("KJ_TEST_DISABLE");
  const std::set<std::string> switches = parse_disabled(env ? env : "");
  if (!switches.empty() && !test_switches_allowed())
    return fmt::format("KJ_TEST_DISABLE={} would turn defences off: test switches are refused "
                       "unless --unsafe-test-switches is given",
                       fmt::join(switches, ","));
  if (const std::set<std::string> unknown = unknown_defences(switches); !unknown.empty())
    return fmt::format("KJ_TEST_DISABLE names unknown defences: {} (known: {})", *unknown.begin(),
                       fmt::join(kDefences, ", "));
  v.defences_disabled.assign(switches.begin(), switches.end());
  v.loosened_card = asked.loosened_card;
  settings.defences = Defences::all_but(switches);
  settings.kjudge_include =
      asked.kjudge_include.empty() ? find_kjudge_include(asked.self_exe) : asked.kjudge_include;
  if (settings.kjudge_include.empty())
    return "cannot find kjudge/device.cuh: set KJUDGE_INCLUDE to the folder that holds kjudge/";
  // The in-process worker of the isolation switch and the compile-only worker are this
  // executable too.
  if (asked.self_exe.empty()) return "CheckOptions::self_exe is empty: no worker to start";
  settings.deadline_min_s = asked.deadline_min_s;
  settings.time_budget_s = asked.time_budget_s.value_or(
      settings.backend == Backend::host ? kHostTimeBudgetS : kCudaTimeBudgetS);
  return std::nullopt;
}

Verdict check(const Problem& problem, const Candidate& candidate, const CheckOptions& options) {
  PhaseTrace trace;
  const PhaseTrace::Scope whole_check(trace, "check (all of it)");
  VerdictDraft draft(problem, candidate, options);
  Verdict& v = draft.v;
  if (candidate.source.text.size() > kMaxCandidateBytes) {
    return draft.failed_early(Reason::compile_error,
                              fmt::format("the candidate's source is {} bytes, over the {} a "
                                          "candidate may have",
                                          candidate.source.text.size(), kMaxCandidateBytes));
  }
  CheckSettings settings{options};
  settings.trace = &trace;
  std::string why;
  const bool gpu = cuda_available(&why);
  settings.backend = options.backend == Backend::automatic ? (gpu ? Backend::cuda : Backend::host)
                                                           : options.backend;
  v.manifest.backend = std::string(backend_name(settings.backend));
  v.manifest.trust = v.manifest.backend; // whose observation the verdict is
  if (settings.backend == Backend::cuda && !gpu)
    return draft.skipped(fmt::format("no usable GPU: {}", why));
  // The device's turn: beside the other judges, or alone for a host bench, whose timed runs are
  // in its cases; a CUDA bench takes it alone for its timing loop only (below).
  std::shared_lock<std::shared_mutex> beside;
  std::unique_lock<std::shared_mutex> alone;
  if (options.device_turn) {
    if (settings.backend == Backend::host && options.timed_runs > 0)
      alone = options.device_turn->alone();
    else
      beside = options.device_turn->beside();
  }
  try {
    v.manifest.nvrtc_version = nvrtc_version();
    CasePlan plan;
    std::vector<const Case*> cases = plan_cases(settings, problem, plan, v);
    if (auto refused = resolve_check_settings(settings, v))
      return draft.failed_early(Reason::internal, *refused);
    for (const Precondition& r : candidate.requirements)
      v.preconditions.push_back(r.text);
    std::vector<CaseFinding> excluded = exclude_by_preconditions(problem, candidate, cases);
    if (std::string unjudged = shape_sets_excluded(plan, excluded); !unjudged.empty()) {
      v.cases = std::move(excluded);
      return draft.failed_early(Reason::precondition, std::move(unjudged));
    }
    CaseCache* cache = usable_case_cache(settings);
    const std::unique_ptr<CheckBackend> backend = make_backend(settings, problem, cache, v);
    if (settings.backend == Backend::cuda) record_cuda_provenance(v);
    backend->order_cases(cases);
    const auto starting = std::chrono::steady_clock::now();
    StartedKernels kernels = start_kernels(*backend, settings, problem, candidate, draft);
    v.judge_time.start_ms = milliseconds_since(starting);
    if (kernels.early_end) return std::move(*kernels.early_end);
    settings.against_kernel = kernels.against.get();
    CaseSource source = make_case_source(settings, problem, *backend, cache, v);
    const CaseLoop loop{problem,    settings, *backend, *kernels.candidate, kernels.against.get(),
                        source};
    JudgedCases judged = judge_cases(loop, cases);
    v.cases = std::move(judged.findings);
    v.judge_time.candidate_ms = judged.spent_s * 1e3;
    fail_cases_not_run(judged, settings, cases, v);
    if (!judged.halted && v.cases.size() == cases.size() &&
        std::all_of(v.cases.begin(), v.cases.end(), [](const CaseFinding& f) { return f.pass(); })) {
      backend->reach_unrun_lines(loop, judged, cases, v);
      if (beside.owns_lock() && options.gpu_timing) {
        beside.unlock();
        alone = options.device_turn->alone();
      }
      const auto timing = std::chrono::steady_clock::now();
      backend->time_public_cases(*kernels.candidate, cases, v);
      v.judge_time.timing_ms = milliseconds_since(timing);
    }
    record_case_sources(source.counts(), v);
    std::move(excluded.begin(), excluded.end(), std::back_inserter(v.cases));
  } catch (const Error& e) {
    return draft.ended_by(e);
  } catch (const std::exception& e) { // the standard library's own (bad_alloc, ...)
    return draft.failed_early(Reason::internal, e.what());
  }
  return draft.assembled();
}

fs::path find_kjudge_include(const fs::path& self_exe) {
  auto holds = [](const fs::path& dir) {
    std::error_code ec;
    return !dir.empty() && fs::exists(dir / "kjudge" / "device.cuh", ec);
  };
  if (const char* env = std::getenv("KJUDGE_INCLUDE"); env != nullptr && *env != '\0')
    if (holds(env)) return fs::path(env);
  if (!self_exe.empty()) {
    const fs::path dir = self_exe.parent_path();
    for (const fs::path& p : {dir / ".." / "include", dir / ".." / ".." / "include",
                              dir / ".." / "share" / "kjudge" / "include"})
      if (holds(p)) return p.lexically_normal();
  }
  // The source tree this file was compiled from: src/judge/check.cpp -> include/.
  const fs::path source_tree = fs::path(__FILE__).parent_path().parent_path().parent_path();
  if (holds(source_tree / "include")) return source_tree / "include";
  return {};
}

std::string_view backend_name(Backend b) {
  switch (b) {
  case Backend::automatic:
    return "auto";
  case Backend::cuda:
    return "cuda";
  case Backend::host:
    return "host";
  }
  return "auto";
}

Backend machine_backend(std::string_view name, std::string_view who) {
  std::string why;
  const bool gpu = cuda_available(&why);
  const Backend asked = parse_backend(name).value_or(Backend::automatic);
  if (asked == Backend::cuda && !gpu)
    throw std::runtime_error(fmt::format("{}: no usable GPU for --backend cuda: {}", who, why));
  if (asked == Backend::automatic) return gpu ? Backend::cuda : Backend::host;
  return asked;
}

std::optional<Backend> parse_backend(std::string_view name) {
  for (const Backend b : {Backend::automatic, Backend::cuda, Backend::host})
    if (backend_name(b) == name) return b;
  return std::nullopt;
}

} // namespace kj
