// The GPU bench's timing loop (`kjudge bench` on CUDA), after the check has passed every case.
// Per timed case (the first of each public shape set):
// - K input sets (TimingOptions::rotation) live in K of the worker's buffer sets. Each round
//   draws every set's inputs afresh (a new Philox visit, outside the timed region), makes that
//   visit's golden and reference (the reference's run timed like the candidate's: poison, L2
//   flush, its launches between two events), then times one run of the candidate on each set
//   in one worker request, and judges every one of those runs' outputs against its own visit's
//   golden: a run that fails where the check's runs passed is stale_output. A cache keyed on
//   pointer or shape replays an answer for inputs that are gone.
// - The first round (which makes the sets) and the rounds of the warm-up are judged but not
//   kept: to the kernel, warm-up and timed runs are the same. The warm-up counts busy GPU time
//   from TimingLoop::busy_since: the check's own runs, just before, keep the GPU busy too.
// - A clock probe after each round reads the SM clock; rounds under 75% of the device's rated
//   clock (nvbench's rule) are dropped as throttled and counted.
// - The loop stops when both medians' relative noise is under the target after the minimum
//   time and samples, or at the time cap.
// - With a timed baseline (`[[baseline]]` plan or cuBLAS), every visit times it too, on that
//   visit's inputs after the same flush; its outputs on the first visit are judged like the
//   candidate's (a baseline that fails is the problem's fault: spec_error).
// - With --against (TimingLoop::against), every visit also runs the old kernel, timed where the
//   reference is (before the candidate, after the same flush), in its own worker's sets; the
//   candidate's run on each visit is judged bit for bit against the old kernel's run on that
//   visit (the oracle makes no golden then), and the old kernel's samples are kept and dropped
//   with the others and count in the stopping rule. A timed baseline is not timed beside it
//   (its check needs the golden).
// The physical floor is the larger of two: the case's mandatory bytes at the best of the copy
// and read bandwidths measured in the same run, and, where the problem declares floor_flops,
// its FLOPs at the peak rate measured in the same run on the fastest unit a kernel of the
// problem could use (flop_unit); a median below 0.9 of the floor is impossible_speed.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "judge/cuda/cuda_oracle.hpp"
#include "judge/kernel_under_test.hpp"
#include "judge/trace.hpp"
#include "kjudge/cases.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/verdict.hpp"

namespace kj::judge {

// The device rates behind the floor, measured by events in the bench's own run: a
// device-to-device copy (bytes read + written) and the byte-comparison kernel (bytes read),
// each the best of a few runs over buffers eight times the L2; and, for a problem that declares
// floor_flops, the peak FLOP rate of its flop_unit, cuBLAS's best on a large square GEMM.
struct DeviceRates {
  double copy_gbs = 0, read_gbs = 0;
  double best_gbs() const { return copy_gbs > read_gbs ? copy_gbs : read_gbs; }
  double peak_tflops = 0;   // 0: no FLOP floor (none declared, or cuBLAS missing: peak_unit)
  std::string peak_unit;    // how the peak was measured, or why it was not
};
DeviceRates measure_rates(CudaOracle& oracle, const Problem& problem);

// The unit whose peak bounds a problem's FLOP rate: the fastest a kernel could use on its least
// precise float input without rounding operands further than a tolerance for that dtype admits
// (f16 or bf16 tensor cores for f16 and bf16, TF32 tensor cores for f32, f64 tensor cores for
// f64); nullopt for a problem without float inputs.
struct FlopUnit {
  DType operand;
  bool tf32;
};
std::optional<FlopUnit> flop_unit(const Problem& problem);

// The SM clock in MHz: a one-thread spin of a known number of cycles against the global timer.
double probe_sm_clock_mhz(CudaOracle& oracle);

// The mandatory bytes of a case: the problem's floor_bytes on its dims, else every input read
// once and every output written once.
double floor_bytes(const Problem& problem, const CaseData& data);

// Whether a median is below 0.9 of the floor: what no correct kernel can do.
inline bool impossible_speed(double median_ms, double floor_ms) {
  return floor_ms > 0 && median_ms < 0.9 * floor_ms;
}

// The samples kept once throttled rounds are dropped: the rounds whose clock is under 75% of the
// device's rated clock (`rated_mhz`; 0 when the device does not say: the fastest clock seen).
// `round_clock_mhz[r]` belongs to samples `round_of_sample == r`.
// `baseline_ms` is empty without a timed baseline and `against_ms` without an --against kernel,
// else each parallel to the others.
struct KeptSamples {
  std::vector<double> candidate_ms, reference_ms, baseline_ms, against_ms, clock_mhz;
  int throttled = 0;
};
KeptSamples drop_throttled(const std::vector<double>& candidate_ms,
                           const std::vector<double>& reference_ms,
                           const std::vector<double>& baseline_ms,
                           const std::vector<double>& against_ms,
                           const std::vector<int>& round_of_sample,
                           const std::vector<double>& round_clock_mhz, double rated_mhz);

struct TimingLoop {
  const Problem& problem;
  CudaOracle& oracle;
  KernelUnderTest& candidate;
  DeviceComparator* comparator = nullptr; // null: outputs judged on the host
  TimingOptions options;
  bool regenerate = true;                 // off only under KJ_TEST_DISABLE=regenerate
  PhaseTrace* trace = nullptr;
  // Since when the GPU has been kept busy (the check's start): the warm-up counts from there.
  std::chrono::steady_clock::time_point busy_since = std::chrono::steady_clock::now();
  // The --against kernel (CheckSettings::against_kernel), timed beside the candidate; null: none.
  KernelUnderTest* against = nullptr;
};

// One case timed. reason none: `timing` holds the samples; otherwise the case's failure
// (stale_output, impossible_speed, or the failure of a run: crash, oob_write, ...) or
// spec_error/internal, with the message.
struct CaseBench {
  Reason reason = Reason::none;
  std::string message;
  CaseTiming timing;
  std::vector<LaunchResources> resources;
  std::uint64_t memory_bytes = 0, ref_memory_bytes = 0;
  std::string baseline_skip; // why the problem's timed baseline was not timed
};
CaseBench time_case(const TimingLoop& loop, const Case& c, const DeviceRates& rates);

} // namespace kj::judge
