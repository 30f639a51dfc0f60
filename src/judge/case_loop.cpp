// The check's case loop (case_loop.hpp).
#include "judge/case_loop.hpp"

#include <chrono>
#include <deque>
#include <future>

#include <fmt/format.h>

#include "judge/defences.hpp"
#include "judge/findings.hpp"
#include "judge/output_judging.hpp"
#include "judge/task_pool.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/error.hpp"

namespace kj::judge {

namespace {

// What the running side of a case leaves for the host side: the findings the GPU comparator
// made, or everything the host's comparison needs, on the host, so it can run on another thread
// while the GPU goes on to the next case.
struct CaseRuns {
  CaseFinding finding; // id and class; a reason already when the runs failed
  bool stop = false;   // an ERROR, or a worker that cannot be replaced: no case after this one
  std::vector<Shape> output_shapes;
  std::shared_ptr<const CaseData> data; // the golden and reference (perhaps from the cache)
  std::vector<HostTensor> old_outputs;
  std::vector<RunOutcome> done; // the runs that ran (one or two)
  // The outputs' findings when the GPU comparator made them (then `done` holds no outputs).
  std::optional<std::vector<OutputFinding>> judged;
  std::vector<RunOutcome> timed;    // bench: the timed runs after them
  // bench: each timed run's inputs, golden and reference (`data` where not drawn afresh).
  std::vector<std::shared_ptr<const CaseData>> timed_data;
  std::vector<double> reference_ms; // bench: the reference's timed runs
  std::vector<double> against_ms;   // bench --against: the old kernel's, one after each timed run
  bool stopped_early = false;       // bench: timing stopped (not_worth_timing)
};

struct JudgedCase {
  CaseFinding finding;
  bool stop = false;
};

CaseRuns stopped_case(CaseRuns g, Reason reason, std::string message) {
  g.finding.reason = reason;
  g.finding.message = std::move(message);
  g.stop = true;
  g.done.clear();
  return g;
}

// Running one case: the oracle's inputs, golden and reference, the --against kernel's outputs,
// and the candidate's runs. On the GPU it runs on the thread that owns the CUDA context.
struct CaseRunning {
  const CaseLoop& loop;
  double spent_s = 0; // the candidate's run time so far (CheckSettings::time_budget_s)

  CaseRuns run_case(const Case& c);
  std::shared_ptr<const CaseData> case_data(const Case& c);
  bool judge_in_place(CaseRuns& g, const CaseData& data);
};

// The case's inputs, golden and reference: from a cache tier, else made by the oracle (and kept).
std::shared_ptr<const CaseData> CaseRunning::case_data(const Case& c) {
  return loop.cases.case_data(c, loop.backend, [&] {
    const PhaseTrace::Scope timed(*loop.settings.trace, "oracle case (inputs, golden, reference)");
    return loop.backend.oracle().prepare(c);
  });
}

CaseRuns CaseRunning::run_case(const Case& c) {
  const Problem& problem = loop.problem;
  KernelUnderTest& candidate = loop.candidate;
  CaseRuns g;
  CaseFinding& f = g.finding;
  f.case_id = c.id;
  f.case_class = c.case_class();
  f.shape_set = c.shapes.id;
  f.hidden = c.shapes.hidden;

  std::shared_ptr<const CaseData> shared;
  try {
    shared = case_data(c);
  } catch (const SpecError& e) {
    // The reference may have lost the CUDA context: start afresh.
    loop.cases.forget_memory();
    return stopped_case(std::move(g), Reason::spec_error, e.what());
  }
  const CaseData& data = *shared;
  g.output_shapes = data.output_shapes;

  if (KernelUnderTest* against = loop.against) {
    RunOutcome old = against->run(c, data, 0);
    if (old.reason != Reason::none)
      return stopped_case(std::move(g), Reason::spec_error,
                          fmt::format("the --against kernel fails on this case: {}: {}",
                                      reason_name(old.reason), old.message));
    loop.backend.outputs_to_host(old, data.output_shapes);
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      if (!old.poisoned[o]) continue;
      const Unwritten u =
          find_unwritten(old.outputs[o], poison_pattern(0, problem.outputs[o].dtype), nullptr, 0);
      if (u.count > 0)
        return stopped_case(std::move(g), Reason::spec_error,
                            fmt::format("the --against kernel leaves {} elements of '{}' unwritten",
                                        u.count, problem.outputs[o].name));
    }
    g.old_outputs = std::move(old.outputs);
  }

