// The verdict model of docs/design.md: reasons with their class (FAIL is the candidate's fault,
// ERROR the problem's or kjudge's) and exit codes, findings per output and per case, and the
// verdict that aggregates them in canonical case order. Reporters only read these values.
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
  precondition,  // the candidate's preconditions exclude a whole public or hidden shape set
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
// Rank for docs/design.md's precedence when one case shows several reasons: lower wins.
// crash > timeout > oob_write > input_modified > unwritten_output > nonfinite >
// nondeterministic > mismatch; reasons outside that list rank before them: internal, then
// spec_error (an ERROR is never reported as the candidate's FAIL), then the rest in enum order
// (compile_error, launch_error, forbidden_construct, stale_output, impossible_speed). none last.
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
  // Binned (relative, allclose, ulp, exact, unless exact ones were asked for): p50, p99 and
  // p99.9 are the lower edges of their bins in a 2^16-bin histogram of the values' top bits, at
  // most 1/16 below the exact value; max is exact. Otherwise all exact.
  bool binned = false;
  // False for a passing output judged without statistics (CompareRules::statistics): the
  // percentiles were not computed, and the JSON's "stats" is null.
  bool made = true;
};

struct ElementReport {
  std::int64_t flat = 0;
  std::vector<std::int64_t> index;  // multi-dimensional
  double value = 0;                 // candidate
  double expected = 0;              // golden (rounded as compared) or reference
  // error and allowed are in the unit the policy tests: absolute for relative, allclose, exact
  // and integer outputs; ulps for ulp(n); relative for ratio and the regions normal region
  // (absolute in its small-value and cancellation regions). allowed is the bound this element
  // was held to (for relative: its slice's max bound), NaN where the policy is not elementwise.
  double error = 0;
  double allowed = 0;
};

// The bound a policy applied and where its numbers came from, for the reader of a verdict.
struct BoundReport {
  std::string policy;   // "relative(16)", "allclose(rtol=1.3e-06, atol=1e-05)"
  std::string expected; // "golden" | "reference"
  std::string source;   // "k=16 (f32 default) x max(max|ref-golden|=3.1e-7, floor=1.2e-7)"
  // Bounds and what the candidate reached, in the policy's unit (whole tensor):
  //   relative   max|c-g| vs the max bound, rms|c-g| vs the rms bound
  //   allclose   max and rms of |c-e|; no single bound (NaN: elementwise atol + rtol*|e|)
  //   ulp        max and rms ulp distance; max_bound = n
  //   exact      max and rms of |c-e|; max_bound = 0
  //   ratio      max_bound = threshold, max_error = largest relative error; rms_* = NaN/rms
  //   regions    max_bound = 10*T vs MARE, rms_bound = T vs MERE (a mean, not an rms)
  //   metric     max_bound = the threshold, max_error = the metric's value
  //   integers   max and rms of |c-e|; max_bound = 0 (1 with ties = "off_by_one")
  double max_bound = 0;
  double rms_bound = 0;
  double max_error = 0;
  double rms_error = 0;
};

struct SliceFailure {
  std::int64_t slice = 0;   // index along the slice axis
  double max_error = 0, max_bound = 0, rms_error = 0, rms_bound = 0;
};

// One region of the `regions` policy's second phase (numerics.md, the CANN gate).
struct RegionCount {
  std::string region;                 // "normal" | "small" | "cancellation"
  std::int64_t elements = 0;          // candidate elements in the region
  std::int64_t errors = 0;            // of those, beyond the region's bound
  std::int64_t reference_errors = 0;  // the same count for the same-precision reference
  std::int64_t allowed = 0;           // most candidate errors the gate accepts
  bool pass() const { return errors <= allowed; }
};

