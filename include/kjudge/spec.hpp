// The problem and candidate formats of docs/design.md as C++ values. load_problem reads a problem
// folder (problem.toml + reference source), load_candidate a candidate .cu with its launch plan
// in the leading `/* kjudge ... */` comment. Both check everything that can be checked without
// a compiler and throw SpecError naming file, field and position on the first mistake.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kjudge/error.hpp"
#include "kjudge/expr.hpp"
#include "kjudge/tensor.hpp"

namespace kj {

enum class Tier { exact, tolerance, approximate };
// What special-value cases demand of NaN (docs/design.md "Comparison").
enum class NanRule { propagate, ignore, exempt };
// Which value a policy compares against.
enum class Expected { golden, reference };
// Where an input's values may lie; a transform that leaves it is skipped.
enum class Domain { any, positive, nonnegative, unit };

std::string_view tier_name(Tier);
std::string_view nan_rule_name(NanRule);
std::string_view expected_name(Expected);
std::string_view domain_name(Domain);
// The inverses, as spelled in problem.toml; nullopt for an unknown word.
std::optional<Tier> parse_tier(std::string_view);
std::optional<NanRule> parse_nan_rule(std::string_view);
std::optional<Expected> parse_expected(std::string_view);
std::optional<Domain> parse_domain(std::string_view);

struct Distribution {
  enum class Kind { normal, uniform, integer, bernoulli, pareto, constant, arange, file };
  Kind kind = Kind::normal;
  double a = 0, b = 1;  // normal(mean, std), uniform(lo, hi), int(lo, hi) inclusive,
                        // bernoulli(p) in a, pareto(alpha) in a, const(v) in a
  std::string file;     // file("x.npy"), resolved against the problem folder
  std::string text;     // as written, for messages
};
std::string_view distribution_kind_name(Distribution::Kind);  // "normal", "int", "const", ...
// Parse "normal(0, 1)", "uniform(-1, 1)", "int(0, 9)", "bernoulli(0.5)", "pareto(3)",
// "const(2.5)", "arange", "file(\"x.npy\")".
Distribution parse_distribution(std::string_view text, const Location& where);

struct PolicySpec {
  enum class Kind { relative, allclose, ulp, exact, ratio, regions, metric };
  Kind kind = Kind::relative;
  Expected expected = Expected::golden;
  std::optional<double> k;            // relative: nullopt = the dtype's default
  std::optional<double> rtol, atol;   // allclose: nullopt = torch default for the dtype
  double ulps = 0;                    // ulp(n)
  double threshold = 0;               // ratio: per-element relative error threshold
  double max_fraction = 0;            // ratio: largest fraction of elements above it
  std::string metric;                 // approximate tier: "rel_l2" | "cosine" | "topk"
  double metric_threshold = 0;        // metric bound (rel_l2 <=, cosine >=, topk agreement >=)
  std::int64_t topk = 0;              // k of the topk metric
  std::string text;                   // as written
};
// "relative", "allclose", ...; for Kind::metric, "metric" (the metric's own name is in `metric`).
std::string_view policy_kind_name(PolicySpec::Kind);
// Parse the string form: "relative", "relative(8)", "allclose", "allclose(1e-3, 1e-5)",
// "ulp(2)", "exact", "ratio(1e-3, 0.001)", "regions", "rel_l2(1e-3)", "cosine(0.999)",
// "topk(5, 0.99)".
PolicySpec parse_policy(std::string_view text, const Location& where);

struct InputSpec {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  Distribution dist;  // default: normal(0, 1) for floats, bernoulli(0.5) for bool, else int(0, 9)
  Domain domain = Domain::any;
  // The special values this input's special-value cases may plant (names of
  // special_kind_name: nan, pos_inf, neg_inf, neg_zero, subnormal, dtype_max); empty = every
  // one the domain and dtype admit. A problem leaves out dtype_max where every implementation
  // at its precision overflows in an order-dependent way (a dot product of dtype-max values).
  std::vector<std::string> specials;
  bool specials_given = false;
  Location where;
};

// The names `specials` may hold, in the order special-value cases are made.
inline constexpr std::string_view kSpecialNames[] = {"nan",      "pos_inf",   "neg_inf",
                                                     "neg_zero", "subnormal", "dtype_max"};

struct ScalarSpec {
  std::string name;
  DType dtype;
  std::string value;   // as written; integer scalars are also visible to expressions
  double as_double = 0;
  std::int64_t as_int = 0;  // valid for integer dtypes
  Location where;
};

// How a tensor starts a run: poisoned (every element must be written), zeroed, or (outputs only)
// drawn from a distribution like an input: an in-out tensor the kernel reads and updates
// (a gradient it accumulates into), which the golden and the reference start from too.
enum class InitRule { poison, zero, drawn };
std::string_view init_rule_name(InitRule);             // "poison" | "zero" | "drawn"
// "poison" or "zero"; a distribution (InitRule::drawn) is parsed by its own rule.
std::optional<InitRule> parse_init_rule(std::string_view);

struct OutputSpec {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  // Default: "exact" in tier exact and for integer dtypes, "relative" otherwise (tier
  // approximate has no default for floats). `expected` defaults to "reference" for allclose
  // and exact, "golden" for the others. In TOML also an inline table: { kind = "allclose",
  // rtol = 1e-5, atol = 1e-8, expected = "golden" }, keys k | rtol, atol | n | threshold,
  // max_fraction (ratio) | threshold (rel_l2, cosine) | k, threshold (topk).
  PolicySpec policy;
  std::optional<int> slice;  // axis judged slice by slice by `relative`
  // `init = "poison" | "zero" | <distribution>`: a distribution ("normal(0, 1)", not file())
  // makes the output an in-out tensor whose initial values are `initial`'s.
  InitRule init = InitRule::poison;
  Distribution initial;
  std::optional<std::string> ties;  // integer outputs of float computations
  Location where;
};

struct ScratchSpec {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  InitRule init = InitRule::poison;
  std::string stage;                // the problem's stage this buffer holds (`kjudge localize`)
  Location where;
};

// A named intermediate of a multi-stage problem (`[[stage]]`, docs/localize.md): a tensor the
// reference's launches write and later ones read, stored in `dtype` (its interface dtype) by the
// reference and in f64 by the golden. `kjudge localize` splits the chain at it.
struct StageSpec {
  std::string name;
  DType dtype;
  std::vector<Expr> shape;
  Location where;
};

struct LaunchSpec {
  std::string kernel;               // "softmax_rows<4>": name plus template arguments
  std::vector<Expr> grid;           // 1-3 dims
  std::vector<Expr> block;          // 1-3 dims
  Expr shared;                      // dynamic shared memory, bytes
  std::vector<Expr> cluster;        // empty = no cluster
  bool cooperative = false;
  std::vector<std::string> args;    // tensor, scalar or dim names, or integer expressions
  // Parallel to `args`: the parsed expression of an integer argument (a dim name counts as
  // one), nullopt where the argument names a tensor or a scalar (passed with its own dtype).
  std::vector<std::optional<Expr>> arg_exprs;
  std::optional<Expr> repeat;       // count; `i` is visible to the other fields
  std::string stage;                // the stage complete once this launch ends; "" for none
  Location where;
  // The kernel name without template arguments ("softmax_rows").
  std::string kernel_base_name() const;
};

// A precondition a problem lets candidates declare (`may_require`) and a candidate declares
// (`requires`): an integer expression of the dims and integer scalars that must be non-zero
// ("C % 8 == 0"), or aligned(tensor, N), the tensor's first byte on an N-byte boundary. kjudge
// starts every tensor on a 256-byte boundary on both backends, so aligned() with N <= 256 (a
// power of two) always holds; a larger N is refused at load.
struct Precondition {
  std::string text;         // as written
  std::optional<Expr> expr; // none for aligned()
  std::string tensor;       // aligned(tensor, N)
  std::int64_t alignment = 0;
  Location where;
  // Whether a shape set's Env meets it; throws SpecError as Expr::eval does.
  bool holds(const Env& env) const;
  // The text without blanks: how a candidate's `requires` entry is matched to `may_require`.
  std::string normalized() const;
};
// Parse one precondition; `names` are the integer names it may use, `tensors` the tensors.
Precondition parse_precondition(std::string_view text, const Location& where,
                                const std::set<std::string, std::less<>>& names,
                                const std::set<std::string, std::less<>>& tensors);

struct KernelSource {
  std::filesystem::path path;
  std::string text;
  std::vector<LaunchSpec> launches;
};

// One shape set: values for every dim.
struct DimSet {
  Env values;
  Location where;
};

// Hidden shapes drawn from ranges at run time (`[dims] hidden_ranges = [{ R = [1, 64], C = 4096 }]`):
// each dim an inclusive range or one value. Drawn with a secret (cases.hpp), so reading
// problem.toml tells a candidate's author the ranges but not the shapes.
struct DimRange {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> bounds;  // dim -> [lo, hi]
  Location where;
};

inline constexpr int kMaxHiddenDraws = 16;

struct DimsSpec {
  std::vector<DimSet> public_sets;
  std::vector<DimSet> hidden_sets;
  std::vector<DimRange> hidden_ranges;
  int hidden_draws = 2;  // shape sets drawn from each range (`[dims] hidden_draws`)
  // Smaller public shapes for the host backend (`[dims] host = [...]`), which runs kernels on
  // the CPU; empty: the host backend uses the public sets.
  std::vector<DimSet> host_sets;
  std::vector<std::string> vary;
  std::vector<Expr> constraints;  // each must evaluate non-zero
};

// `[[baseline]]`: a time recorded for a trusted implementation (cuBLAS, a vendor library) on a
// GPU model and one public shape set, which `kjudge bench` reports the candidate against when it
// runs on that model.
struct RecordedBaseline {
  std::string name;  // what was timed: "cuBLAS 12.8 cublasSgemm"
  std::string gpu;   // the device's name as the manifest gives it: "NVIDIA H200"
  Env dims;          // exactly one public shape set's dims
  double ms = 0;     // the median, with an L2 flush before each sample
  Location where;
};

// A `[[baseline]]` that `kjudge bench` times on the GPU in the same run as the candidate and
// the reference, on the same inputs (each visit's), with the same L2 flush: either a launch
// plan of its own (`source` and `[[baseline.launch]]`, trusted like the reference) or a trusted
// built-in: "cublas:gemm" (row-major C[m, n] = A[m, k] B[k, n]) or "cublas:gemv" (y[m] =
// A[m, n] x[n]), on the tensors its `args` name, in their dtypes (f32 or f64 throughout, or f16
// or bf16 operands with an output of the same dtype or f32; f32 accumulation).
// A built-in baseline as the row-major GEMM cuBLAS runs, C[m, n] = A[m, k] B[k, n], on one
// shape set. gemv's y[m] = a[m, n] x[n] is the product of a with x as an n x 1 matrix: the
// GEMM's n is 1 and its k is gemv's n.
struct GemmCall {
  std::array<std::string, 3> roles;    // A's, B's and C's roles as `args` names them
  std::array<std::string, 3> tensors;  // the problem's tensors in those roles
  std::int64_t m = 0, n = 0, k = 0;
};

struct TimedBaseline {
  std::string name;                      // "cuBLAS GEMM"
  std::optional<KernelSource> plan;      // a launch plan; else the built-in
  std::string builtin;                   // "cublas:gemm" | "cublas:gemv"
  // The built-in's operands: role -> tensor name ("a", "b", "c" | "a", "x", "y") and its sizes:
  // role -> expression of the dims ("m", "n", "k" | "m", "n").
  std::map<std::string, std::string> tensors;
  std::map<std::string, Expr> sizes;
  Location where;

