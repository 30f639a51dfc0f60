// kj::bench (kjudge/judge.hpp): `kjudge bench`, and the verdict of a candidate that does not
// load, which check, bench and serve callers share. The timing rides on the check's own path:
// on the GPU the timing loop runs in the check once every case passed (CheckOptions::gpu_timing,
// judge/cuda/timing_loop.hpp); on the host backend the timed runs are made like the two judged runs of a
// case (CheckOptions::timed_runs). Either way every timed output is judged, so a time is only
// ever a time of right answers. With --against (the configuration tier) the check already holds
// every output to the old kernel's bits, and both ride the same paths again: the case loop and
// the timing loop time the old kernel beside the candidate. Here: the choice of backend, the
// verdict's runtime figures from the cases' timings, the pooled latency distributions and the
// SLO, and the SM clock the times were taken at.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kjudge/cuda.hpp"
#include "kjudge/judge.hpp"

namespace kj {

void record_problem_dtypes(const Problem& problem, Verdict& v) {
  v.provenance.inputs.clear();
  v.provenance.outputs.clear();
  for (const InputSpec& in : problem.inputs)
    v.provenance.inputs.push_back({in.name, std::string(dtype_name(in.dtype))});
  for (const OutputSpec& out : problem.outputs)
    v.provenance.outputs.push_back({out.name, std::string(dtype_name(out.dtype))});
}

namespace {

// A verdict decided before anything ran: the manifest names the problem and the candidate.
Verdict verdict_before_running(const Problem& problem, const std::string& candidate, Reason reason,
                               const std::string& message) {
  Verdict v;
  v.manifest.problem = problem.name;
  v.manifest.problem_hash = problem.hash;
  v.manifest.candidate = candidate;
  record_problem_dtypes(problem, v);
  v.reason = reason;
  v.message = message;
  v.finalize();
  return v;
}

} // namespace

Verdict unloadable_candidate_verdict(const Problem& problem, const std::string& candidate,
                                     const std::string& message) {
  return verdict_before_running(problem, candidate, Reason::launch_error, message);
}

namespace {

// runtime_ms and ref_runtime_ms: the sums over the timed cases of their medians. On the GPU
// also the speedup's 95% interval (each median's standard error from its noise, summed in
// quadrature over the cases), the fraction of the floor (the floors' sum over runtime), and the
// baselines' sum when every timed case has one, timed or recorded (else, when the problem
// records some, a SKIP line saying none fits).
void summarize_timings(const Problem& problem, Verdict& v) {
  double candidate_ms = 0, reference_ms = 0, candidate_var = 0, reference_var = 0, floor_ms = 0;
  double baseline_ms = 0;
  bool timed = false, every_baseline = true, baseline_timed = true;
  std::string baseline;
  for (const CaseFinding& c : v.cases) {
    if (!c.timing) continue;
    timed = true;
    every_baseline = every_baseline && c.timing->baseline_ms.has_value();
    baseline_timed = baseline_timed && !c.timing->baseline_samples_ms.empty();
    if (c.timing->baseline_ms) {
      baseline_ms += *c.timing->baseline_ms;
      if (baseline.find(c.timing->baseline) == std::string::npos)
        baseline += (baseline.empty() ? "" : " + ") + c.timing->baseline;
    }
    const SampleStats cand = sample_stats(c.timing->candidate_ms);
    const SampleStats ref = sample_stats(c.timing->reference_ms);
    candidate_ms += cand.median;
    reference_ms += ref.median;
    floor_ms += c.timing->floor_ms;
    const double cand_se = median_noise(cand) * cand.median;
    const double ref_se = median_noise(ref) * ref.median;
    candidate_var += cand_se * cand_se;
    reference_var += ref_se * ref_se;
  }
  if (!timed) return;
  v.runtime_ms = candidate_ms;
  v.ref_runtime_ms = reference_ms;
  if (every_baseline && !baseline.empty()) {
    v.baseline_runtime_ms = baseline_ms;
    v.baseline = baseline;
    v.baseline_timed = baseline_timed;
  } else if (!problem.baselines.empty() && v.timer == "cuda_events") {
    v.skips.push_back(fmt::format("SKIP(the problem records no baseline for '{}' on every timed "
                                  "shape set) baseline",
                                  v.manifest.gpu));
  }
  if (v.timer != "cuda_events" || !(candidate_ms > 0) || !(reference_ms > 0)) return;
  const double speedup = reference_ms / candidate_ms;
  const double relative = std::sqrt(candidate_var / (candidate_ms * candidate_ms) +
                                    reference_var / (reference_ms * reference_ms));
  if (std::isfinite(relative)) {
    v.speedup_low = speedup * std::max(0.0, 1 - 1.96 * relative);
    v.speedup_high = speedup * (1 + 1.96 * relative);
  }
  if (floor_ms > 0) v.fraction_of_floor = floor_ms / candidate_ms;
}

// The GPU bench's measured SM clock, which replaces the rated one in the provenance: the median
// over the timed cases of each case's median clock (the probes of its kept rounds).
void record_measured_clock(Verdict& v) {
  std::vector<double> clocks;
  for (const CaseFinding& c : v.cases)
    if (c.timing && c.timing->sm_clock_mhz > 0) clocks.push_back(c.timing->sm_clock_mhz);
  if (clocks.empty()) return;
  v.provenance.sm_clock_mhz = sample_stats(clocks).median;
  v.provenance.sm_clock_source = "measured";
}

// The latencies of every timed run of every timed case, pooled: the candidate's, and with
// --against the old kernel's (an ERROR(internal) where a timed case lacks them: a backend that
// did not time it must not let the verdict look complete). Then the SLO: a candidate p99 over
// it fails the bench as a run past its deadline does, FAIL(timeout).
void judge_latency(const BenchOptions& options, Verdict& v) {
  std::vector<double> candidate_ms, against_ms;
  for (const CaseFinding& c : v.cases) {
    if (!c.timing) continue;
    if (options.check.against && c.timing->against_ms.empty()) {
      v.reason = Reason::internal;
      v.message = fmt::format("the --against kernel was not timed beside the candidate on case "
                              "{}",
                              c.case_id);
      v.finalize();
      return;
    }
    candidate_ms.insert(candidate_ms.end(), c.timing->candidate_ms.begin(),
                        c.timing->candidate_ms.end());
    against_ms.insert(against_ms.end(), c.timing->against_ms.begin(), c.timing->against_ms.end());
  }
  if (candidate_ms.empty()) return;
  Latency& l = v.latency.emplace();
  l.candidate = latency_distribution(std::move(candidate_ms));
  if (options.check.against) l.against = latency_distribution(std::move(against_ms));
  l.slo_p99_ms = options.slo_p99_ms;
  if (l.slo_met()) return;
  v.reason = Reason::timeout;
  v.message = fmt::format("p99 latency {:.4g} ms is over the SLO of {:.4g} ms (--slo-p99), over {} "
                          "timed runs",
                          l.candidate.p99, *l.slo_p99_ms, l.candidate.n);
  v.finalize();
}

} // namespace

LatencyDistribution latency_distribution(std::vector<double> samples) {
  LatencyDistribution d;
  if (samples.empty()) return d;
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  // Rank ceil(q n) in integers, so that p99 of 100 samples is the 99th, not one past it.
  auto at_percent = [&](std::size_t percent) {
    const std::size_t rank = (percent * n + 99) / 100;
    return samples[std::clamp<std::size_t>(rank, 1, n) - 1];
  };
  d.p50 = at_percent(50);
  d.p90 = at_percent(90);
  d.p99 = at_percent(99);
  d.max = samples.back();
  d.n = static_cast<int>(n);
  return d;
}

Verdict bench(const Problem& problem, const Candidate& candidate, const BenchOptions& options) {
  if (options.slo_p99_ms && !(std::isfinite(*options.slo_p99_ms) && *options.slo_p99_ms > 0)) {
    return verdict_before_running(
        problem, candidate.path.string(), Reason::spec_error,
        fmt::format("--slo-p99: {} is not a positive number of milliseconds", *options.slo_p99_ms));
  }
  CheckOptions o = options.check;
  std::string why;
  const bool gpu =
      o.backend == Backend::cuda || (o.backend == Backend::automatic && cuda_available(&why));
  if (gpu) {
    o.backend = Backend::cuda;
    o.gpu_timing = options.timing;
  } else {
    o.backend = Backend::host;
    o.timed_runs = std::max(1, options.runs);
  }
  Verdict v = check(problem, candidate, o);
  v.timer = gpu ? "cuda_events" : "host_cpu";
  if (v.outcome != Outcome::pass) return v;
  record_measured_clock(v);
  judge_latency(options, v);
  if (v.outcome == Outcome::pass) summarize_timings(problem, v);
  return v;
}

} // namespace kj
