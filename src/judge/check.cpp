// kj::check: the verdict of a candidate over a problem's cases (docs/design.md "The path of a
// verdict"). Per case the oracle makes the inputs, golden and reference; the candidate runs
// twice in its worker, with two different poisons and red-zone bytes; then the oracle judges,
// in docs/design.md's precedence: crash > timeout > oob_write > input_modified > unwritten_output >
// nonfinite > nondeterministic > mismatch. Two backends share that path: CUDA (the oracle and
// worker on the GPU) and host (both on the CPU, judge/host_oracle.hpp and host_runner.hpp); the
// running side of a case is on the calling thread (which owns the CUDA context). On CUDA a case
// whose two runs agree byte for byte is judged there by the GPU comparator, its outputs never
// leaving the device; every other case is judged on the host, on a pool of threads while the
// next case runs; findings are taken back in case order. Everything that can go wrong ends in
// the verdict (FAIL for the candidate's faults, ERROR for the problem's and kjudge's), never in
// an exception; a check asked for the CUDA backend on a machine without a usable GPU, or for a
// kernel the host backend cannot run, is a SKIP.
#include <chrono>
#include <cstdlib>
#include <algorithm>
#include <deque>
#include <set>
#include <functional>
#include <thread>
#include <future>
#include <memory>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "judge/case_cache.hpp"
#include "judge/findings.hpp"
#include "judge/host_oracle.hpp"
#include "judge/host_runner.hpp"
#include "judge/judging.hpp"
#include "judge/limits.hpp"
#include "judge/oracle.hpp"
#include "judge/runner.hpp"
#include "judge/task_pool.hpp"
#include "judge/timing.hpp"
#include "judge/trace.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/error.hpp"
#include "kjudge/host_backend.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/report.hpp"
#include "kjudge/sha256.hpp"

namespace kj {

namespace fs = std::filesystem;
using namespace kj::judge;

namespace {

// The case's reason and message from its own and its outputs' (Verdict::finalize's rule), so
// the on_case callback sees the case as the verdict will.
void settle(CaseFinding& c) {
  for (const auto& out : c.outputs) {
    const Reason worse = worse_reason(c.reason, out.reason);
    if (worse != c.reason) {
      c.reason = worse;
      c.message = out.output.empty() ? out.message : out.output + ": " + out.message;
    }
  }
}

// A run that left no outputs: it failed to start, crashed, timed out, or (host backend) died
// of a race.
bool did_not_run(const RunOutcome& r) {
  return r.reason == Reason::crash || r.reason == Reason::timeout ||
         r.reason == Reason::launch_error || r.reason == Reason::internal ||
         (r.reason != Reason::none && r.outputs.empty() && r.device_outputs.empty());
}

// What the running side of a case leaves for the host side: the findings the GPU comparator
// made, or everything the host's comparison needs, on the host, so it can run on another thread
// while the GPU goes on to the next case.
struct Gathered {
  CaseFinding finding;  // id and class; a reason already when the runs failed
  bool stop = false;    // an ERROR, or a worker that cannot be replaced: no case after this one
  std::vector<Shape> output_shapes;
  std::shared_ptr<const CaseData> data; // the golden and reference (perhaps from the cache)
  std::vector<HostTensor> old_outputs;
  std::vector<RunOutcome> done; // the runs that ran (one or two)
  // The outputs' findings when the GPU comparator made them (then `done` holds no outputs).
  std::optional<std::vector<OutputFinding>> judged;
  std::vector<RunOutcome> timed; // bench: the timed runs after them
  std::vector<double> reference_ms; // bench: the reference's timed runs
  bool stopped_early = false;       // bench: timing stopped (not_worth_timing)
};

struct Assessed {
  CaseFinding finding;
  bool stop = false;
};

Gathered stopped(Gathered g, Reason reason, std::string message) {
  g.finding.reason = reason;
  g.finding.message = std::move(message);
  g.stop = true;
  g.done.clear();
  return g;
}

// The running side of one case: the oracle's inputs, golden and reference, the --against
// kernel's outputs, and the candidate's runs. On the GPU it runs on the thread that owns the
// CUDA context.
struct RunSide {
  const Problem& problem;
  CaseOracle& oracle;
  KernelUnderTest& candidate;
  KernelUnderTest* against = nullptr;
  bool rerun = true;
  int timed_runs = 0; // bench: this many more runs of each public case that passed its own
  PhaseTrace* trace = nullptr;
  CaseCache* cache = nullptr;  // the cases of earlier checks, under cache_key + the case id
  std::string cache_key{};
  // CUDA: the oracle's context and kernels, and the GPU comparator (all null on the host).
  const CudaContext* context = nullptr;
  const BuiltinKernels* builtins = nullptr;
  DeviceComparator* comparator = nullptr;
  bool exact_percentiles = false;
  double spent_s = 0; // the candidate's run time so far (CheckOptions::time_budget_s)

