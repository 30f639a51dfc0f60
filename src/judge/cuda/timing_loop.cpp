// The GPU bench's timing loop (timing.hpp).
#include "judge/cuda/timing_loop.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "judge/output_judging.hpp"
#include "kjudge/error.hpp"

namespace kj::judge {

namespace {

using Seconds = std::chrono::duration<double>;

// Events around `work` on the oracle's stream.
template <class Work>
double timed_ms(CudaOracle& oracle, Work&& work) {
  const CUstream stream = oracle.context().stream();
  CudaEvent start, end;
  start.record(stream);
  work(stream);
  end.record(stream);
  return CudaEvent::elapsed_ms(start, end);
}

// The memory a case's K sets may hold in the worker: more sets than fit are not rotated.
constexpr std::uint64_t kRotationBudget = std::uint64_t{8} << 30;

// The bytes of a case's inputs and outputs, from their shapes.
std::uint64_t tensor_bytes_of(const Problem& problem, const CaseData& data) {
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < problem.inputs.size(); ++i)
    bytes += tensor_bytes(problem.inputs[i].dtype, data.input_shapes[i]);
  for (std::size_t o = 0; o < problem.outputs.size(); ++o)
    bytes += tensor_bytes(problem.outputs[o].dtype, data.output_shapes[o]);
  return bytes;
}

} // namespace

std::optional<FlopUnit> flop_unit(const Problem& problem) {
  std::optional<DType> least;
  for (const InputSpec& in : problem.inputs)
    if (is_float(in.dtype) && (!least || dtype_size(in.dtype) < dtype_size(*least)))
      least = in.dtype;
  if (!least) return std::nullopt;
  return FlopUnit{*least, *least == DType::f32};
}

