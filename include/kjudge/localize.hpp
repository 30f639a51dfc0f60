// kj::localize (`kjudge localize`): which stage of a multi-stage kernel owns its numerical error.
// The problem declares its stages (named intermediates, kj::StageSpec); the candidate's plan
// says which scratch buffer holds each and which launch completes it. At each stage's cut the
// candidate's launches after it are run on the golden's stage (rounded to the interface dtype),
// and the golden's launches after it on the candidate's stage, so the error at the outputs
// splits into what is inherited from upstream and what the downstream launches add on their own;
// every figure beside the same decomposition of the same-precision reference
// (docs/localize.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/verdict.hpp"

namespace kj::localize {

// ---- the split (no backend) ------------------------------------------------------------

// The problem as one run of the candidate shows it: every stage an output of its own, after the
// problem's outputs (their policies as the first float output's).
Problem with_stages_as_outputs(const Problem& problem);
// The candidate for with_stages_as_outputs: each stage's scratch buffer becomes that output.
Candidate with_stages_as_outputs(const Problem& problem, const Candidate& candidate);
// The launches after stage `s`'s cut, as a problem of their own: the stage an input (after the
// problem's inputs), the later stages outputs (after the problem's outputs).
Problem after_cut(const Problem& problem, std::size_t s);
// The candidate's launches after its launch that completes stage `s`, with the stage's buffer
// as that input and the later stages' buffers as those outputs.
Candidate after_cut(const Problem& problem, const Candidate& candidate, std::size_t s);
// Why the candidate cannot be split at the problem's stages (a stage it does not expose, one
// produced and consumed inside one launch, a scratch buffer used on both sides of a cut,
// stages completed out of order), naming the field; nullopt when it can. The problem's own
// reference is checked at load (problem_stages.cpp).
std::optional<std::string> unsplittable(const Problem& problem, const Candidate& candidate);

// ---- the decomposition ------------------------------------------------------------------

// Percentiles of |e| over every element of every case judged, in one statistic.
struct TermStats {
  double p50 = 0, p99 = 0, p999 = 0, max = 0;
  double rms = 0, mean = 0; // of the signed error
  std::int64_t count = 0;
};

// One term, the candidate's and the same-precision reference's.
struct Term {
  std::string name; // inherited, own, interaction, total, conversion
  TermStats kernel, reference;
};

// The orthogonality diagnostic rms(total)^2 ~ rms(inherited)^2 + rms(own)^2 and its assumptions.
struct Orthogonality {
  double total_sq = 0, sum_sq = 0;  // rms(total)^2, rms(inherited)^2 + rms(own)^2
  double correlation = 0;           // of inherited and own, element by element
  std::vector<std::string> failed;  // the assumptions that do not hold, in words
};

// The terms at the problem's output `output` of the cut at stage `stage`.
struct CutAtOutput {
  std::string stage, output;
  std::string statistic; // "absolute" or "relative": the quantity the output's gate judges
  std::vector<Term> terms;
  Orthogonality orthogonality;
};

// The stage's own tensor against the golden's: the candidate's and the reference's.
struct StageError {
  std::string stage;
  TermStats kernel, reference;
};

struct LocalizeOptions {
  CheckOptions check;          // backend, self_exe, caches: as `kjudge check`
  std::optional<std::string> only_case;
  int max_cases = 8;           // of the check's plan, without special values (their errors are
                               // non-finite by design)
};

struct Localization {
  Verdict harness;                        // the check's verdict: read every figure with it
  std::vector<std::string> cases;         // the cases decomposed
  std::vector<StageError> stage_errors;
  std::vector<CutAtOutput> cuts;          // per stage, per problem output
  // The stage to fix: the first whose inherited tail (or, for the outputs' own launches, whose
  // own tail) exceeds the reference's by more than kOwnsTheError; "none" when none does.
  std::string culprit;
  double factor = 1;                      // its tail over the reference's
  std::string explanation;
};
inline constexpr double kOwnsTheError = 1.5;

// Judges the candidate (the harness's verdict), then decomposes its error at every stage on the
// cases. Throws SpecError for a problem without stages or a candidate that cannot be split.
Localization localize(const Problem& problem, const Candidate& candidate,
                      const LocalizeOptions& options);

std::string localization_text(const Localization& l);
nlohmann::json localization_json(const Localization& l);

} // namespace kj::localize