  Gathered gather(const Case& c);
  std::shared_ptr<const CaseData> case_data(const Case& c);
  bool judge_on_device(Gathered& g, const CaseData& data);
};

// The case's inputs, golden and reference: from the cache, else made by the oracle (and kept).
std::shared_ptr<const CaseData> RunSide::case_data(const Case& c) {
  const std::string key = cache_key + c.id;
  if (cache)
    if (auto hit = cache->find(key)) return hit;
  auto made = [&] {
    const PhaseTrace::Scope timed(*trace, "oracle case (inputs, golden, reference)");
    return std::make_shared<const CaseData>(oracle.prepare(c));
  }();
  if (cache) cache->insert(key, made, made->resident_bytes());
  return made;
}

Gathered RunSide::gather(const Case& c) {
  Gathered g;
  CaseFinding& f = g.finding;
  f.case_id = c.id;
  f.case_class = c.case_class();
  f.hidden = c.shapes.hidden;

  std::shared_ptr<const CaseData> shared;
  try {
    shared = case_data(c);
  } catch (const SpecError& e) {
    if (cache) cache->clear(); // the reference may have lost the CUDA context: start afresh
    return stopped(std::move(g), Reason::spec_error, e.what());
  }
  const CaseData& data = *shared;
  g.output_shapes = data.output_shapes;

  if (against) {
    RunOutcome old = against->run(c, data, 0);
    if (old.reason != Reason::none)
      return stopped(std::move(g), Reason::spec_error,
                     fmt::format("the --against kernel fails on this case: {}: {}",
                                 reason_name(old.reason), old.message));
    if (context) outputs_to_host(old, problem, data.output_shapes, context->stream());
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      if (!old.poisoned[o]) continue;
      const Unwritten u =
          find_unwritten(old.outputs[o], poison_pattern(0, problem.outputs[o].dtype), nullptr, 0);
      if (u.count > 0)
        return stopped(std::move(g), Reason::spec_error,
                       fmt::format("the --against kernel leaves {} elements of '{}' unwritten",
                                   u.count, problem.outputs[o].name));
    }
    g.old_outputs = std::move(old.outputs);
  }