  const int runs = loop.settings.defences.rerun ? 2 : 1;
  for (int run = 0; run < runs; ++run) {
    RunOutcome r = [&] {
      const PhaseTrace::Scope timed(*loop.settings.trace, "candidate run (all of it)");
      return candidate.run(c, data, run);
    }();
    spent_s += (r.reason == Reason::timeout ? r.deadline_s * 1e3
                : r.cpu_ms > 0              ? r.cpu_ms
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
  // Timed runs: indistinguishable from the first two to the kernel (the same shapes, the same
  // two poisons in turn), every one's outputs judged by judge_runs. Each on inputs of its own
  // where the oracle draws them (the host: `regenerate`), so that no answer kept from an
  // earlier run is right again; beside an --against kernel, whose outputs are the judge, on the
  // case's.
  const int timed_runs = loop.settings.asked.timed_runs;
  const bool timed = timed_runs > 0 && f.reason == Reason::none && c.case_class() == "public";
  const bool fresh = loop.settings.defences.regenerate && !loop.against;
  std::vector<double> timed_ms; // the timed runs' CPU times so far
  for (int run = 0; timed && run < timed_runs; ++run) {
    std::shared_ptr<const CaseData> visit = shared;
    if (fresh) {
      try {
        const PhaseTrace::Scope drawn(*loop.settings.trace, "oracle timed visit (inputs, golden)");
        const auto visit_id = static_cast<std::uint32_t>(run + 1);
        if (std::optional<CaseData> v = loop.backend.oracle().prepare_timed_visit(c, visit_id))
          visit = std::make_shared<const CaseData>(std::move(*v));
      } catch (const SpecError& e) {
        return stopped_case(std::move(g), Reason::spec_error, e.what());
      }
    }
    RunOutcome r = candidate.timed_run(c, *visit, run % 2);
    if (r.reason != Reason::none) {
      f.reason = r.reason;
      f.message = fmt::format("timed run {} of {}: {}", run + 1, timed_runs, r.message);
      if (did_not_run(r) && (r.reason == Reason::internal || !candidate.restartable()))
        g.stop = true;
      g.timed.clear();
      g.timed_data.clear();
      break;
    }
    timed_ms.push_back(r.cpu_ms);
    g.timed.push_back(std::move(r));
    g.timed_data.push_back(std::move(visit));
    // The old kernel right after, on the same inputs: both distributions under the same load.
    if (KernelUnderTest* against = loop.against) {
      const RunOutcome old = against->timed_run(c, data, run % 2);
      if (old.reason != Reason::none)
        return stopped_case(std::move(g), Reason::spec_error,
                            fmt::format("the --against kernel fails its timed run {} of {}: {}: {}",
                                        run + 1, timed_runs, reason_name(old.reason), old.message));
      g.against_ms.push_back(old.cpu_ms);
    }
    if (not_worth_timing(timed_ms, data.reference_cpu_ms)) {
      g.stopped_early = true;
      break;
    }
  }
  if (timed) g.reference_ms = data.reference_cpu_ms;
  if (!g.done.empty()) {
    // The excuse of what the reference cannot compute reads its host copies.
    if (data.extreme_in_inputs && !loop.against) loop.backend.complete_host_copies(data);
    if (!judge_in_place(g, data)) {
      loop.backend.complete_host_copies(data);
      const PhaseTrace::Scope copied(*loop.settings.trace, "outputs copied to the host");
      for (auto* outcomes : {&g.done, &g.timed})
        for (RunOutcome& r : *outcomes)
          loop.backend.outputs_to_host(r, data.output_shapes);
    }
    g.data = std::move(shared);
  }
  return g;
}

// Two clean runs judged by the backend where their outputs lie (the GPU comparator), their
// outputs then never copied. Any other case (a damaged run, one run only, an --against kernel's
// outputs, timed runs), or runs that differ, goes the host's way, which explains unwritten and
// nondeterministic elements. False: not judged here.
bool CaseRunning::judge_in_place(CaseRuns& g, const CaseData& data) {
  if (loop.against || g.done.size() != 2 || !g.timed.empty() || g.finding.reason != Reason::none)
    return false;
  std::optional<std::vector<OutputFinding>> findings;
  try {
    findings = loop.backend.judge_in_place(data, g.done[0], g.done[1]);
  } catch (const SpecError& e) {
    g = stopped_case(std::move(g), Reason::spec_error, e.what());
    return true;
  }
  if (!findings) return false;
  g.judged = std::move(findings);
  g.done.clear(); // their outputs are judged: nothing for the host side to hold
  return true;
}

// Judging what a case's runs left: unwritten elements, the policy and the rerun's bits, per
// output. Touches no CUDA state, so any thread may run it.
struct RunJudging {
  const CaseLoop& loop;
  const Problem& problem = loop.problem;

  JudgedCase judge_runs(CaseRuns g) const;
  void judge_timed_runs(const CaseRuns& g, CaseFinding& f) const;
  // What output `o`'s comparison takes: `actual` against the golden and reference of `visit`
  // (the case's own by default), or the --against kernel's output, bit-exactly.
  CompareInputs compare_inputs(const CaseRuns& g, std::size_t o, const HostTensor& actual,
                               const CaseData* visit = nullptr) const;
};

CompareInputs RunJudging::compare_inputs(const CaseRuns& g, std::size_t o,
                                         const HostTensor& actual, const CaseData* visit) const {
  return host_compare_inputs(problem, o, visit ? *visit : *g.data, actual,
                             loop.against ? &g.old_outputs : nullptr,
                             extras_asked(loop.settings.asked));
}

JudgedCase RunJudging::judge_runs(CaseRuns g) const {
  JudgedCase result{std::move(g.finding), g.stop};
  CaseFinding& f = result.finding;
  if (g.judged) { // by the GPU comparator
    f.outputs = std::move(*g.judged);
    excuse_what_the_reference_cannot_compute(problem, *g.data, f.outputs);
    f.take_worst_output_reason();
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
      if (loop.settings.defences.poison && first.poisoned[o]) {
        const Unwritten u =
            find_unwritten(a, poison_pattern(0, spec.dtype), b, poison_pattern(1, spec.dtype));
        if (u.count > 0) {
          f.outputs.push_back(unwritten_finding(
              spec, shape, u, a, g.data->golden.empty() ? nullptr : &g.data->golden[o]));
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
  if (!loop.against) excuse_what_the_reference_cannot_compute(problem, *g.data, f.outputs);
  f.take_worst_output_reason();
  if (f.pass() && !g.timed.empty()) judge_timed_runs(g, f);
  return result;
}

// Bench: every timed run's outputs judged like the first run's (a kernel that answers right
// only while it is watched, or replays an earlier answer, fails `stale_output`), then its times.
void RunJudging::judge_timed_runs(const CaseRuns& g, CaseFinding& f) const {
  const int runs = static_cast<int>(g.timed.size());
  for (int k = 0; k < runs; ++k) {
    for (std::size_t o = 0; o < problem.outputs.size(); ++o) {
      const OutputFinding judged = compare_output(
          compare_inputs(g, o, g.timed[k].outputs[o], g.timed_data[k].get()));
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
  t.against_ms = g.against_ms;
  t.stopped_early = g.stopped_early;
  f.timing = std::move(t);
}

} // namespace

JudgedCases judge_cases(const CaseLoop& loop, const std::vector<const Case*>& cases,
                        double spent_before_s) {
  const CheckSettings& settings = loop.settings;
  PhaseTrace& trace = *settings.trace;
  const auto started = Clock::now();
  CaseRunning running{loop};
  running.spent_s = spent_before_s;
  const RunJudging judging{loop};
  JudgedCases out;
  // Judging runs on the pool, in case order, while this thread drives the kernels through the
  // next cases; at most two per pool thread wait, bounding the host copies held.
  TaskPool pool(comparison_threads(largest_case_elements(loop.problem, cases)));
  const std::size_t window = 2 * static_cast<std::size_t>(pool.size());
  std::deque<std::future<JudgedCase>> pending;
  auto take_oldest = [&] {
    JudgedCase judged = [&] {
      const PhaseTrace::Scope timed(trace, "wait for a comparison");
      return pending.front().get();
    }();
    pending.pop_front();
    if (out.halted) return; // a case after the one that stopped the check: dropped
    if (settings.asked.on_case) settings.asked.on_case(judged.finding);
    const bool failed = !judged.finding.pass();
    out.findings.push_back(std::move(judged.finding));
    if (judged.stop || (failed && settings.asked.fail_fast)) out.halted = true;
  };
  auto ready = [](const std::future<JudgedCase>& f) {
    return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };
  for (const Case* c : cases) {
    if (out.halted) break;
    if (settings.time_budget_s > 0 && running.spent_s > settings.time_budget_s) {
      out.out_of_budget = true;
      break;
    }
    CaseRuns g = running.run_case(*c);
    const bool stop_after = g.stop;
    pending.push_back(pool.submit([&judging, &trace, g = std::move(g)]() mutable {
      const PhaseTrace::Scope timed(trace, "comparison (host, pool thread)");
      return judging.judge_runs(std::move(g));
    }));
    while (!pending.empty() && (pending.size() > window || ready(pending.front()) || stop_after))
      take_oldest();
    if (stop_after) break;
  }
  while (!pending.empty())
    take_oldest();
  out.spent_s = running.spent_s;
  out.wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  return out;
}

} // namespace kj::judge
