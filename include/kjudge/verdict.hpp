// The verdict model of DESIGN.md: reasons with their class (FAIL is the candidate's fault, ERROR
// the problem's or kjudge's) and exit codes, findings per output and per case, and the verdict
// that aggregates them in canonical case order. Reporters only read these values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/error.hpp"

namespace kj {

enum class Reason {
  none,  // passed
  // FAIL, exit 1
  compile_error, launch_error, forbidden_construct,
  crash, timeout, oob_write, input_modified, unwritten_output,
  nonfinite, nondeterministic, stale_output, mismatch, impossible_speed,
  // ERROR
  spec_error,  // exit 2
  internal,    // exit 3
};

enum class Outcome { pass, fail, error, skip };

std::string_view reason_name(Reason r);
std::optional<Reason> parse_reason(std::string_view name);
Outcome reason_outcome(Reason r);          // none -> pass
std::string_view outcome_name(Outcome o);  // "PASS" "FAIL" "ERROR" "SKIP"
ExitCode reason_exit_code(Reason r);
// Rank for DESIGN.md's precedence when one case shows several reasons: lower wins.
// crash > timeout > oob_write > input_modified > unwritten_output > nonfinite >
// nondeterministic > mismatch; reasons outside that list rank by their enum order before them.
int reason_rank(Reason r);
// The reason of higher precedence.
Reason worse_reason(Reason a, Reason b);

// Percentiles of one error measure over a tensor.
struct Percentiles {
  double p50 = 0, p99 = 0, p999 = 0, max = 0;
};

struct ErrorStats {
  Percentiles abs;  // |c - e|
  Percentiles rel;  // |c - e| / max(|e|, floor); 0 where c == e; never inf
  Percentiles ulp;  // |c - e| in ulps of the output dtype at e
};

struct ElementReport {
  std::int64_t flat = 0;
  std::vector<std::int64_t> index;  // multi-dimensional
  double value = 0;                 // candidate
  double expected = 0;              // golden (rounded as compared) or reference
  double error = 0;
  double allowed = 0;               // the bound this element was held to (NaN if not elementwise)
};

// The bound a policy applied and where its numbers came from, for the reader of a verdict.
struct BoundReport {
  std::string policy;   // "relative(16)", "allclose(rtol=1.3e-06, atol=1e-05)"
  std::string expected; // "golden" | "reference"
  std::string source;   // "k=16 (f32 default) x max(max|ref-golden|=3.1e-7, floor=1.2e-7)"
  double max_bound = 0; // the max-error bound (relative), or NaN
  double rms_bound = 0; // the rms-error bound (relative), or NaN
  double max_error = 0; // what the candidate reached
  double rms_error = 0;
};

struct SliceFailure {
  std::int64_t slice = 0;   // index along the slice axis
  double max_error = 0, max_bound = 0, rms_error = 0, rms_bound = 0;
};

struct OutputFinding {
  std::string output;
  Reason reason = Reason::none;      // none, mismatch or nonfinite (or unwritten_output later)
  std::string message;               // one line, e.g. "3 of 4096 elements beyond the bound"
  std::int64_t count = 0;            // elements compared
  std::int64_t mismatches = 0;
  double mismatch_fraction = 0;
  std::vector<ElementReport> first;  // first mismatches in flat order (at most 10)
  std::optional<ElementReport> worst;
  ErrorStats stats;
  BoundReport bound;
  std::vector<SliceFailure> failed_slices;  // at most 10, worst first
  std::int64_t failed_slice_count = 0;
  // Reward-grade: log10 of (candidate error / bound), worse of max and rms; <= 0 passes.
  double log_error_ratio = 0;
  bool pass() const { return reason == Reason::none; }
};

struct CaseFinding {
  std::string case_id;     // <hash8>:<shape-set>:<seed>:<transform>
  std::string case_class;  // "public", "hidden", "perturbed", "special" (for redaction)
  bool hidden = false;
  Reason reason = Reason::none;
  std::string message;
  std::vector<OutputFinding> outputs;
  bool pass() const { return reason == Reason::none; }
};

// What the run was made with, written first in every JSON and JSON Lines report.
struct Manifest {
  std::string kjudge_version;
  std::string problem;
  std::string problem_hash;
  std::string candidate;
  std::string candidate_hash;
  std::string backend;   // "cuda" | "host" | "files"
  std::string trust;     // "device" | "host"
  std::string nvrtc_version, driver_version, gpu, clocks;  // empty where not applicable
};

struct Verdict {
  Outcome outcome = Outcome::pass;
  Reason reason = Reason::none;
  std::string message;                  // the first failing case's message, or the error
  std::optional<std::string> first_failing_case;
  std::string replay_command;           // reruns that case alone
  std::vector<CaseFinding> cases;       // canonical order
  std::int64_t cases_total = 0;
  std::int64_t cases_passed = 0;
  std::vector<std::string> skips;       // "SKIP(reason)" lines: checks that could not run
  Manifest manifest;
  bool compiled = true;                 // KernelBench field
  std::optional<double> runtime_ms;     // null until bench runs
  std::optional<double> ref_runtime_ms;

  // Fill outcome, reason, message and first_failing_case from the cases, in canonical order.
  void finalize();
  ExitCode exit_code() const;
  double fraction_passed() const;
};

}  // namespace kj
