// `kjudge check`: the verdict of a candidate against a problem over every case. The oracle (this
// process) holds the master inputs, the golden (the reference template in double), the
// same-precision reference and the comparator; the candidate runs in a worker process started
// with posix_spawn (`kjudge --worker`), which holds only copies of the inputs, its outputs,
// scratch and red zones, and hands its buffers back by CUDA IPC handle (on the host backend:
// `kjudge --worker --host`, under seccomp, on a shared arena the oracle fills). The oracle checks
// red zones, poison and input copies itself and trusts nothing the worker reports.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

#include "kjudge/cases.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/verdict.hpp"

namespace kj {

// The default cap of a candidate's compile: 4 GiB of address space, several times what NVRTC
// takes for a kernel that includes CUB.
inline constexpr std::uint64_t kCompileMemoryCapBytes = std::uint64_t{4} << 30;

// Where candidates run: on the GPU (CUDA), on the CPU (the host backend of docs/design.md
// "Backends"), or on the GPU when one is usable and on the host otherwise.
enum class Backend { automatic, cuda, host };
std::string_view backend_name(Backend b);           // "auto", "cuda", "host"
std::optional<Backend> parse_backend(std::string_view name);
// The backend "auto", "cuda" or "host" (anything else: auto) comes to on this machine: auto is
// the GPU when one is usable, else the host. Throws std::runtime_error("<who>: no usable GPU
// for --backend cuda: <why>") when cuda is asked for and no GPU is usable.
Backend machine_backend(std::string_view name, std::string_view who);

// The oracle's cases kept between checks of one judge (src/judge/case_cache.hpp): each case's
// inputs, golden and reference made once per problem, backend and case.
class CaseCache;
struct CaseCacheStats {
  std::uint64_t hits = 0, misses = 0, entries = 0, bytes = 0;
};
// A cache that holds at most `max_bytes` of host and device memory.
std::shared_ptr<CaseCache> make_case_cache(std::uint64_t max_bytes);
CaseCacheStats case_cache_stats(const CaseCache& cache);

// Worker processes started ahead of need (src/worker/spare_workers.hpp): a long-lived judge
// gives each check a worker already past its process start and CUDA context, and starts the next
// one while the check runs. A worker serves one check only.
class SpareWorkers;
struct SpareWorkerStats {
  std::uint64_t taken_ready = 0, started_on_demand = 0;
};
std::shared_ptr<SpareWorkers> make_spare_workers();
SpareWorkerStats spare_worker_stats(const SpareWorkers& spares);

// One CUDA worker handed from a candidate's runner to the next (src/worker/spare_workers.hpp),
// for kjudge's own kernels only (a mutation campaign's mutants: never an untrusted candidate,
// whose state would reach the next): the next runner loads its module into the worker instead
// of starting a process and a context. A worker that crashed, timed out or hit a sticky CUDA
// error is never kept.
class KeptWorker;
std::shared_ptr<KeptWorker> make_kept_worker();
std::uint64_t kept_worker_reuses(const KeptWorker& kept); // loads into a kept worker so far

// The GPU bench's timing loop (src/judge/cuda/timing_loop.hpp): per timed case, a time-based
// warm-up, then rounds of samples until both medians (candidate and reference) are steady, with
// every sample's outputs judged. The defaults are nvbench's stopping rule.
struct TimingOptions {
  double warmup_s = 0.2;     // busy GPU before samples count (an idle GPU answers slowly),
                             // counted from the check's start: its runs keep the GPU busy
  double min_time_s = 0.5;   // then at least this long and min_samples samples
  int min_samples = 10;
  double noise = 0.005;      // until both medians' relative noise (median_noise) is under this
  double max_time_s = 15;    // or this long has passed: the verdict says it did not converge
  int rotation = 8;          // input sets rotated, each regenerated between its visits
};

inline constexpr double kCudaTimeBudgetS = 10;
inline constexpr double kHostTimeBudgetS = 120;

// Judges sharing one device (serve's and run's --jobs): checks run side by side and a bench's
// timing alone, so no neighbour's kernels land in its timings. A waiting bench keeps new checks
// out (the gate), or a steady stream of checks could hold the device from it for good.
class DeviceTurn {
public:
  std::shared_lock<std::shared_mutex> beside() {
    { const std::lock_guard<std::mutex> wait_behind_a_bench(gate_); }
    return std::shared_lock<std::shared_mutex>(turn_);
  }
  std::unique_lock<std::shared_mutex> alone() {
    const std::lock_guard<std::mutex> first_in_line(gate_);
    return std::unique_lock<std::shared_mutex>(turn_);
  }

private:
  std::mutex gate_;
  std::shared_mutex turn_;
};

struct CheckOptions {
  CaseOptions cases;
  // Why the problem's card refuses its policy, when `--allow-loosen` judged it anyway ("" when
  // the card does not refuse it): the verdict carries it (Verdict::loosened_card).
  std::string loosened_card;
  Backend backend = Backend::automatic;
  // Host backend: races found by the checked build's shadow memory are `nondeterministic`
  // (screened on a few small cases); off, candidates run uninstrumented and faster.
  bool race_detection = true;
  // Host backend: every run in the checked build, so every out-of-bounds access, read or write,
  // is found exactly (which buffer, how far, which line and thread), and races on every case.
  bool exact_bounds = false;
  // Exact error percentiles (a selection over every judged element) instead of the binned ones
  // (compare.hpp's CompareInputs::exact_percentiles).
  bool exact_percentiles = false;
  // Error percentiles of passing outputs too (`--stats`); a failing output always has them.
  bool statistics = false;
  // CUDA: a case whose two runs left the same bytes is judged by the GPU comparator, where the
  // outputs lie (the host comparator's finding, bit for bit, without copying them back); false
  // judges every case on the host (the comparator's own test, or a suspicion of it).
  bool gpu_comparator = true;
  // Cases kept from earlier checks (null: none). Not used by timed runs (the reference's times
  // are measured afresh) nor under the isolation test switch.
  std::shared_ptr<CaseCache> case_cache;
  // The on-disk tier behind it (src/judge/case_disk_cache.hpp), shared between processes: the
  // folder (empty: none) and its size cap, least recently used entries evicted first. Used
  // where case_cache may be; never holds hidden cases drawn with a secret.
  std::filesystem::path case_cache_dir;
  std::uint64_t case_cache_dir_bytes = std::uint64_t{4} << 30;
  // Workers started ahead of need (null: each started when needed): the compile-only worker,
  // and the CUDA worker.
  std::shared_ptr<SpareWorkers> spare_workers;
  // The worker a runner leaves behind for the next (null: none kept); see KeptWorker.
  std::shared_ptr<KeptWorker> kept_worker;
  // Bench (host backend): after a public case's two runs pass, this many more runs of the
  // candidate and of the reference, timed; every timed output is judged too (stale_output).
  int timed_runs = 0;
  // Bench (CUDA): once every case passed, the timing loop on the first case of each public
  // shape set (src/judge/cuda/timing_loop.hpp); the verdict gets runtimes, floor and resources.
  std::optional<TimingOptions> gpu_timing;
  // Judges sharing the device (null: none): the check holds its turn beside the others, a CUDA
  // bench's timing loop alone, and a host bench (whose timed runs are in its cases) all of it.
  DeviceTurn* device_turn = nullptr;
  bool fail_fast = false;                   // stop at the first failing case
  std::optional<std::string> only_case;     // --case ID
  std::optional<std::filesystem::path> against;  // --against OLD.cu: exact tier vs an old kernel
  int device = 0;
  std::filesystem::path cache_dir;          // NVRTC cache; empty = none
  std::filesystem::path self_exe;           // the kjudge executable, spawned as the worker
  std::filesystem::path kjudge_include;     // folder holding kjudge/device.cuh; empty = found
                                            // by find_kjudge_include(self_exe)
  double deadline_factor = 20;              // per run: max(factor x reference time, min)
  double deadline_min_s = 1;                //   plus the copies' allowance (run_deadline_s)
  double compile_deadline_s = 300;          // a candidate's NVRTC compile in its own process
  std::uint64_t compile_memory_cap = kCompileMemoryCapBytes; // that process's address space
  double startup_deadline_s = 60;           // a worker's start (process, driver, context)
  // The candidate's run time a check may spend over all its cases (GPU time of its launches;
  // on the host backend, the worker's CPU time, read from outside), so a slow or stalling
  // candidate costs a bounded time whatever the machine's load. Past it the cases not run are
  // FAIL(timeout) and named. 0: no budget; none: the backend's default (a hundred times what a
  // bundled solution's check spends on the GPU; the CPU emulates, so far more on the host).
  std::optional<double> time_budget_s;
  std::function<void(const CaseFinding&)> on_case;  // called as each case finishes
};

// Judge a candidate. Everything ends in the verdict, nothing is thrown: the candidate's faults
// are FAIL(reason) (compile_error and launch_error found before any case leave `cases` empty;
// compile_error sets compiled = false), the problem's are ERROR(spec_error) (a reference that
// does not compile or fails on a case, a --case id not in the plan, a broken --against kernel),
// kjudge's are ERROR(internal). Asked for the CUDA backend without a usable GPU, the verdict is
// SKIP (no cases, a "SKIP(no usable GPU: why)" line in `skips`); on the host backend a kernel
// with a construct the CPU cannot run is a SKIP naming it ("unsupported on host backend: ..."). The manifest is filled except kjudge_version,
// which the caller knows. Case by case: the candidate runs twice per case in a worker process
// (`self_exe --worker`), with different poisons and red-zone bytes; a crashed or timed-out
// worker is replaced for the next case.
Verdict check(const Problem& problem, const Candidate& candidate, const CheckOptions& options);

// The verdict of a candidate whose front-matter does not load (the SpecError of load_candidate
// or parse_candidate): the launch plan is part of the candidate, so a broken one is its failure,
// FAIL(launch_error) with the message, manifest naming the problem and `candidate`.
Verdict unloadable_candidate_verdict(const Problem& problem, const std::string& candidate,
                                     const std::string& message);

// The problem's tensors and their dtypes, in declaration order, into the verdict's provenance
// (every verdict of check and bench carries them).
void record_problem_dtypes(const Problem& problem, Verdict& v);

struct BenchOptions {
  CheckOptions check;
  int runs = 10; // host backend: timed runs per public case, of the candidate and the reference
  TimingOptions timing; // CUDA
  // --slo-p99 MS: the candidate's p99 latency over every timed run must be at most this many
  // milliseconds, else FAIL(timeout). Must be finite and positive (else ERROR(spec_error)).
  // With check.against or without it (an SLO on the candidate alone).
  std::optional<double> slo_p99_ms;
};

// `kjudge bench`: the check (every case, as `check` judges it), then the timings. Only a
// passing candidate gets a runtime.
// - CUDA (chosen, or auto with a GPU): the timing loop of TimingOptions on the first case of
//   each public shape set, timer "cuda_events": the plan's GPU time after an L2 flush, K input
//   sets rotated and regenerated between visits, the reference interleaved, every sample's
//   outputs judged against its visit's golden (stale_output), the physical floor
//   (impossible_speed below 0.9 of it), the launches' resources. runtime_ms and ref_runtime_ms
//   are the sums over the timed cases of the medians.
// - Host backend: on each public case, `runs` more runs of the candidate and of the reference,
//   each timed by the CPU time of its launches (summed over the CPU threads that ran blocks),
//   each candidate run's outputs judged like the first; timer "host_cpu", not a GPU time.
// - With check.against (the configuration tier: a change of launch configuration or tuning
//   only): every output of every case, and of every timed run, must be bit-identical to the
//   old kernel's, whatever the problem's tier and policy (the exact comparison of --against);
//   the old kernel's runs are timed beside the candidate's, and `latency` holds both pooled
//   distributions.
// Every bench verdict that timed a case has `latency`; with slo_p99_ms a candidate p99 over it
// is FAIL(timeout), the verdict then without its runtime figures.
Verdict bench(const Problem& problem, const Candidate& candidate, const BenchOptions& options);

// The nearest-rank distribution of `samples` (Verdict::latency's), all 0 for none.
LatencyDistribution latency_distribution(std::vector<double> samples);

// `kjudge compare`: one output stored as .npy files judged by the compare_output a check uses,
// with the policy named as problem.toml names it, in a one-case verdict (backend "files") so
// every reporter prints it as any other. Throws SpecError naming the file or the option.
// How `kjudge compare` (and kjudge.compare in Python) judges an output against its expected
// values: the policy and what it needs beside the tensors.
struct CompareSettings {
  std::string policy;            // "relative(4)", "allclose(1e-3, 1e-5)", ...
  std::string dtype;             // the output dtype; empty: actual's
  std::string expected_kind;     // "golden" | "reference"; empty: the policy's default
  int slice = -1;                // axis judged slice by slice; -1: none
  std::string nan = "exempt";    // propagate | ignore | exempt
  bool exact_percentiles = false;
  // Error percentiles of an output that passes too (a failing one always has them): the CLI
  // prints them; kjudge.compare asks only with stats=True (they double a small call's cost).
  bool statistics = true;
};
struct CompareFiles : CompareSettings {
  std::string actual, expected;  // .npy paths: the output, and the golden (read as f64)
  std::string reference;         // the same-precision reference; empty: none
};
Verdict compare_files(const CompareFiles& request);
// The tensors themselves, named as messages name them (`names`: actual, expected, reference;
// the files' paths for compare_files): one case's verdict, judged by compare_output exactly as
// in a check. SpecError, naming the tensor or the setting, for shapes that disagree, an unknown
// dtype, policy, NaN rule or expected kind, or a slice beyond the rank.
struct TensorNames {
  std::string actual = "actual", expected = "expected", reference = "reference";
};
Verdict compare_tensors(HostTensor actual, const HostTensor& expected,
                        std::optional<HostTensor> reference, const CompareSettings& settings,
                        const TensorNames& names = {});

// compare_tensors without the values: what it decides from the settings, the names, the dtypes
// and the shapes alone (the output as problem.toml would declare it, the rules it is judged by),
// and the one-case verdict it makes of the finding. compare_device_tensors judges with the same
// one, so a device array's verdict cannot drift from a host array's.
class TensorComparison {
public:
  // SpecError, as compare_tensors, for shapes that disagree or a setting it does not know.
  // `reference`: the reference's shape, null without one.
  TensorComparison(const CompareSettings& settings, const TensorNames& names, DType actual_dtype,
                   const Shape& actual, const Shape& expected, const Shape* reference);
  // The rules point at this object's OutputSpec.
  TensorComparison(const TensorComparison&) = delete;
  TensorComparison& operator=(const TensorComparison&) = delete;