struct OutputFinding {
  std::string output;
  Reason reason = Reason::none;      // none, mismatch or nonfinite (or unwritten_output later)
  std::string message;               // one line, e.g. "3 of 4096 elements beyond the bound"
  std::int64_t count = 0;            // elements compared
  // Elements failing: the non-finite rules plus the policy's elementwise test (elements beyond
  // relative's max bound, ratio's threshold, a region's bound in the gate's phase 2). Tensor-
  // level failures (relative's rms, a slice, a metric) can fail an output with none.
  std::int64_t mismatches = 0;
  double mismatch_fraction = 0;
  std::int64_t nonfinite = 0;        // of the mismatches, those failing as `nonfinite`
  std::int64_t excused = 0;          // elements the NaN rule exempted from any judgement
  // In a case with dtype-max or infinite inputs: non-finite candidate elements where the
  // precision overflows (the rounded golden is infinite, or finite while the same-precision
  // reference is not). Which Inf or NaN an overflow ends in depends on the order of the
  // operations; not judged, not a mismatch.
  std::int64_t overflows_excused = 0;
  std::vector<ElementReport> first;  // first mismatches in flat order (at most 10)
  std::optional<ElementReport> worst;
  ErrorStats stats;
  BoundReport bound;
  std::vector<SliceFailure> failed_slices;  // at most 10, worst first
  std::int64_t failed_slice_count = 0;
  std::vector<RegionCount> regions;         // `regions` policy, when its second phase ran
  // Reward-grade: log10 of (candidate error / bound), worse of max and rms (for relative: over
  // the whole tensor and every slice; elementwise policies: the worst element's error/allowed;
  // ratio: the first element beyond the allowed count; regions: phase 1's MERE/T and MARE/10T,
  // or phase 2's worst count/allowed; metrics: value/threshold, or (1 - value)/(1 - threshold)
  // for cosine and topk). Clamped to [-12, 12]: an error-free output gives -12, a non-finite
  // failure +12. Its sign is always the verdict's: <= 0 passes, > 0 fails.
  double log_error_ratio = 0;
  // Set where the case's same-precision reference cannot compute this output (its error over
  // the golden's scale past reference_ceiling, on a case of dtype-max or infinite inputs): why
  // the output cannot fail its case. Its reason and ratio stay as judged, for the record; the
  // case, the verdict and the worst ratio ignore them.
  std::string excused_by_reference;
  bool counts() const { return excused_by_reference.empty(); }
  bool pass() const { return reason == Reason::none; }
};

// A case's timed runs (`kjudge bench`), in milliseconds of the verdict's timer, one value per
// run, every run's outputs judged like the first run's. On the GPU (timer "cuda_events") the
// samples kept after the warm-up and the throttled ones, with what the loop measured beside.
struct CaseTiming {
  std::vector<double> candidate_ms, reference_ms;
  // GPU only (0 on the host backend):
  int throttled = 0;           // samples dropped: taken while the SM clock was throttled
  double sm_clock_mhz = 0;     // the median SM clock over the kept samples (clock probes)
  double noise = 0;            // the worse relative noise of the two medians (median_noise)
  bool converged = false;      // the noise target was met before the time cap
  // The bench stopped timing once the candidate's median passed kStopEarlyFactor times the
  // reference's (not_worth_timing): its time is the runs taken so far.
  bool stopped_early = false;
  int rotation = 0;            // input sets rotated, each regenerated between its visits
  double wall_s = 0;           // the loop's wall time, warm-up included
  // The physical floor, the larger of two: the mandatory bytes (each input read once, each
  // output written once, or the problem's floor_bytes) at the best bandwidth measured in the
  // same run; and the problem's floor_flops at the peak rate measured in the same run on the
  // fastest unit a kernel of the problem could use (peak_unit says which, or why none).
  double floor_bytes = 0;
  double bandwidth_gbs = 0;
  double floor_bytes_ms = 0;
  double floor_flops = 0;    // 0: no FLOP floor
  double peak_tflops = 0;
  double floor_flops_ms = 0;
  std::string peak_unit;
  double floor_ms = 0;
  // The baseline: the problem's timed one (its samples, taken on the same visits as the
  // candidate's), else its recorded one for this GPU model and shape set, when it has one.
  std::vector<double> baseline_samples_ms;  // empty for a recorded baseline
  std::optional<double> baseline_ms;
  std::string baseline;  // its name
  // `bench --against OLD.cu`: the old kernel's timed runs, taken beside the candidate's (on the
  // host one after each of the candidate's; on the GPU on the same visits, where the reference
  // is timed, its throttled rounds dropped with the others'); empty without --against.
  std::vector<double> against_ms;
};

// Statistics of a case's timed runs: the median, the quartiles (linear interpolation between
// ranks), the extremes and the number of runs; all 0 for none.
struct SampleStats {
  double median = 0, q1 = 0, q3 = 0, min = 0, max = 0;
  int samples = 0;
};
SampleStats sample_stats(std::vector<double> values);
// The relative noise of a median: its standard error, estimated from the quartiles as for a
// normal sample (sigma = IQR / 1.349, se = 1.2533 sigma / sqrt(n)), over the median. Infinity
// with fewer than 4 samples or a median of 0.
double median_noise(const SampleStats& s);

// A latency distribution, as a canary reads one: the nearest-rank percentiles (the sample at
// rank ceil(q n), counted from 1) p50, p90 and p99, the largest sample and the sample count;
// all 0 for none.
struct LatencyDistribution {
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
  int n = 0;
};

