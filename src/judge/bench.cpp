// kj::bench (kjudge/judge.hpp): `kjudge bench` on the host backend, and the verdict of a candidate
// that does not load, which check, bench and serve callers share. The timing rides on the
// check's own path (judge/check.cpp, CheckOptions::timed_runs): the timed runs are made like the
// two judged runs of a case, in the same worker on the same inputs, and every one's outputs is
// judged, so a time is only ever a time of right answers. Here: the choice of backend and the
// runtime figures from the cases' timed runs.
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

Verdict bench(const Problem& problem, const Candidate& candidate, const BenchOptions& options) {
  CheckOptions o = options.check;
  std::string why;
  if (o.backend == Backend::cuda || (o.backend == Backend::automatic && cuda_available(&why))) {
    Verdict v;
    v.manifest.problem = problem.name;
    v.manifest.backend = "cuda";
    v.skips.push_back(fmt::format("SKIP(the GPU timing loop of kjudge bench is not built yet; "
                                  "--backend host times on the CPU) bench of {}",
                                  candidate.path.filename().string()));
    v.finalize();
    return v;
  }
  o.backend = Backend::host;
  o.timed_runs = std::max(1, options.runs);
  Verdict v = check(problem, candidate, o);
  v.timer = "host_cpu";
  if (v.outcome != Outcome::pass) return v;
  double candidate_ms = 0, reference_ms = 0;
  bool timed = false;
  for (const CaseFinding& c : v.cases) {
    if (!c.timing) continue;
    timed = true;
    candidate_ms += sample_stats(c.timing->candidate_ms).median;
    reference_ms += sample_stats(c.timing->reference_ms).median;
  }
  if (timed) {
    v.runtime_ms = candidate_ms;
    v.ref_runtime_ms = reference_ms;
  }
  return v;
}

} // namespace kj