  // The output dtype: the actual and the reference are judged in it, the expected in f64.
  DType dtype() const { return spec_.dtype; }
  const CompareRules& rules() const { return rules_; }
  Verdict verdict(OutputFinding finding) const;

private:
  OutputSpec spec_;
  CompareRules rules_;
  std::string case_id_;
};

// kjudge.compare on arrays in a CUDA device's memory (the Python package's DLPack arrays):
// judged where they lie by the GPU comparator (DeviceComparator), with compare_tensors' verdict
// for the same values, field for field. Nothing of the arrays comes to the host but what a
// finding names (and integer outputs, which the comparator judges on the host, as in a check).
struct DeviceArray {
  std::uintptr_t ptr = 0;  // CUdeviceptr, C-contiguous
  DType dtype = DType::f32;
  Shape shape;
};
class DeviceTensorJudge {
public:
  // The judge of CUDA device `ordinal`, made on first use (the primary context retained, the
  // comparator's kernels loaded: from the precompiled ones beside `self_exe`, `cache_dir`, or
  // NVRTC, as a check loads them) and kept for the process. CudaError when no driver or no such
  // device is usable (why in what()).
  static DeviceTensorJudge& of_device(int ordinal, const std::filesystem::path& self_exe,
                                      const std::filesystem::path& cache_dir);
  // The stream the comparisons run on, as DLPack's `stream` argument names it: producers order
  // their writes before it (__dlpack__(stream=...)).
  std::uintptr_t stream() const;
  // compare_tensors on device arrays (all of this device). SpecError as compare_tensors.
  Verdict compare(const DeviceArray& actual, const DeviceArray& expected,
                  const std::optional<DeviceArray>& reference, const CompareSettings& settings,
                  const TensorNames& names = {});

  struct Impl;
  explicit DeviceTensorJudge(std::unique_ptr<Impl> impl);
  ~DeviceTensorJudge();

private:
  std::unique_ptr<Impl> impl_;
};

// Where kjudge/device.cuh lives, for compiling references and candidates: $KJUDGE_INCLUDE, then
// next to the executable (../include, ../../include for a build tree, ../share/kjudge/include
// installed), then the source tree kjudge was built from. Empty when none holds it.
std::filesystem::path find_kjudge_include(const std::filesystem::path& self_exe);

}  // namespace kj