namespace {

// cuBLAS's best of three on a square GEMM large enough to run at its peak (after one untimed
// run), in TFLOP/s, with how it was measured in `described`; 0 with the reason there when cuBLAS
// cannot be used.
double measure_peak_tflops(CudaOracle& oracle, const FlopUnit& unit, std::string& described) {
  std::string why;
  Cublas* blas = oracle.cublas(&why);
  if (!blas) {
    described = "no FLOP floor: " + why;
    return 0;
  }
  const bool f64 = unit.operand == DType::f64;
  const std::int64_t n = f64 ? 4096 : 8192;
  const DType result = f64 ? DType::f64 : DType::f32;
  const std::size_t operand_bytes = static_cast<std::size_t>(n * n) * dtype_size(unit.operand);
  const DeviceBuffer a(operand_bytes), b(operand_bytes),
      c(static_cast<std::size_t>(n * n) * dtype_size(result));
  const CUstream stream = oracle.context().stream();
  // 0x3c in every byte: small finite normal values in every one of these dtypes (zeros would
  // draw less power and run faster than real data).
  fill_bytes(a.ptr(), 0x3c, operand_bytes, stream);
  fill_bytes(b.ptr(), 0x3c, operand_bytes, stream);
  double best_ms = 0;
  for (int run = 0; run < 4; ++run) {
    const double ms = timed_ms(oracle, [&](CUstream) {
      blas->gemm(a.ptr(), b.ptr(), c.ptr(), unit.operand, result, n, n, n, unit.tf32);
    });
    if (run > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  const std::string_view name = unit.tf32 ? "tf32" : dtype_name(unit.operand);
  described = fmt::format("{} tensor cores: {} GEMM {}^3, best of 3", name, blas->version(), n);
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) /
         (best_ms * 1e9);
}

} // namespace

DeviceRates measure_rates(CudaOracle& oracle, const Problem& problem) {
  const DeviceInfo& device = oracle.context().info();
  const std::size_t bytes =
      std::max<std::size_t>(std::size_t{8} * static_cast<std::size_t>(device.l2_bytes),
                            std::size_t{256} << 20);
  const DeviceBuffer a(bytes), b(bytes), counter(sizeof(unsigned long long));
  const CUstream stream = oracle.context().stream();
  fill_bytes(a.ptr(), 1, bytes, stream);
  fill_bytes(b.ptr(), 1, bytes, stream);
  DeviceRates rates;
  constexpr int kRuns = 5;
  for (int k = 0; k < kRuns; ++k) {
    const double copy_ms =
        timed_ms(oracle, [&](CUstream s) { copy_device(b.ptr(), a.ptr(), bytes, s); });
    const double read_ms = timed_ms(oracle, [&](CUstream s) {
      oracle.builtins().count_async(BuiltinKernels::mismatched_bytes(a.ptr(), b.ptr(), bytes),
                                    counter.ptr(), s);
    });
    rates.copy_gbs =
        std::max(rates.copy_gbs, 2.0 * static_cast<double>(bytes) / (copy_ms * 1e6));
    rates.read_gbs =
        std::max(rates.read_gbs, 2.0 * static_cast<double>(bytes) / (read_ms * 1e6));
  }
  oracle.context().synchronize();
  if (problem.floor_flops) {
    if (const std::optional<FlopUnit> unit = flop_unit(problem))
      rates.peak_tflops = measure_peak_tflops(oracle, *unit, rates.peak_unit);
    else
      rates.peak_unit = "no FLOP floor: the problem has no float input to set the unit";
  }
  return rates;
}

double probe_sm_clock_mhz(CudaOracle& oracle) {
  // About 100 us at 2 GHz: long against the global timer's steps.
  constexpr long long kCycles = 200000;
  return oracle.builtins().sm_clock_mhz(kCycles, oracle.context().stream());
}

double floor_bytes(const Problem& problem, const CaseData& data) {
  if (problem.floor_bytes) return static_cast<double>(problem.floor_bytes->eval(data.env));
  return static_cast<double>(tensor_bytes_of(problem, data));
}

KeptSamples drop_throttled(const std::vector<double>& candidate_ms,
                           const std::vector<double>& reference_ms,
                           const std::vector<double>& baseline_ms,
                           const std::vector<double>& against_ms,
                           const std::vector<int>& round_of_sample,
                           const std::vector<double>& round_clock_mhz, double rated_mhz) {
  KeptSamples kept;
  double fastest = 0;
  for (const int r : round_of_sample)
    fastest = std::max(fastest, round_clock_mhz[static_cast<std::size_t>(r)]);
  const double slowest_kept = 0.75 * (rated_mhz > 0 ? rated_mhz : fastest);
  for (std::size_t k = 0; k < candidate_ms.size(); ++k) {
    const double clock = round_clock_mhz[static_cast<std::size_t>(round_of_sample[k])];
    if (!(clock >= slowest_kept)) {
      ++kept.throttled;
      continue;
    }
    kept.candidate_ms.push_back(candidate_ms[k]);
    kept.reference_ms.push_back(reference_ms[k]);
    if (!baseline_ms.empty()) kept.baseline_ms.push_back(baseline_ms[k]);
    if (!against_ms.empty()) kept.against_ms.push_back(against_ms[k]);
    kept.clock_mhz.push_back(clock);
  }
  return kept;
}

CaseBench time_case(const TimingLoop& loop, const Case& c, const DeviceRates& rates) {
  CaseBench out;
  auto fail = [&](Reason reason, std::string message) {
    out.reason = reason;
    out.message = std::move(message);
    return std::move(out);
  };
  const Problem& problem = loop.problem;
  CudaOracle& oracle = loop.oracle;
  const CUstream stream = oracle.context().stream();
  const double rated_mhz = oracle.context().info().clock_khz / 1e3;
  // Integer outputs (and everything without the GPU comparator) are judged on the host, against
  // host copies of the visit's golden and reference.
  const bool host_copies =
      loop.comparator == nullptr ||
      std::any_of(problem.outputs.begin(), problem.outputs.end(),
                  [](const OutputSpec& o) { return !is_float(o.dtype); });

  int rotation = std::clamp(loop.options.rotation, 1, kBufferSets);
  std::vector<std::unique_ptr<CaseData>> visits;
  std::vector<std::uint32_t> visit_ids;
  auto visit_id = [&](int round, int set) {
    // Without regeneration, every set holds the check's own inputs (visit 0) on every visit.
    return static_cast<std::uint32_t>(loop.regenerate ? 1 + round * rotation + set : 0);
  };

  // The timed baseline, when the problem has one and it can be timed here.
  if (problem.timed_baseline && loop.against) {
    out.baseline_skip = fmt::format("the baseline '{}' is not timed beside an --against kernel: "
                                    "its check needs the golden, which --against does not make",
                                    problem.timed_baseline->name);
  } else if (problem.timed_baseline) {
    try {
      if (std::optional<std::string> why = oracle.enable_baseline()) out.baseline_skip = *why;
    } catch (const SpecError& e) {
      return fail(Reason::spec_error, e.what());
    }
  }
  const bool with_baseline = problem.timed_baseline && out.baseline_skip.empty();

  // A run's findings against its own visit: against its golden, or, given the --against
  // kernel's run on the same visit, bit for bit against that (on the host, as the check does).
  auto judge_run = [&](RunOutcome& run, const CaseData& visit, RunOutcome* old) {
    if (!old && visit.device_golden.empty() && visit.golden.empty())
      throw InternalError("a bench visit without a golden (the oracle makes none for --against) "
                          "and no --against kernel to judge against: TimingLoop::against unset");
    if (loop.comparator && !old)
      return judge_device_outputs(problem, visit, run, *loop.comparator, stream, {});
    outputs_to_host(run, problem, visit.output_shapes, stream);
    if (old) outputs_to_host(*old, problem, visit.output_shapes, stream);
    std::vector<OutputFinding> findings;
    for (std::size_t o = 0; o < problem.outputs.size(); ++o)
      findings.push_back(compare_output(host_compare_inputs(
          problem, o, visit, run.outputs[o], old ? &old->outputs : nullptr, {})));
    return findings;
  };

  std::vector<double> candidate_ms, reference_ms, baseline_ms, against_ms, round_clock_mhz;
  std::vector<int> round_of_sample;
  const auto start = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> warm; // the end of the warm-up
  int runs_judged = 0;
  for (int round = 0;; ++round) {
    // This round's inputs, golden and reference, the reference's run timed per visit.
    try {
      const PhaseTrace::Scope phase(loop.trace, "bench: visits drawn (inputs, golden, reference)");
      visits.clear();
      visit_ids.clear();
      for (int set = 0; set < rotation; ++set) {
        visit_ids.push_back(visit_id(round, set));
        visits.push_back(
            std::make_unique<CaseData>(oracle.prepare_visit(c, visit_ids.back(), host_copies)));
        if (set == 0 && round == 0) {
          const std::uint64_t per_set = tensor_bytes_of(problem, *visits[0]);
          rotation = static_cast<int>(std::clamp<std::uint64_t>(
              kRotationBudget / std::max<std::uint64_t>(per_set, 1), 1,
              static_cast<std::uint64_t>(rotation)));
        }
        visits.back()->reference_s = visits.back()->reference_ms / 1e3;
      }
    } catch (const SpecError& e) {
      return fail(Reason::spec_error, e.what());
    }
    std::vector<const CaseData*> view;
    for (const auto& v : visits)
      view.push_back(v.get());

    // The --against kernel's runs, where the reference's were timed: the first round makes its
    // sets, the others are timed. Its failure is the problem's, as in the check.
    std::vector<RunOutcome> old_runs;
    std::vector<double> old_ms;
    if (loop.against) {
      if (round == 0) {
        for (int set = 0; set < rotation; ++set)
          old_runs.push_back(
              loop.against->run_on_set(c, *view[static_cast<std::size_t>(set)], 0, set));
      } else {
        TimedRound timed = loop.against->timed_round(c, view, round % 2, oracle.flush_bytes());
        if (timed.reason != Reason::none)
          return fail(Reason::spec_error, fmt::format("the --against kernel fails bench timed "
                                                      "round {}: {}: {}",
                                                      round, reason_name(timed.reason),
                                                      timed.message));
        old_runs = std::move(timed.runs);
        old_ms = std::move(timed.ms);
      }
      for (std::size_t set = 0; set < old_runs.size(); ++set)
        if (old_runs[set].reason != Reason::none)
          return fail(Reason::spec_error,
                      fmt::format("the --against kernel fails on bench input set {} (visit {}): "
                                  "{}: {}",
                                  set, visit_ids[set], reason_name(old_runs[set].reason),
                                  old_runs[set].message));
    }

    // The candidate's runs: the first round makes the sets (untimed), the others are timed.
    std::vector<RunOutcome> runs;
    std::vector<double> ms;
    if (round == 0) {
      for (int set = 0; set < rotation; ++set)
        runs.push_back(loop.candidate.run_on_set(c, *view[static_cast<std::size_t>(set)], 0, set));
    } else {
      TimedRound timed = loop.candidate.timed_round(c, view, round % 2, oracle.flush_bytes());
      if (timed.reason != Reason::none)
        return fail(timed.reason, fmt::format("bench, timed round {}: {}", round, timed.message));
      runs = std::move(timed.runs);
      ms = std::move(timed.ms);
      if (out.resources.empty()) {
        out.resources = std::move(timed.resources);
        out.memory_bytes = timed.memory_bytes;
      }
    }
    const double clock = probe_sm_clock_mhz(oracle);

    // Every run's outputs judged against its own visit.
    const PhaseTrace::Scope phase(loop.trace, "bench: every run's outputs judged");
    for (std::size_t set = 0; set < runs.size(); ++set) {
      RunOutcome& run = runs[set];
      ++runs_judged;
      const std::string where = fmt::format("bench run {} (input set {}, visit {})", runs_judged,
                                            set, visit_ids[set]);
      if (run.reason != Reason::none) return fail(run.reason, where + ": " + run.message);
      std::vector<OutputFinding> findings;
      try {
        findings = judge_run(run, *view[set], loop.against ? &old_runs[set] : nullptr);
      } catch (const SpecError& e) {
        return fail(Reason::spec_error, e.what());
      } catch (const InternalError& e) {
        return fail(Reason::internal, e.what());
      }
      for (std::size_t o = 0; o < findings.size(); ++o)
        if (!findings[o].pass())
          return fail(Reason::stale_output,
                      fmt::format("{}: output '{}': {} ({}{}), where the check's runs passed",
                                  where, problem.outputs[o].name, findings[o].message,
                                  reason_name(findings[o].reason),
                                  loop.against ? ", against the --against kernel's run on the "
                                                 "same visit"
                                               : ""));
    }
    // The baseline's outputs of its first visit, held to the problem's own policy (a built-in
    // writes only its one output).
    if (round == 0 && with_baseline) {
      const TimedBaseline& b = *problem.timed_baseline;
      RunOutcome baseline_run;
      baseline_run.device_outputs = std::move(visits.front()->device_baseline);
      std::vector<OutputFinding> findings;
      try {
        findings = judge_run(baseline_run, *view.front(), nullptr);
      } catch (const SpecError& e) {
        return fail(Reason::spec_error, e.what());
      }
      for (std::size_t o = 0; o < findings.size(); ++o) {
        const std::string& name = problem.outputs[o].name;
        const bool written = b.plan || b.output_tensor() == name;
        if (written && !findings[o].pass())
          return fail(Reason::spec_error,
                      fmt::format("the baseline '{}' fails its first visit of case {}: output "
                                  "'{}': {} ({}); a baseline must meet the problem's own policy",
                                  b.name, c.id, name, findings[o].message,
                                  reason_name(findings[o].reason)));
      }
    }

    const auto now = std::chrono::steady_clock::now();
    // A candidate far slower than the reference is timed no further: this round is its time,
    // warm or not (kStopEarlyFactor).
    std::vector<double> round_reference_ms;
    for (const CaseData* v : view) round_reference_ms.push_back(v->reference_ms);
    const bool too_slow = round > 0 && not_worth_timing(ms, round_reference_ms);
    if (!too_slow &&
        (round == 0 || (!warm && Seconds(now - loop.busy_since).count() < loop.options.warmup_s)))
      continue;
    if (!too_slow && !warm) {
      warm = now;
      continue; // this round ran while warming up: the next is the first that counts
    }
    round_clock_mhz.resize(static_cast<std::size_t>(round) + 1, 0);
    round_clock_mhz[static_cast<std::size_t>(round)] = clock;
    for (std::size_t set = 0; set < ms.size(); ++set) {
      candidate_ms.push_back(ms[set]);
      reference_ms.push_back(view[set]->reference_ms);
      if (with_baseline) baseline_ms.push_back(view[set]->baseline_ms.value_or(0));
      if (loop.against) against_ms.push_back(old_ms[set]);
      round_of_sample.push_back(round);
    }
    const KeptSamples kept = drop_throttled(candidate_ms, reference_ms, baseline_ms, against_ms,
                                            round_of_sample, round_clock_mhz, rated_mhz);
    double noise = std::max(median_noise(sample_stats(kept.candidate_ms)),
                            median_noise(sample_stats(kept.reference_ms)));
    if (with_baseline) noise = std::max(noise, median_noise(sample_stats(kept.baseline_ms)));
    if (loop.against) noise = std::max(noise, median_noise(sample_stats(kept.against_ms)));
    const double timed_s = warm ? Seconds(now - *warm).count() : 0;
    const bool enough = timed_s >= loop.options.min_time_s &&
                        static_cast<int>(kept.candidate_ms.size()) >= loop.options.min_samples;
    const bool converged = enough && noise <= loop.options.noise;
    if (too_slow || converged || Seconds(now - start).count() >= loop.options.max_time_s) {
      CaseTiming& t = out.timing;
      t.candidate_ms = kept.candidate_ms;
      t.reference_ms = kept.reference_ms;
      t.against_ms = kept.against_ms;
      if (with_baseline) {
        t.baseline_samples_ms = kept.baseline_ms;
        t.baseline_ms = sample_stats(kept.baseline_ms).median;
        t.baseline = problem.timed_baseline->name;
      }
      t.throttled = kept.throttled;
      t.sm_clock_mhz = sample_stats(kept.clock_mhz).median;
      t.noise = noise;
      t.converged = converged;
      t.stopped_early = too_slow && !converged;
      t.rotation = rotation;
      t.wall_s = Seconds(now - start).count();
      t.floor_bytes = floor_bytes(problem, *view.front());
      t.bandwidth_gbs = rates.best_gbs();
      if (t.bandwidth_gbs > 0) t.floor_bytes_ms = t.floor_bytes / (t.bandwidth_gbs * 1e6);
      t.peak_unit = rates.peak_unit;
      if (problem.floor_flops && rates.peak_tflops > 0) {
        t.floor_flops = static_cast<double>(problem.floor_flops->eval(view.front()->env));
        t.peak_tflops = rates.peak_tflops;
        t.floor_flops_ms = t.floor_flops / (t.peak_tflops * 1e9);
      }
      t.floor_ms = std::max(t.floor_bytes_ms, t.floor_flops_ms);
      out.ref_memory_bytes = tensor_bytes_of(problem, *view.front());
      break;
    }
  }
  const double median = sample_stats(out.timing.candidate_ms).median;
  if (out.timing.candidate_ms.empty())
    return fail(Reason::internal, "the timing loop kept no sample (every round throttled)");
  const CaseTiming& t = out.timing;
  if (impossible_speed(median, t.floor_ms))
    return fail(Reason::impossible_speed,
                t.floor_flops_ms > t.floor_bytes_ms
                    ? fmt::format("median {:.4g} ms is under 0.9 of the physical floor, {:.4g} ms "
                                  "({:.4g} FLOPs at {:.1f} TFLOP/s, the peak measured in this run "
                                  "on {})",
                                  median, t.floor_ms, t.floor_flops, t.peak_tflops, t.peak_unit)
                    : fmt::format("median {:.4g} ms is under 0.9 of the physical floor, {:.4g} ms "
                                  "({:.4g} bytes at {:.0f} GB/s, the best bandwidth measured in "
                                  "this run)",
                                  median, t.floor_ms, t.floor_bytes, t.bandwidth_gbs));
  return out;
}

} // namespace kj::judge