// `kjudge bench`: the latencies of every timed run of every timed case, pooled (the traffic a
// canary sees), of the candidate and, with --against, of the old kernel; and with --slo-p99 the
// candidate's p99 held to it (a miss fails the bench: FAIL(timeout)).
struct Latency {
  LatencyDistribution candidate;
  std::optional<LatencyDistribution> against;
  std::optional<double> slo_p99_ms;
  bool slo_met() const { return !slo_p99_ms || candidate.p99 <= *slo_p99_ms; }
};

// A candidate this much slower than the reference is not timed further: the figure would not
// change a ranking, and a stalling candidate would cost minutes of the machine.
inline constexpr double kStopEarlyFactor = 50;
// Whether the candidate's runs so far put its median over kStopEarlyFactor times the
// reference's (false for no runs).
bool not_worth_timing(const std::vector<double>& candidate_ms,
                      const std::vector<double>& reference_ms);

// What one launch of the candidate's plan holds on the GPU (the bench's first timed case).
struct LaunchResources {
  std::string launch;           // "launch[0] 'vector_add'"
  int registers = 0;            // per thread
  int static_shared = 0, dynamic_shared = 0;  // bytes per block
  int local_bytes = 0;          // per thread: spills and local arrays
  int block_threads = 0;
  int blocks_per_sm = 0;        // resident at once (cuOccupancyMaxActiveBlocksPerMultiprocessor)
  double occupancy = 0;         // theoretical: those blocks' threads over the SM's maximum
  // The theoretical occupancy times how full the grid's waves keep the SMs' block slots (a grid
  // of 1.1 waves leaves most slots idle in its second): an upper bound of the achieved
  // occupancy, which only the profiler's counters measure.
  double grid_occupancy = 0;
};

struct CaseFinding {
  std::string case_id;     // <hash8>:<shape-set>:<seed>:<transform>
  std::string case_class;  // "public", "hidden", "perturbed", "special" (for redaction)
  // The set it was drawn from ("public1", "host0~C=33"); a hidden one's may carry its dims,
  // so no report shows it.
  std::string shape_set;
  bool hidden = false;
  Reason reason = Reason::none;
  std::string message;
  std::vector<OutputFinding> outputs;
  std::optional<CaseTiming> timing;  // timed cases of a bench
  // Not run: its shapes do not meet a precondition the candidate declared (`requires`). It
  // counts as not passed but never decides the verdict's reason.
  bool excluded = false;
  bool pass() const { return reason == Reason::none && !excluded; }
  // The case's reason is the worst of its own and its counting outputs'; when an output makes it
  // worse, the message becomes that output's, so the message always explains the reason.
  void take_worst_output_reason();
};

// What the run was made with, written first in every JSON and JSON Lines report.
struct Manifest {
  std::string kjudge_version;
  std::string problem;
  std::string problem_hash;
  std::string candidate;
  std::string candidate_hash;
  std::string backend;   // "cuda" | "host" | "files"
  std::string trust;     // "cuda" | "host": whose observation the verdict is (a GPU's, or
                         // the CPU emulation's)
  std::string nvrtc_version, driver_version, gpu, clocks;  // empty where not applicable
  int device = -1; // the CUDA ordinal that judged (serve --devices); -1 on the host
  // The cases run where they are fewer than the plan's (the host backend's budget), in words;
  // empty when every planned case ran.
  std::string case_budget;
  // The oracle's case cache (serve's, CheckOptions::case_cache) in this run: cases found in
  // memory, made afresh, and found on disk (CheckOptions::case_cache_dir); cases written to
  // disk, entries found corrupt (removed, the case made afresh) and entries declined (reading
  // them was slower than making the case: removed, not stored again).
  std::uint64_t case_cache_hits = 0, case_cache_misses = 0;
  std::uint64_t case_cache_disk_hits = 0;
  std::uint64_t case_cache_disk_stored = 0, case_cache_disk_corrupt = 0;
  std::uint64_t case_cache_disk_declined = 0;
};

// One tensor of the problem and its dtype ("f32", "bf16", ...), as problem.toml declares it.
struct TensorDtype {
  std::string name, dtype;
};

