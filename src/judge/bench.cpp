// kj::bench (kjudge/judge.hpp): `kjudge bench`, and the verdict of a candidate that does not
// load, which check, bench and serve callers share. The timing rides on the check's own path:
// on the GPU the timing loop runs in the check once every case passed (CheckOptions::gpu_timing,
// judge/cuda/timing_loop.hpp); on the host backend the timed runs are made like the two judged runs of a
// case (CheckOptions::timed_runs). Either way every timed output is judged, so a time is only
// ever a time of right answers. Here: the choice of backend and the verdict's runtime figures
// from the cases' timings.
#include <cmath>

#include <fmt/format.h>

#include "kjudge/cuda.hpp"
#include "kjudge/judge.hpp"

namespace kj {

Verdict unloadable_candidate_verdict(const Problem& problem, const std::string& candidate,
                                     const std::string& message) {
  Verdict v;
  v.manifest.problem = problem.name;
  v.manifest.problem_hash = problem.hash;
  v.manifest.candidate = candidate;
  v.reason = Reason::launch_error;
  v.message = message;
  v.finalize();
  return v;
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

} // namespace

Verdict bench(const Problem& problem, const Candidate& candidate, const BenchOptions& options) {
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
  if (v.outcome == Outcome::pass) summarize_timings(problem, v);
  return v;
}

} // namespace kj