  const int runs = rerun ? 2 : 1;
  for (int run = 0; run < runs; ++run) {
    RunOutcome r = [&] {
      const PhaseTrace::Scope timed(*trace, "candidate run (all of it)");
      return candidate.run(c, data, run);
    }();
    spent_s += (r.reason == Reason::timeout ? r.deadline_s * 1e3
                : r.cpu_ms > 0                ? r.cpu_ms
                                              : r.wall_ms) /
               1e3;
    const std::string prefix = runs > 1 ? fmt::format("run {} of {}: ", run + 1, runs) : "";
    if (did_not_run(r)) {
      f.reason = r.reason;
      f.message = prefix + r.message;
      if (r.reason == Reason::internal) g.stop = true;
      if ((r.reason == Reason::crash || r.reason == Reason::timeout) && !candidate.restartable())
        g.stop = true;
      // A kernel that ran past its deadline once is not given a full deadline on every later
      // case: the verdict stands, and the cases not run count as failed.
      if (r.reason == Reason::timeout) g.stop = true;
      break;
    }
    if (r.reason != Reason::none && worse_reason(f.reason, r.reason) == r.reason &&
        f.reason != r.reason) {
      f.reason = r.reason;
      f.message = prefix + r.message;
    }
    g.done.push_back(std::move(r));
    // Once memory was damaged the second run cannot change the reason (only a crash ranks
    // higher, and the case already fails).
    if (f.reason != Reason::none) break;
  }
  // Timed runs: indistinguishable from the first two to the kernel (the same inputs, the same
  // two poisons in turn), every one's outputs judged by assess.
  const bool timed = timed_runs > 0 && f.reason == Reason::none && c.case_class() == "public";
  std::vector<double> timed_ms;  // the timed runs' CPU times so far
  for (int run = 0; timed && run < timed_runs; ++run) {
    RunOutcome r = candidate.timed_run(c, data, run % 2);
    if (r.reason != Reason::none) {
      f.reason = r.reason;
      f.message = fmt::format("timed run {} of {}: {}", run + 1, timed_runs, r.message);
      if (did_not_run(r) && (r.reason == Reason::internal || !candidate.restartable()))
        g.stop = true;
      g.timed.clear();
      break;
    }
    timed_ms.push_back(r.cpu_ms);
    g.timed.push_back(std::move(r));
    if (not_worth_timing(timed_ms, data.reference_cpu_ms)) {
      g.stopped_early = true;
      break;
    }
  }
  if (timed) g.reference_ms = data.reference_cpu_ms;
  if (!g.done.empty()) {
    if (!judge_on_device(g, data) && context) {
      const PhaseTrace::Scope copied(*trace, "outputs copied to the host");
      for (auto* outcomes : {&g.done, &g.timed})
        for (RunOutcome& r : *outcomes)
          outputs_to_host(r, problem, data.output_shapes, context->stream());
    }
    g.data = std::move(shared);
  }
  return g;
}

// On the GPU: when both runs ran clean and left the same bytes in every output, no element can
// be unwritten (the two runs' poisons differ in every element) and none differs between the
// runs, so each output's finding is the policy's alone, and the GPU comparator makes it where
// the outputs lie, with the host comparator's finding bit for bit. Any other case (a damaged
// run, runs that differ, one run only, an --against kernel's outputs, timed runs) goes the
// host's way, which explains unwritten and nondeterministic elements. False: not judged here.
bool RunSide::judge_on_device(Gathered& g, const CaseData& data) {
  if (!comparator || against || g.done.size() != 2 || !g.timed.empty() ||
      g.finding.reason != Reason::none)
    return false;
  const std::size_t n_out = problem.outputs.size();
  const RunOutcome& first = g.done[0];
  const RunOutcome& second = g.done[1];
  if (first.device_outputs.size() != n_out || second.device_outputs.size() != n_out ||
      data.device_golden.size() != n_out || data.device_reference.size() != n_out)
    return false;
  const PhaseTrace::Scope timed(*trace, "comparison (GPU)");
  const CUstream stream = context->stream();
  std::vector<BuiltinKernels::ByteCount> counts;
  for (std::size_t o = 0; o < n_out; ++o)
    counts.push_back(BuiltinKernels::mismatched_bytes(
        first.device_outputs[o].ptr(), second.device_outputs[o].ptr(),
        tensor_bytes(problem.outputs[o].dtype, data.output_shapes[o])));
  for (const std::uint64_t differing : builtins->count_all(counts, stream))
    if (differing != 0) return false;
  std::vector<OutputFinding> findings;
  try {
    findings = judge_device_outputs(problem, data, first, *comparator, stream, exact_percentiles);
  } catch (const SpecError& e) {
    g = stopped(std::move(g), Reason::spec_error, e.what());
    return true;
  }
  g.judged = std::move(findings);
  g.done.clear(); // their outputs are judged: nothing for the host side to hold
  return true;
}

// The host side of one case: unwritten elements, the policy and the rerun's bits, per output.
// Touches no CUDA state, so any thread may run it.
struct HostSide {
  const Problem& problem;
  bool poison = true;
  bool against = false;
  bool exact_percentiles = false;

  Assessed assess(Gathered g) const;
  void assess_timed(const Gathered& g, CaseFinding& f) const;
  // What output `o`'s comparison takes: `actual` against the golden and reference (or the
  // --against kernel's output, bit-exactly).
  CompareInputs compare_inputs(const Gathered& g, std::size_t o, const HostTensor& actual) const;
};

CompareInputs HostSide::compare_inputs(const Gathered& g, std::size_t o,
                                       const HostTensor& actual) const {
  return host_compare_inputs(problem, o, *g.data, actual, against ? &g.old_outputs : nullptr,
                             exact_percentiles);
}

Assessed HostSide::assess(Gathered g) const {
  Assessed result{std::move(g.finding), g.stop};
  CaseFinding& f = result.finding;
  if (g.judged) { // by the GPU comparator
    f.outputs = std::move(*g.judged);
    settle(f);
    return result;
  }
  if (g.done.empty()) return result;

  const RunOutcome& first = g.done.front();
  const RunOutcome* second = g.done.size() > 1 ? &g.done[1] : nullptr;
  try {
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      const OutputSpec& spec = problem.outputs[o];
      const Shape& shape = g.output_shapes[o];
      const HostTensor& a = first.outputs[o];
      const HostTensor* b = second ? &second->outputs[o] : nullptr;
      if (poison && first.poisoned[o]) {
        const Unwritten u =
            find_unwritten(a, poison_pattern(0, spec.dtype), b, poison_pattern(1, spec.dtype));
        if (u.count > 0) {
          f.outputs.push_back(
              unwritten_finding(spec, shape, u, a,
                                g.data->golden.empty() ? nullptr : &g.data->golden[o]));
          continue;
        }
      }
      CompareInputs in = compare_inputs(g, o, a);
      OutputFinding judged = compare_output(in);
      if (b) {
        const Differences d = find_differences(a, *b);
        if (d.count > 0 && !problem.allow_nondeterministic) {
          // nonfinite outranks nondeterministic; mismatch does not.
          if (judged.reason != Reason::nonfinite)
            judged = nondeterministic_finding(spec, shape, d, a, *b);
        } else if (d.count > 0) {
          // Nondeterminism allowed: both runs must pass on their own.
          in.actual = b;
          OutputFinding again = compare_output(in);
          if (worse_reason(judged.reason, again.reason) != judged.reason) judged = again;
        }
      }
      f.outputs.push_back(std::move(judged));
    }
  } catch (const SpecError& e) {
    f.outputs.clear();
    f.reason = Reason::spec_error;
    f.message = e.what();
    result.stop = true;
  }
  settle(f);
  if (f.pass() && !g.timed.empty()) assess_timed(g, f);
  return result;
}