// Where a verdict's figures come from, beyond the manifest's facts (docs/cli.md "JSON reports",
// `provenance`): the problem's dtypes, the NVIDIA driver's release, and the SM clock the times
// were taken at. What each figure's statistic and aggregation are is fixed by the code that
// computes it; the JSON reporter states them beside the timer.
struct Provenance {
  std::vector<TensorDtype> inputs, outputs;  // in declaration order
  // The kernel module's version ("580.65.06", from /proc/driver/nvidia/version) on the CUDA
  // backend; empty elsewhere or where the file cannot be read. (The manifest's driver_version
  // is the CUDA version the driver implements, cuDriverGetVersion.)
  std::string driver_release;
  // "measured": the median over the timed cases of each case's median clock-probe reading over
  // its kept samples (GPU bench); "rated": the device's rated SM clock (CUDA without a bench);
  // "": none (the host backend).
  double sm_clock_mhz = 0;
  std::string sm_clock_source;
};

// Host backend: how much of the candidate and of the problem's scale its runs reached. Which
// lines of the candidate's source ran (the compiler's coverage instrumentation), and how large
// its cases were against the problem's own public and hidden shapes, which the host's smaller
// ones stand in for. A passing host verdict is weaker by both: its `confidence` is the fraction
// of lines that ran times `scale_reached`, so a kernel wrong only at the problem's sizes never
// passes on the host with confidence 1.
struct LinesRun {
  bool measured = false;
  std::string not_measured;               // why, when not measured
  std::size_t lines = 0;                  // lines of the candidate's file with code
  std::vector<unsigned> unrun;            // of them, those no run reached (ascending)
  std::vector<std::string> added_cases;   // larger cases run to reach them
  std::string stopped;                    // why no more were added while lines stayed unrun
  // log(the largest case run's work) / log(the largest public or hidden case's work), at most 1
  // (a case's work: the product of its dims, at least its largest tensor's elements).
  double scale_reached = 1.0;
  double confidence() const {
    const double lines_share = !measured || lines == 0
                                   ? 1.0
                                   : static_cast<double>(lines - unrun.size()) /
                                         static_cast<double>(lines);
    return lines_share * scale_reached;
  }
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
  std::int64_t cases_excluded = 0;      // by the candidate's preconditions (`requires`)
  std::vector<std::string> preconditions; // the candidate's `requires`, as the problem writes them
  std::vector<std::string> skips;       // "SKIP(reason)" lines: checks that could not run
  std::optional<LinesRun> lines_run;    // host backend, on a check whose cases all passed
  // Defences a test switch turned off (KJ_TEST_DISABLE with --unsafe-test-switches): a verdict
  // with any is no judgement of the candidate.
  std::vector<std::string> defences_disabled;
  // A policy looser than the problem's card records, judged under --allow-loosen: the card's
  // refusal ("" when the card agrees). A score made so must not pass for one the card allows.
  std::string loosened_card;
  Manifest manifest;
  bool compiled = true;                 // KernelBench field
  std::optional<double> runtime_ms;     // null until bench runs
  std::optional<double> ref_runtime_ms;
  // What runtime_ms measures: "" (not measured), "host_cpu" (CPU time of the host backend's
  // launches, summed over the CPU threads that ran blocks: not a GPU time), "cuda_events" (GPU
  // time of the launch plan between two events, after an L2 flush).
  std::string timer;
  // GPU bench: the speedup's 95% confidence interval (from the medians' noise), the candidate's
  // time over the physical floor's (1 = at the floor), the plan's resources, and the memory
  // the candidate's and the reference's runs hold (inputs, outputs, scratch).
  std::optional<double> speedup_low, speedup_high;
  std::optional<double> fraction_of_floor;
  // The problem's baseline, summed over the timed cases like runtime_ms (null unless every
  // timed case has one), and its name: timed in this run (baseline_timed), or recorded for this
  // GPU model.
  std::optional<double> baseline_runtime_ms;
  std::string baseline;
  bool baseline_timed = false;
  std::vector<LaunchResources> resources;
  std::optional<std::uint64_t> memory_bytes, ref_memory_bytes;
  Provenance provenance;
  // Bench: the pooled latency distributions and the SLO (null until bench times a case).
  std::optional<Latency> latency;
  // What judging cost: the check's wall time in kjudge, and the candidate's own runs in it
  // (CUDA: from their launches to their end, in the worker; host: their CPU time), summed;
  // of the wall time, the candidate's start (compile or compile cache, worker, module load) and
  // bench's timing of the public cases. The rest is the check: oracle and cases.
  struct JudgeTime {
    double wall_ms = 0, candidate_ms = 0, start_ms = 0, timing_ms = 0;
  } judge_time;

  // Fill outcome, reason, message and first_failing_case from the cases, in canonical order.
  void finalize();
  ExitCode exit_code() const;
  double fraction_passed() const;
};

}  // namespace kj