  // The tensor a built-in writes (its c or y).
  const std::string& output_tensor() const;
  // The built-in as a GEMM on a shape set's dims. Throws ExprError as Expr::eval does.
  GemmCall gemm_call(const Env& dims) const;
};

// A [[case]] a problem adopts beyond its default plan (`kjudge mutate --emit-cases` writes
// them): seed `seed` of the first public shape set, input `input` times `scale` plus `offset`
// (no transform without an input). Appended after the special-value cases.
struct AdoptedCase {
  std::uint64_t seed = 0;
  std::string input;
  double scale = 1, offset = 0;
  Location where;
};

// `[score]`: the benchmark's own scoring formula, so `kjudge localize --price` prices a fix by
// it. Per case, pass is 1 or 0 and score is `per_case`'s figure; gain and cost are formulas of the
// real dialect (Expr::parse_real) over N (the cases) and sum() of old_pass, new_pass, old_score
// and new_score; the fix is worth building when gain > cost.
struct ScoreFormula {
  std::string per_case; // "speedup": reference time / candidate time on a timed case, else 0
  Expr gain, cost;
  Location where;
};
inline constexpr const char* kScoreCaseNames[] = {"old_pass", "new_pass", "old_score", "new_score"};

struct Problem {
  std::filesystem::path dir;
  std::string name;
  std::string summary;
  Tier tier = Tier::tolerance;
  NanRule nan = NanRule::exempt;
  bool signed_zero_strict = false;
  bool allow_nondeterministic = false;
  std::optional<Expr> floor_bytes;
  std::optional<Expr> floor_flops;
  // The most bytes a candidate's run may hold (inputs, outputs and declared scratch) on a shape
  // set; beyond it the plan is a launch_error.
  std::optional<Expr> memory_limit;
  DimsSpec dims;
  std::vector<InputSpec> inputs;
  std::vector<ScalarSpec> scalars;
  std::vector<OutputSpec> outputs;
  std::vector<StageSpec> stages;  // in the order the reference completes them
  std::optional<ScoreFormula> score;
  KernelSource reference;
  std::optional<KernelSource> golden;      // [golden] plan where the template trick does not fit
  std::vector<std::string> allowed_options;
  // Candidate files (relative to the problem's folder) that a weaker algorithm than the
  // problem asks for (Kahan removed, ...) must not pass: `kjudge audit` runs each on every case
  // until one rejects it, else `downgrade undetectable`. Audit-only: not part of the hash.
  std::vector<std::string> downgrades;
  std::vector<std::string> forbid;
  std::vector<Precondition> may_require;  // what candidates may declare in `requires`
  std::vector<RecordedBaseline> baselines;
  std::optional<TimedBaseline> timed_baseline;  // at most one
  std::vector<AdoptedCase> adopted_cases;
  std::string hash;  // hex SHA-256 of problem.toml and every file it names
  // hash.substr(0, 8), the prefix of every case id.
  std::string short_hash() const { return hash.substr(0, 8); }