// Bench: every timed run's outputs judged like the first run's (a kernel that answers right
// only while it is watched, or replays an earlier answer, fails `stale_output`), then its times.
void HostSide::assess_timed(const Gathered& g, CaseFinding& f) const {
  const int runs = static_cast<int>(g.timed.size());
  for (int k = 0; k < runs; ++k) {
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      const OutputFinding judged = compare_output(compare_inputs(g, o, g.timed[k].outputs[o]));
      if (!judged.pass()) {
        f.reason = Reason::stale_output;
        f.message = fmt::format("timed run {} of {}: output '{}': {} ({}, where the first runs "
                                "passed)",
                                k + 1, runs, problem.outputs[o].name, judged.message,
                                reason_name(judged.reason));
        return;
      }
    }
  }
  CaseTiming t;
  for (const RunOutcome& r : g.timed)
    t.candidate_ms.push_back(r.cpu_ms);
  t.reference_ms = g.reference_ms;
  t.stopped_early = g.stopped_early;
  f.timing = std::move(t);
}

// The elements of all outputs of the largest case, for sizing the comparison threads.
std::uint64_t largest_case_elements(const Problem& problem, const std::vector<const Case*>& cases) {
  std::uint64_t largest = 0;
  for (const Case* c : cases) {
    try {
      const Env env = shape_env(problem, c->shapes.dims);
      std::uint64_t sum = 0;
      for (const auto& out : problem.outputs)
        sum += static_cast<std::uint64_t>(checked_numel(eval_shape(out.shape, env)));
      largest = std::max(largest, sum);
    } catch (const SpecError&) {
      // The oracle reports the bad shape when it reaches the case.
    }
  }
  return largest;
}

std::string driver_version_text(int v) {
  if (v <= 0) return "";
  return fmt::format("{}.{}", v / 1000, (v % 1000) / 10);
}

} // namespace

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

std::optional<Backend> parse_backend(std::string_view name) {
  for (const Backend b : {Backend::automatic, Backend::cuda, Backend::host})
    if (backend_name(b) == name) return b;
  return std::nullopt;
}

