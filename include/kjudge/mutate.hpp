// Mutation analysis of a checker (`kjudge mutate`, ../shared/reference/mutation-operators.md):
// single-edit mutants of correct kernels, the strong oracle that says which ones an input can
// expose, and how many of those each checker under test lets through. Three parts: the operator
// catalogue and mutant generation (src/mutate/operators.cpp and its rules), the campaign that
// compiles and runs mutants (src/mutate/campaign.cpp, checkers.cpp, observe.cpp), and the
// analysis and reports of a finished one (analysis.cpp, reports.cpp, html_report.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/spec.hpp"

namespace kj::mutate {

// ---- Operators ---------------------------------------------------------------------------

enum class Category { arithmetic, indexing, semantic, boundary, synchronization, precision, control };
std::string_view category_name(Category c); // "arithmetic", ..., "control"
// The categories a checker's escape rate is given for (every one but control).
inline constexpr Category kScoredCategories[] = {
    Category::arithmetic, Category::indexing,        Category::semantic,
    Category::boundary,   Category::synchronization, Category::precision};

// One operator of the catalogue: "AR-AOR" and its rewrites ("+ -> -", "- -> +", ...). A
// rewrite is one distinct replacement rule; the catalogue counts them.
struct Operator {
  std::string id;        // "AR-AOR"
  Category category;
  std::string summary;   // one line
  std::vector<std::string> rewrites; // "+ -> -", "* -> /", ...
  bool equivalence_prone = false;    // its mutants may be presumed equivalent (reports say so)
};
const std::vector<Operator>& operator_catalogue();

// One single-edit mutant of a source file: `original` at [offset, offset + length) replaced by
// `replacement`, and `prelude` (an include the replacement needs, or empty) put before line 1.
struct Mutant {
  std::string id;          // 16 hex digits of sha256(file, operator, offset, length, replacement)
  std::string op;          // the catalogue id
  Category category;
  std::string rewrite;     // which rewrite of the operator ("+ -> -")
  std::string description; // one line: "a + b -> a - b in row_sum (line 12)"
  std::string file;        // the label given to generate_mutants ("softmax/solutions/basic.cu")
  std::size_t offset = 0, length = 0;
  int line = 0, column = 0; // 1-based, of `offset` in the original
  std::string original, replacement, prelude;
  std::string function;    // the enclosing __global__/__device__ function
  bool equivalence_prone = false;
};

// The mutants of `source`, in source order then catalogue order, inside __global__ and
// __device__ bodies only (never in comments, strings, preprocessor lines or launch brackets).
// `operators`: catalogue ids or category names to keep (empty: all). Unknown names throw
// std::invalid_argument naming them.
std::vector<Mutant> generate_mutants(std::string_view file, std::string_view source,
                                     const std::vector<std::string>& operators = {});
// The mutated source.
std::string apply_mutant(std::string_view source, const Mutant& m);

// PTX with what does not change the code taken out (comments, the header's version lines,
// blank lines, debug locations), so equal texts mean the same machine code for dedup.
std::string normalize_ptx(std::string_view ptx);

// ---- A finished campaign -----------------------------------------------------------------

// What became of a mutant (mutation-testing-report-schema statuses in brackets).
enum class Status {
  killed,        // some pool input exposed it [Killed]
  not_killable,  // no input exposed it: "not shown killable", never an escape [Survived]
  compile_error, // [CompileError]
  equivalent,    // its normalised PTX equals the original's [Ignored]
  duplicate,     // its normalised PTX equals an earlier mutant's [Ignored]
  not_run,       // outside the budget [Ignored]
};
std::string_view status_name(Status s); // "killed", "not_killable", ...

// One input of the pool: a case of one problem, made by one recipe.
struct PoolInput {
  std::string problem;
  std::string case_id; // replays with `kjudge check PROBLEM --candidate F --case ID`
  std::string recipe;  // "public:id", "perturbed:id", "public:x*-1", "public:offset+10s", "special:x:nan"
  bool default_case = false; // one of the problem's default cases (kjudge's draw)
  // Beyond the defaults: the [[case]] that makes it, where one can (a seed and a transform of
  // the first public shape set).
  std::optional<AdoptedCase> adoptable = std::nullopt;
};

struct MutantResult {
  Mutant mutant;
  std::string problem;
  Status status = Status::not_run;
  std::string status_reason;      // why killed ("crash on ...", "error 40x the controls'"), or why not
  std::optional<std::size_t> witness; // Campaign::pool index of the first killing input
  std::string replay;             // the command that reproduces the witness
  std::string ptx_hash;           // of the normalised PTX (empty without one)
  std::string equivalence_class;  // the ptx_hash of the first mutant with this PTX
  // Per checker name: whether the checker accepted the mutant (an escape when it was killed).
  std::map<std::string, bool> accepted;
  // The kill matrix row: Campaign::pool indices of the inputs that expose it, ascending.
  std::vector<std::size_t> killed_on;
  // Per pool input of its problem that ran (index, error ratio): its largest error against
  // the golden over the largest any control reached (precision mutants' distribution).
  std::vector<std::pair<std::size_t, double>> error_ratios;
  bool flaky = false; // its two runs of some input differed
};

// A control (a CTRL mutant, or a bundled correct solution): it must be accepted by every
// checker; a rejection is a checker's false rejection.
struct ControlResult {
  std::string problem, name; // name: the mutant id, or the solution file
  std::map<std::string, bool> accepted;
  // A CTRL mutant the strong oracle rejects (a fault of its rewrite, not of a checker): why.
  // Such a one is listed but neither sets the baseline nor counts as a control.
  std::string broken;
};

struct Campaign {
  std::vector<std::string> checkers; // names, in the order given
  std::vector<PoolInput> pool;
  std::vector<MutantResult> mutants;
  std::vector<ControlResult> controls;
  // Pool inputs dropped by the sanity step (the original or a control failed on them).
  std::vector<std::pair<PoolInput, std::string>> dropped_inputs;
  bool forced_fail_killed = false; // the sanity mutant (outputs written as NaN) was killed
  // Seconds spent, by stage.
  double generate_s = 0, compile_s = 0, dedup_s = 0, execute_s = 0;
  std::string backend; // "cuda" or "host"
  std::map<std::string, std::string> sources; // file label -> original source (for reports)
};

// ---- Running a campaign ------------------------------------------------------------------

// A checker under test: which pool inputs it draws and how it judges an output.
struct Checker {
  std::string name;
  // Its inputs: the problem's default cases (kjudge's draw), or `seeds` seeds of the first
  // shape set, identity transform (KernelBench's and torch's habit).
  enum class Draw { default_cases, first_shape_seeds } draw = Draw::default_cases;
  int seeds = 1;
  // How it judges: the problem's own policy against the golden with every defence of
  // `kjudge check` (red zones, poison, two runs, inputs hashed); or |out - ref| <= atol +
  // rtol |ref| against the same-precision reference, integers exact, NaN never close.
  enum class Judge { problem_policy, tolerance } judge = Judge::problem_policy;
  double rtol = 0, atol = 0;           // f32 and f64 outputs
  double rtol_half = 0, atol_half = 0; // f16, bf16 and fp8 outputs
  bool torch_defaults = false;         // rtol, atol: torch.testing.assert_close's per dtype
  bool dtype_epsilon_rtol = false;     // rtol: the output dtype's epsilon (llm.c)
  bool skip_nonfinite_reference = false; // elements whose reference is not finite (llm.c)
};
// {rtol, atol} of a tolerance checker for a float output dtype.
std::pair<double, double> checker_tolerances(const Checker& c, DType t);
// A tolerance checker's judgement of one output: |a - e| <= atol + rtol |e| everywhere
// (integers: equal; NaN never close; equal infinities close; elements whose expected value is not
// finite skipped where the checker says so). log_error_ratio: log10 of the worst element's
// |a - e| / allowed, clamped to [-12, 12] like OutputFinding's, <= 0 exactly when accepted.
struct ToleranceJudgement {
  bool accepted = true;
  std::int64_t failing = 0, first_failing = -1;
  double log_error_ratio = -12;
};
ToleranceJudgement judge_by_tolerance(const Checker& c, const HostTensor& actual,
                                      const HostTensor& expected);
// kjudge, kernelbench-v0, kernelbench, torch-defaults, llmc (the definitions).
std::vector<Checker> builtin_checkers();
// A checker a user describes in TOML: name, draw = "default" | "first-shape", seeds,
// judge = "problem" | "tolerance", rtol, atol, rtol_half, atol_half, torch_defaults,
// dtype_epsilon_rtol, skip_nonfinite_reference. Throws kj::SpecError naming the file and key.
Checker load_checker(const std::string& toml_file);
// The named ones: builtin names, or paths of TOML files (ending in .toml). Throws
// std::invalid_argument for an unknown name.
std::vector<Checker> resolve_checkers(const std::vector<std::string>& names);

struct CampaignOptions {
  std::vector<std::string> problems;   // problem folders
  std::vector<Checker> checkers;
  std::vector<std::string> operators;  // catalogue ids or categories (empty: all)
  int budget = 0;                      // mutants executed at most, over all problems (0: all)
  int jobs = 1;                        // compile processes
  std::string backend = "auto";        // auto | cuda | host
  std::string state_dir;               // results kept here; a campaign resumes from them
  std::string self_exe;                // kjudge itself (its workers)
  std::string cache_dir;               // the NVRTC cache (empty: none)
  // After each executed mutant: done, total, kills so far.
  std::function<void(std::size_t, std::size_t, std::size_t)> on_progress;
};
// Generate, dedup, sanity-check, execute and judge (docs/design.md "Mutation analysis").
// Throws kj::SpecError for a bad problem, std::runtime_error when the sanity step drops more
// than half the pool or the forced-fail mutant survives.
Campaign run_campaign(const CampaignOptions& options);

// ---- Analysis ----------------------------------------------------------------------------

// A rate with its bootstrap 95% interval (percentile method, a fixed seed: reports are stable).
struct Rate {
  std::int64_t hits = 0, total = 0;
  double rate = 0, low = 0, high = 0; // all 0 when total is 0
};
Rate bootstrap_rate(const std::vector<bool>& outcomes, int resamples = 2000,
                    std::uint64_t seed = 1);

// A checker's escape rate over the killed mutants: overall and per scored category.
struct EscapeRates {
  std::string checker;
  Rate overall;
  std::map<Category, Rate> by_category;
  std::int64_t false_rejections = 0, controls = 0;
};
std::vector<EscapeRates> escape_rates(const Campaign& c);

// Greedy set cover over the kill matrix.
struct CoverCurve {
  std::vector<std::size_t> chosen;  // pool indices, in the order greedy picked them
  std::vector<double> detection;    // after 1, 2, ... inputs: the share of killed mutants caught
  // Same-size random suites: mean detection at 1, 2, 3, 5 inputs per problem (fixed seed).
  std::map<int, double> random_at;
  std::map<int, double> greedy_at;  // the greedy suite's detection at 1, 2, 3, 5 per problem
  // Held out: chosen on half the mutants of each problem, scored on the other half; and by
  // recipe, chosen on half the problems, scored on the rest (NaN where it cannot be scored).
  std::map<int, double> held_out_mutants_at, held_out_recipes_at;
  std::vector<std::string> chosen_recipes; // the recipes the recipe-level cover picked
};
CoverCurve set_cover(const Campaign& c);

// What a problem's default cases miss and the [[case]]s that close it: the killed mutants no
// default case exposes (to the strong oracle), covered greedily by the pool inputs a [[case]]
// can make. One entry per problem with a killed mutant, by name.
struct CasesToAdopt {
  std::string problem;
  std::size_t killed = 0, missed = 0;     // killed mutants; of them, none a default case exposes
  std::vector<std::size_t> picks;         // Campaign::pool indices, in greedy order
  std::vector<std::vector<std::size_t>> gains; // per pick: the Campaign::mutants it adds
};
std::vector<CasesToAdopt> cases_to_adopt(const Campaign& c);
// The picks as [[case]] tables to append to the problem's problem.toml, with a comment naming
// the mutants each one adds (empty when there is no pick).
std::string adopted_cases_toml(const Campaign& c, const CasesToAdopt& a);

// ---- Campaigns made elsewhere -------------------------------------------------------------

// The mutants as a JSON array of objects with Mutant's fields (category by name): what
// kjudge.kernelbench.mutate mutates a solution's kernels with.
std::string mutants_json(const std::vector<Mutant>& mutants);
// A campaign run outside this library (kjudge.kernelbench.mutate, on KernelBench-format
// programs) read back for the analysis and reports: an object with backend, checkers, pool
// (problem, case_id, recipe, default_case), mutants (Mutant's fields and MutantResult's),
// controls (problem, name, accepted, broken), dropped_inputs (problem, case_id, recipe, why),
// forced_fail_killed, seconds (generate, compile, dedup, execute) and sources. No pool input
// is adoptable. Throws kj::SpecError naming `where` for malformed JSON or an index past the
// pool.
Campaign campaign_from_json(std::string_view text, const std::string& where);
// The campaign in that form (`kjudge mutate --campaign FILE`): what campaign_from_json reads
// back to the same reports (a pool input's adoptable case is not kept).
std::string campaign_json(const Campaign& c);

// ---- Reports -----------------------------------------------------------------------------

// The console table: escape rates per checker x category with intervals, the controls'
// false rejections, the stage times, and the survivors' compiler-style lines.
void write_console(std::ostream& out, const Campaign& c);
// Compiler-style lines: for each killed mutant the checker "kjudge" (else the first checker)
// accepted, `file:line:col: warning: Survived: expf -> __expf [PR-FASTMATH] (accepted by kjudge;
// witness CASE)`; for each mutant no input killed, `file:line:col: note: not shown killable: ...`.
std::vector<std::string> survivor_lines(const Campaign& c);
// mutation-testing-report-schema v2 (schemaVersion "2"); statuses as in Status's comments, a
// crash Killed with its reason in statusReason; RuntimeError is never used for a mutant.
std::string mutation_report_json(const Campaign& c);
// One JSON object per mutant: id, problem, file, operator, category, status, ptx_hash,
// equivalence_class, accepted (per checker), escapes (the checkers that accepted it, when
// killed), witness, replay, flaky, max_error_ratio (the largest of error_ratios).
std::string mutants_jsonl(const Campaign& c);
// A self-contained page (no network): escape table, survivors highlighted in each kernel's
// source, the set-cover curve against random suites as an inline SVG.
std::string html_report(const Campaign& c);

} // namespace kj::mutate