  const InputSpec* find_input(std::string_view name) const;
  const OutputSpec* find_output(std::string_view name) const;
  const ScalarSpec* find_scalar(std::string_view name) const;
  const StageSpec* find_stage(std::string_view name) const;
  // The recorded baseline for this GPU model and shape set's dims; null when none is.
  const RecordedBaseline* find_baseline(std::string_view gpu, const Env& set_dims) const;
};

// The reference's float role T: the dtype of the first float input (else of the first float
// output; f32 when the problem has no float tensor).
DType problem_float_dtype(const Problem& problem);

// Read and check a problem folder (or a path to its problem.toml).
Problem load_problem(const std::filesystem::path& dir_or_toml);

// Reads a file a problem names (reference and golden sources, file() distributions) given its
// path resolved against the problem folder; nullopt when it cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::filesystem::path&)>;
// load_problem over a problem.toml already in memory (for `kjudge serve`, export round trips
// and the fuzzer): `toml_name` stands for its path in messages, `dir` is the folder the files it
// names are resolved against, and `read` (default: from disk) reads those files.
Problem parse_problem_text(std::string toml_text, const std::filesystem::path& dir,
                           const std::string& toml_name, const FileReader& read = {});

// The front-matter is the first block comment whose text starts with the word `kjudge`
// ("/* kjudge", "/*kjudge" or "/*" then "kjudge" on the next line). Blank lines, other comments
// and preprocessor lines may precede it; code may not, and a second such comment is an error.
// Its TOML keys: [[launch]] (the fields of a reference launch), [[scratch]] (name, dtype, shape,
// init = "poison" | "zero") and options = [...] (each in Problem::allowed_options); an [outputs]
// table is refused (what the problem decides is not the candidate's to change). Every error names
// a line of the .cu file. Its
// expressions are evaluated on the public shape sets only, so no message reveals a hidden one.
struct Candidate {
  std::filesystem::path path;
  KernelSource source;                 // text and launches
  std::vector<ScratchSpec> scratch;
  std::vector<std::string> options;    // checked against Problem::allowed_options
  // Each one of Problem::may_require (as the problem writes it): cases whose shapes do not meet
  // one are not run and count as not passed (docs/design.md "Preconditions").
  std::vector<Precondition> requirements;  // `requires = [...]` in the front-matter
};

// The most bytes a candidate's source may have: a larger one is its FAIL(compile_error) before
// anything runs (kj::check), never a message too large for the worker's protocol (64 MiB) and
// so the judge's ERROR. Generated kernels are a few KiB; the largest bundled one is under 20.
inline constexpr std::size_t kMaxCandidateBytes = 8u << 20;

// Read a candidate file and check its front-matter against the problem.
Candidate load_candidate(const std::filesystem::path& file, const Problem& problem);

// The name a source file has inside generated code and the compilers' messages (NVRTC's program
// name, the PTX's .file, the host build's #line): its bytes, each quote, backslash and control
// character made '_', so no file name can break out of a string literal ("quo\"te.cu").
std::string code_name(std::string_view file_name);
// The same from text (for `kjudge serve` and tests); `name` stands for the path in messages.
Candidate parse_candidate(std::string source, const std::string& name, const Problem& problem);

// The Env of a shape set: dims plus integer scalars.
Env shape_env(const Problem& problem, const Env& dims);
// Concrete shape of a tensor for a dim set; throws SpecError on overflow.
Shape eval_shape(const std::vector<Expr>& shape, const Env& env);
// The same with the tensor's name and place for messages: "shape of 'x' overflows 64 bits", a
// negative dim, or an expression's own error.
Shape eval_shape(const std::vector<Expr>& shape, const Env& env, std::string_view tensor,
                 const Location& where);

// A problem serialised back to TOML, hidden shapes left out (`kjudge export`).
std::string export_problem_toml(const Problem& problem);

}  // namespace kj