namespace {

// The host backend's case budget: the CPU runs a kernel thousands of times slower than a GPU,
// so it gets the problem's host shape sets in place of the public and hidden ones (or the public
// and hidden ones where it declares none), one seed per shape set, at most 16 perturbed shape
// sets, and those (which find tail and bounds bugs) first. Returns the plan and fills the
// verdict's statement of the budget.
CasePlan host_case_plan(const Problem& problem, CaseOptions options, std::string& budget) {
  constexpr std::size_t kHostPerturbed = 16;
  Problem host = problem;
  const bool host_shapes = !problem.dims.host_sets.empty();
  if (host_shapes) {
    host.dims.public_sets = problem.dims.host_sets;
    options.include_hidden = false;
  }
  const int seeds = options.seeds;
  options.seeds = std::min(options.seeds, 1);
  options.max_perturbed = std::min(options.max_perturbed, kHostPerturbed);
  CasePlan plan = enumerate_cases(host, options);
  std::stable_partition(plan.cases.begin(), plan.cases.end(),
                        [](const Case& c) { return c.case_class() == "perturbed"; });
  budget = fmt::format("{} cases: {}, {} seed{} per shape set (of {}), at most {} perturbed "
                       "shape sets, run first",
                       plan.cases.size(),
                       host_shapes ? "the problem's host shapes (no hidden ones)"
                                   : "the public and hidden shapes",
                       options.seeds, options.seeds == 1 ? "" : "s", seeds, kHostPerturbed);
  return plan;
}

// The GPU bench after a passing check: the first case of each public shape set (identity
// transform, no special values) timed, its timing or its failure put on its finding, with the
// problem's timed baseline (or else its recorded one for this GPU and shape set); the resources
// and memory of the first.
void time_public_cases(const TimingLoop& loop, const std::vector<const Case*>& cases, Verdict& v) {
  std::set<std::string> shape_sets;
  std::optional<DeviceRates> rates;
  for (const Case* c : cases) {
    if (c->case_class() != "public" || !c->transform.input.empty() || c->special ||
        !shape_sets.insert(c->shapes.id).second)
      continue;
    if (!rates) rates = measure_rates(loop.oracle, loop.problem);
    CaseBench b = time_case(loop, *c, *rates);
    if (const std::string skip = fmt::format("SKIP({}) baseline", b.baseline_skip);
        !b.baseline_skip.empty() && std::find(v.skips.begin(), v.skips.end(), skip) == v.skips.end())
      v.skips.push_back(skip);
    const auto f = std::find_if(v.cases.begin(), v.cases.end(),
                                [&](const CaseFinding& found) { return found.case_id == c->id; });
    KJ_EXPECTS(f != v.cases.end(), "a timed case was judged");
    if (b.reason != Reason::none) {
      f->reason = b.reason;
      f->message = std::move(b.message);
      return;
    }
    f->timing = std::move(b.timing);
    if (const RecordedBaseline* recorded =
            loop.problem.find_baseline(v.manifest.gpu, c->shapes.dims);
        recorded && !f->timing->baseline_ms) {
      f->timing->baseline_ms = recorded->ms;
      f->timing->baseline = recorded->name;
    }
    if (v.resources.empty()) {
      v.resources = std::move(b.resources);
      v.memory_bytes = b.memory_bytes;
      v.ref_memory_bytes = b.ref_memory_bytes;
    }
  }
}

} // namespace

