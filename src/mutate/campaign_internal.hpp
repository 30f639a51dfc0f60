// The campaign's internal pieces (src/mutate/): the pool of one problem, a kernel observed on
// one input (two runs), the baseline the correct kernels set, what the strong oracle and the
// checkers decide from an observation, and the state kept between campaigns.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "judge/backend.hpp"
#include "kjudge/cases.hpp"
#include "kjudge/mutate.hpp"
#include "kjudge/spec.hpp"

namespace kj::mutate::detail {

// One problem's inputs: every checker's draw, and the recipes no default case holds.
struct ProblemPool {
  std::vector<Case> cases;
  std::vector<std::string> recipes;                  // generic: transfers between problems
  std::vector<std::vector<std::size_t>> draws;       // per checker: indices into cases
  std::size_t defaults = 0; // cases[0, defaults) are the problem's default cases; the rest are
                            // witness_cases (a seed and a transform of the first shape set)
};
ProblemPool make_pool(const Problem& problem, const std::vector<Checker>& checkers);
// The .cu files of a problem folder's solutions/ (the correct kernels the campaign mutates and
// the audit's ladder runs), in name order; none where there is no such folder.
std::vector<std::filesystem::path> solution_files(const std::filesystem::path& problem_dir);
// Pool case i as the campaign lists it: whether a default case, else the [[case]] that makes it.
PoolInput pool_input(const Problem& problem, const ProblemPool& pool, std::size_t i);

// Two runs of one input as the strong oracle and the checkers need them.
struct Observation {
  Reason fault = Reason::none; // did not run, or damaged memory (oob, inputs)
  std::string message;
  bool unwritten = false, differs = false;
  std::vector<HostTensor> out0, out1;
  std::vector<double> error;       // per output: largest |actual - golden| where both are finite
  std::vector<std::int64_t> bad;   // per output: non-finite where the golden is finite
};
// Two runs of case `c` by `kernel`, read back on the host.
Observation observe(judge::CheckBackend& backend, judge::KernelUnderTest& kernel,
                    const Problem& problem, const Case& c, const judge::CaseData& d);
// The observation with every element NaN (float outputs) or off by one (integer ones): the
// sanity mutant.
Observation forced_fail(const Observation& good, const judge::CaseData& d);
// Whether an input can show the forced failure: more non-finite elements where the golden is
// finite than the solution has itself (not on an all-NaN golden, which accepts NaN, nor where
// the solution overflows on every element whose golden is finite), or an integer off by one.
bool forced_fail_shows(const Observation& good, const Observation& forced);

// The largest error and non-finite count any correct kernel reaches, per input and output.
struct Baseline {
  std::vector<double> error;
  std::vector<std::int64_t> bad;
  void widen(const Observation& ob) {
    error.resize(ob.error.size(), 0.0);
    bad.resize(ob.bad.size(), 0);
    for (std::size_t o = 0; o < ob.error.size(); ++o) {
      error[o] = std::max(error[o], ob.error[o]);
      bad[o] = std::max(bad[o], ob.bad[o]);
    }
  }
};
// Why the strong oracle kills on this input, or nullopt.
std::optional<std::string> kill_reason(const Observation& ob, const Baseline& b,
                                       const Problem& problem);
// The largest error over the baseline's (finite ratios only).
std::optional<double> error_ratio(const Observation& ob, const Baseline& b);
// Whether checker `ch` accepts the outputs of this observation (checkers.cpp).
bool checker_accepts(const Checker& ch, const Problem& problem, const judge::CaseData& d,
                     const Observation& ob);

// State (campaign_state.cpp): finished mutants as JSON lines, keyed by what they depend on.
std::string result_line(const std::string& key, const MutantResult& r);
std::map<std::string, MutantResult> load_state(const std::filesystem::path& dir);
std::string state_key(const std::string& text, const std::string& context);
std::string catalogue_fingerprint();
std::string checkers_fingerprint(const std::vector<Checker>& checkers);

} // namespace kj::mutate::detail
