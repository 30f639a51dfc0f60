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
  // --baseline OLD.cu: the version before a fix, run on the same cases (the untouched-leaf
  // control); --fixed STAGE: the stage the fix meant to change (default: the first that moved).
  std::optional<Candidate> baseline;
  std::string fixed_stage;
  std::optional<std::string> only_case;
  int max_cases = 8;           // of the check's plan, without special values (their errors are
                               // non-finite by design)
};

// One stage or output of the --baseline control: how many elements differ from the old
// version's, bit for bit, over the cases; upstream of the fixed stage nothing may.
struct LeafControl {
  std::string tensor;
  std::int64_t differing = 0;
  bool must_not_move = false; // upstream of the fixed stage: no path from the change
};

struct Localization {
  Verdict harness;                        // the check's verdict: read every figure with it
  std::vector<LeafControl> leaves;        // with --baseline, stages then outputs
  std::string fixed_stage;                // with --baseline: the stage the fix changed
  std::vector<std::string> moved_leaves;  // must_not_move tensors that moved: the control fails
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
// A self-contained page: per cut the terms' table and an SVG of their distributions.
std::string localization_html(const Localization& l);

// ---- pricing a fix (`kjudge localize --price`) -------------------------------------------------

struct CasePrice {
  std::string case_id;
  bool old_pass = false, new_pass = false;
  double old_score = 0, new_score = 0;
};
struct Pricing {
  std::string per_case;             // the problem's [score] per_case
  std::string gain_formula, cost_formula;
  double gain = 0, cost = 0;
  bool build = false;               // gain > cost
  int newly_passing = 0, newly_failing = 0;
  std::vector<CasePrice> cases;     // the old version's cases, in canonical order
  Verdict old_verdict, new_verdict; // each version's bench
};
// Both versions through bench (every case checked, the public ones timed), each case's pass and
// score, and the problem's [score] formula over them. Throws SpecError when the problem has no
// [score] or the formula cannot be evaluated.
Pricing price(const Problem& problem, const Candidate& old_version, const Candidate& fix,
              const CheckOptions& check, int host_runs = 10);
std::string pricing_text(const Pricing& p);
nlohmann::json pricing_json(const Pricing& p);

// ---- what if (`kjudge whatif`): precision schemes replayed through the golden -----------------

// How a scheme stores each stage between the launches: a float dtype ("bf16", "f32"), or a
// split into N terms of one ("bf16x2": hi = bf16(v), lo = bf16(v - hi), the value hi + lo).
struct Representation {
  DType dtype = DType::f64;
  int terms = 1;
  std::string text;
};
Representation parse_representation(std::string_view text, const Location& where);
// `v` as the representation holds it.
double represented(const Representation& r, double v);

struct Scheme {
  std::string name;
  std::vector<Representation> stages; // parallel to Problem::stages
};
// A TOML file of [[scheme]] tables: `name` and one key per stage of the problem (every stage
// named, nothing else); errors name the file, the table and the key.
std::vector<Scheme> load_schemes(const std::filesystem::path& file, const Problem& problem);

struct WhatIfRow {
  std::string scheme, shape_set; // a declared shape set, its perturbations included
  int cases = 0, passed = 0;
  double worst_ratio = 0;  // the gate's largest error over its bound, over the cases
  std::string first_failure;
};
struct WhatIf {
  std::vector<std::string> schemes, shape_sets;
  std::vector<WhatIfRow> rows; // scheme-major
};
struct WhatIfOptions {
  CheckOptions check; // self_exe and caches; the host backend always
  int max_cases = 64;
};
// Each scheme over the host plan's cases (no hidden sets, no special values): the stages exact
// (the golden's launches in f64), each stored as the scheme says before the next launches read
// it, the outputs rounded to their dtype and judged by the problem's own gate against its golden
// and reference. No candidate and no GPU.
WhatIf whatif(const Problem& problem, const std::vector<Scheme>& schemes, const WhatIfOptions& o);
std::string whatif_text(const WhatIf& w);
nlohmann::json whatif_json(const WhatIf& w);

} // namespace kj::localize