Verdict check(const Problem& problem, const Candidate& candidate, const CheckOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  PhaseTrace trace;
  const PhaseTrace::Scope whole_check(trace, "check (all of it)");
  Verdict v;
  v.manifest.problem = problem.name;
  v.manifest.problem_hash = problem.hash;
  v.manifest.candidate = candidate.path.string();
  v.manifest.candidate_hash = sha256_hex(candidate.source.text);

  auto finish = [&]() {
    v.finalize();
    if (v.first_failing_case) {
      v.replay_command =
          fmt::format("kjudge check {} --candidate {} --case {}", shell_quote(problem.dir.string()),
                      shell_quote(candidate.path.string()), shell_quote(*v.first_failing_case));
      if (v.manifest.backend == "host") v.replay_command += " --backend host";
      if (options.against)
        v.replay_command += " --against " + shell_quote(options.against->string());
    }
    return v;
  };
  auto fail_early = [&](Reason reason, std::string message) {
    v.reason = reason;
    v.message = std::move(message);
    if (reason == Reason::compile_error) v.compiled = false;
    return finish();
  };
  auto skip = [&](const std::string& why) {
    v.cases.clear();
    v.skips.push_back(fmt::format("SKIP({}) check {} of {}", why, problem.name,
                                  candidate.path.filename().string()));
    return finish(); // no cases and no reason: SKIP
  };

  std::string why;
  const bool gpu = cuda_available(&why);
  const Backend backend = options.backend == Backend::automatic
                              ? (gpu ? Backend::cuda : Backend::host)
                              : options.backend;
  v.manifest.backend = std::string(backend_name(backend));
  v.manifest.trust = backend == Backend::cuda ? "device" : "host";
  if (backend == Backend::cuda && !gpu) return skip(fmt::format("no usable GPU: {}", why));

  try {
    v.manifest.nvrtc_version = nvrtc_version();
    const CasePlan plan = backend == Backend::host
                              ? host_case_plan(problem, options.cases, v.manifest.case_budget)
                              : enumerate_cases(problem, options.cases);
    std::vector<const Case*> cases;
    if (options.only_case) {
      cases.push_back(&find_case(plan, problem, *options.only_case, options.cases.secret));
      v.manifest.case_budget.clear();
    } else {
      for (const Case& c : plan.cases)
        cases.push_back(&c);
      for (const CaseSkip& s : plan.skipped)
        v.skips.push_back(fmt::format("SKIP({}) {}", s.why, s.what));
    }
    const std::set<std::string> switches =
        parse_disabled(std::getenv("KJ_TEST_DISABLE") ? std::getenv("KJ_TEST_DISABLE") : "");
    if (!switches.empty() && !test_switches_allowed())
      return fail_early(Reason::internal,
                        fmt::format("KJ_TEST_DISABLE={} would turn defences off: test switches "
                                    "are refused unless --unsafe-test-switches is given",
                                    fmt::join(switches, ",")));
    const std::set<std::string> unknown = unknown_defences(switches);
    if (!unknown.empty())
      return fail_early(Reason::internal,
                        fmt::format("KJ_TEST_DISABLE names unknown defences: {} (known: {})",
                                    *unknown.begin(), fmt::join(kDefences, ", ")));
    v.defences_disabled.assign(switches.begin(), switches.end());

    const fs::path include = options.kjudge_include.empty() ? find_kjudge_include(options.self_exe)
                                                            : options.kjudge_include;
    if (include.empty())
      return fail_early(Reason::internal, "cannot find kjudge/device.cuh: set KJUDGE_INCLUDE to "
                                          "the folder that holds kjudge/");
    // The in-process worker of the isolation switch and the compile-only worker are this
    // executable too.
    if (options.self_exe.empty())
      return fail_early(Reason::internal, "CheckOptions::self_exe is empty: no worker to start");

    RunnerOptions ro;
    ro.self_exe = options.self_exe;
    ro.device = options.device;
    ro.startup_s = options.startup_deadline_s;
    ro.compile_s = options.compile_deadline_s;
    ro.compile_memory_cap = options.compile_memory_cap;
    ro.deadline_factor = options.deadline_factor;
    ro.deadline_min_s = options.deadline_min_s;
    ro.cache_dir = options.cache_dir.string();
    ro.kjudge_include = include.string();
    ro.redzone = !defence_disabled("redzone");
    ro.poison = !defence_disabled("poison");
    ro.input_hash = !defence_disabled("input_hash");
    ro.static_scan = !defence_disabled("static_scan");
    ro.trace = &trace;
    ro.spares = options.spare_workers.get();

    // The backend: its oracle, and how it runs an untrusted kernel.
    std::shared_ptr<CudaContext> context;
    // Cases kept between checks: not for timed runs (the reference is timed afresh), nor under
    // the isolation switch (whose expected outputs stay allocated for the candidate to find).
    CaseCache* cache = options.case_cache && options.timed_runs == 0 &&
                               !defence_disabled("isolation")
                           ? options.case_cache.get()
                           : nullptr;
    std::unique_ptr<CaseOracle> oracle;
    Oracle* cuda_oracle = nullptr;                // the same, on CUDA
    std::unique_ptr<DeviceComparator> comparator; // CUDA
    const BuiltinKernels* cuda_builtins = nullptr;
    std::function<std::unique_ptr<KernelUnderTest>(std::string, const Candidate&)> make_runner;
    if (backend == Backend::cuda && options.timed_runs > 0)
      return fail_early(Reason::internal, "timed runs on the GPU are the timing loop's "
                                          "(CheckOptions::gpu_timing), not timed_runs");
    std::optional<PhaseTrace::Scope> set_up;
    set_up.emplace(trace, "oracle set-up (context, reference and builtin builds)");
    if (backend == Backend::cuda) {
      ro.in_process = defence_disabled("isolation");
      // The cache's context keeps the primary context, and the cached device buffers, alive.
      if (cache && cache->context && cache->context->info().ordinal == options.device)
        context = cache->context;
      else
        context = std::make_shared<CudaContext>(options.device);
      if (cache && !cache->context) cache->context = context;
      if (cache && cache->context != context) cache = nullptr;
      const DeviceInfo& dev = context->info();
      ro.memory_cap = dev.total_memory;
      v.manifest.gpu = dev.name;
      v.manifest.driver_version = driver_version_text(dev.driver_version);
      if (dev.clock_khz > 0) v.manifest.clocks = fmt::format("{} MHz", dev.clock_khz / 1000);
      CompileOptions compile;
      compile.arch = dev.cc_major * 10 + dev.cc_minor;
      compile.kjudge_include = include;
      compile.cache_dir = options.cache_dir;
      auto gpu_oracle =
          std::make_unique<Oracle>(problem, *context, compile, !options.against.has_value());
      if (options.gpu_comparator) comparator = std::make_unique<DeviceComparator>(dev, compile);
      cuda_builtins = &gpu_oracle->builtins();
      cuda_oracle = gpu_oracle.get();
      make_runner = [&, o = gpu_oracle.get()](std::string role, const Candidate& kernel) {
        return std::make_unique<KernelRunner>(std::move(role), kernel, problem, *o, ro);
      };
      oracle = std::move(gpu_oracle);
    } else {
      HostCompileOptions host;
      host.kjudge_include = include;
      const std::vector<fs::path> toolkit = toolkit_include_dirs();
      if (toolkit.empty())
        return fail_early(Reason::internal, "the host backend needs the CUDA toolkit's headers "
                                            "(cuda_fp16.h, ...): none found; set CUDA_HOME");
      host.cuda_include = toolkit.front();
      host.cache_dir = options.cache_dir.empty() ? fs::temp_directory_path() / "kjudge-host-cache"
                                                 : options.cache_dir;
      ro.race_detection = options.race_detection;
      ro.exact_bounds = options.exact_bounds;
      ro.memory_cap = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                      static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 2;
      // The checked build runs several times slower than the reference it is timed against.
      ro.slowdown = 30;
      ro.deadline_min_s = std::max(ro.deadline_min_s, 5.0);
      v.manifest.gpu = fmt::format("none: {} CPU threads", std::thread::hardware_concurrency());
      if (ro.exact_bounds)
        v.manifest.case_budget += ro.race_detection
                                      ? "; every run checked for out-of-bounds accesses and races"
                                      : "; every run checked for out-of-bounds accesses";
      else if (ro.race_detection)
        v.manifest.case_budget += fmt::format("; races screened on the first run of the {} "
                                              "smallest unperturbed cases, which run first",
                                              HostKernelRunner::kRaceScreenedCases);
      if (!ro.race_detection) v.skips.push_back("SKIP(--no-race-detection) race detection");
      CompileOptions nvrtc;
      nvrtc.arch = 90;
      nvrtc.kjudge_include = include;
      nvrtc.cache_dir = options.cache_dir;
      try {
        auto host_oracle =
            std::make_unique<HostOracle>(problem, nvrtc, host, !options.against.has_value());
        host_oracle->time_reference(options.timed_runs);
        oracle = std::move(host_oracle);
      } catch (const UnsupportedOnHost& e) {
        return skip(fmt::format("the reference: {}", e.what()));
      }
      make_runner = [&, host](std::string role, const Candidate& kernel) {
        return std::make_unique<HostKernelRunner>(std::move(role), kernel, problem, ro, host);
      };
    }

    set_up.reset();
    std::unique_ptr<KernelUnderTest> runner = make_runner("candidate", candidate);
    const std::optional<StartFailure> start_failure = [&] {
      const PhaseTrace::Scope timed(trace, "candidate start (compile, worker, load)");
      return runner->start();
    }();
    if (const auto& failed = start_failure) {
      if (failed->unsupported) return skip(failed->message);
      return fail_early(failed->reason, failed->message);
    }

    std::optional<Candidate> old;
    std::unique_ptr<KernelUnderTest> old_runner;
    if (options.against) {
      try {
        old = load_candidate(*options.against, problem);
      } catch (const SpecError& e) {
        return fail_early(Reason::spec_error, fmt::format("--against: {}", e.what()));
      }
      // The old kernel is as untrusted as the candidate: it gets its own worker and defences.
      old_runner = make_runner("--against kernel", *old);
      if (auto failed = old_runner->start()) {
        if (failed->unsupported) return skip("the --against kernel: " + failed->message);
        return fail_early(
            Reason::spec_error,
            fmt::format("the --against kernel {}: {}",
                        failed->reason == Reason::compile_error ? "does not compile" : "cannot run",
                        failed->message));
      }
    }

    RunSide running{problem, *oracle, *runner, old_runner.get(), !defence_disabled("rerun")};
    const HostSide host{problem, ro.poison, options.against.has_value(),
                        options.exact_percentiles};
    // Comparisons run on the pool, in case order, while this thread drives the kernels through
    // the next cases; at most two per pool thread wait, bounding the host copies held.
    TaskPool pool(comparison_threads(largest_case_elements(problem, cases)));
    const std::size_t window = 2 * static_cast<std::size_t>(pool.size());
    std::deque<std::future<Assessed>> pending;
    bool halted = false;
    auto take_oldest = [&] {
      Assessed a = [&] {
        const PhaseTrace::Scope timed(trace, "wait for a comparison");
        return pending.front().get();
      }();
      pending.pop_front();
      if (halted) return; // a case after the one that stopped the check: dropped
      if (options.on_case) options.on_case(a.finding);
      const bool failed = !a.finding.pass();
      v.cases.push_back(std::move(a.finding));
      if (a.stop || (failed && options.fail_fast)) halted = true;
    };
    auto ready = [](const std::future<Assessed>& f) {
      return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    };
    // Host backend: the checked build runs the smallest cases (it is several times
    // slower) of the problem's own shapes: a perturbed shape can be degenerate (one row, one
    // block), where a race between blocks cannot show.
    std::set<const Case*> screened;
    if (backend == Backend::host && ro.race_detection) {
      std::vector<std::pair<std::uint64_t, const Case*>> by_size;
      for (const Case* c : cases)
        if (c->case_class() != "perturbed")
          by_size.emplace_back(largest_case_elements(problem, {c}), c);
      std::stable_sort(by_size.begin(), by_size.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (std::size_t k = 0; k < by_size.size() && k < HostKernelRunner::kRaceScreenedCases; ++k)
        screened.insert(by_size[k].second);
      // They run first: a race is the finding a kernel engineer wants before any mismatch.
      std::stable_partition(cases.begin(), cases.end(),
                            [&](const Case* c) { return screened.contains(c); });
    }
    runner->set_race_screened(&screened);
    if (old_runner) old_runner->set_race_screened(&screened);
    running.trace = &trace;
    running.cache = cache;
    running.context = context.get();
    running.builtins = cuda_builtins;
    running.comparator = comparator.get();
    running.exact_percentiles = options.exact_percentiles;
    running.cache_key = fmt::format("{}|{}|{}|{}|", problem.hash, backend_name(backend),
                                    options.device, !options.against.has_value());
    running.timed_runs = options.timed_runs;
    bool out_of_budget = false;
    const double budget_s = options.time_budget_s.value_or(
        backend == Backend::host ? kHostTimeBudgetS : kCudaTimeBudgetS);
    for (const Case* c : cases) {
      if (halted) break;
      if (budget_s > 0 && running.spent_s > budget_s) {
        out_of_budget = true;
        break;
      }
      Gathered g = running.gather(*c);
      const bool stop_after = g.stop;
      pending.push_back(pool.submit([&host, &trace, g = std::move(g)]() mutable {
        const PhaseTrace::Scope timed(trace, "comparison (host, pool thread)");
        return host.assess(std::move(g));
      }));
      while (!pending.empty() && (pending.size() > window || ready(pending.front()) || stop_after))
        take_oldest();
      if (stop_after) break;
    }
    while (!pending.empty())
      take_oldest();
    // The cases not run after a timeout, or once the budget ran out, fail as timeouts: the
    // verdict already stands, and a reward must not grow by stalling.
    auto not_run = [&](const std::string& cause) {
      const std::size_t count = cases.size() - v.cases.size();
      for (std::size_t k = v.cases.size(); k < cases.size(); ++k) {
        CaseFinding f;
        f.case_id = cases[k]->id;
        f.case_class = cases[k]->case_class();
        f.hidden = cases[k]->shapes.hidden;
        f.reason = Reason::timeout;
        f.message = "not run: " + cause;
        v.cases.push_back(std::move(f));
      }
      v.skips.push_back(fmt::format("SKIP(timeout) {} cases not run: {}; they count as failed",
                                    count, cause));
    };
    if (out_of_budget)
      not_run(fmt::format("the check's time budget of {} s of the candidate's run time ran out "
                          "({:.3g} s spent)",
                          budget_s, running.spent_s));
    else if (!v.cases.empty() && v.cases.back().reason == Reason::timeout &&
             v.cases.size() < cases.size())
      // A hidden case's id may carry its dims (hidden0~C=4097), and skip lines are never
      // redacted: it is named by its place alone.
      not_run(v.cases.back().hidden
                  ? fmt::format("the candidate timed out on hidden case {}", v.cases.size())
                  : fmt::format("the candidate timed out on case {}", v.cases.back().case_id));
    const bool all_passed =
        !halted && v.cases.size() == cases.size() &&
        std::all_of(v.cases.begin(), v.cases.end(), [](const CaseFinding& f) { return f.pass(); });
    if (options.gpu_timing && cuda_oracle && all_passed) {
      const TimingLoop loop{problem,
                            *cuda_oracle,
                            *runner,
                            comparator.get(),
                            *options.gpu_timing,
                            !defence_disabled("regenerate"),
                            &trace,
                            started};
      time_public_cases(loop, cases, v);
    }
  } catch (const SpecError& e) {
    // The oracle's faults include a reference that lost its CUDA context: start afresh.
    if (options.case_cache) options.case_cache->clear();
    return fail_early(Reason::spec_error, e.what());
  } catch (const CudaError& e) {
    if (options.case_cache) options.case_cache->clear(); // its context may be lost
    return fail_early(Reason::internal, fmt::format("CUDA in the oracle: {}", e.what()));
  } catch (const UnsupportedOnHost& e) {
    return skip(e.what());
  } catch (const std::exception& e) {
    return fail_early(Reason::internal, e.what());
  }
  return finish();
}

} // namespace kj
