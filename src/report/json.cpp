// The JSON form of a verdict: what a trainer's reward code, a dashboard or a later `kjudge`
// reads. Three audiences share one document: kjudge's own fields (outcome, reason, per-case
// statistics), KernelBench's field names (`compiled`, `correctness`, `runtime`, `ref_runtime`,
// `metadata`) so existing reward code works unchanged, and a `reward` block. The layout is
// documented in docs/cli.md ("JSON reports"); any incompatible change bumps kJsonSchemaVersion.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <ostream>

#include "kjudge/report.hpp"

namespace kj {

using nlohmann::json;

json json_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  return x;
}

double number_from_json(const json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return HUGE_VAL;
    if (s == "-inf") return -HUGE_VAL;
  }
  throw SpecError({}, "expected a number, \"nan\", \"inf\" or \"-inf\", got " + j.dump());
}

bool is_redacted(const CaseFinding& finding, const ReportOptions& options) {
  return options.redact_hidden && finding.hidden;
}

std::string_view fault_class(Reason reason, Outcome outcome) {
  if (outcome == Outcome::skip) return "skip";
  if (reason == Reason::none) return "none";
  if (reason == Reason::spec_error) return "problem";
  if (reason == Reason::internal) return "kjudge";
  return "candidate";
}

namespace {

// The host backend's coverage, null where none was taken (another backend, a failing check).
json lines_run_json(const std::optional<LinesRun>& r) {
  if (!r) return nullptr;
  return {{"measured", r->measured},
          {"not_measured", r->measured ? json(nullptr) : json(r->not_measured)},
          {"lines", r->lines},
          {"unrun", r->unrun},
          {"added_cases", r->added_cases},
          {"stopped", r->stopped.empty() ? json(nullptr) : json(r->stopped)},
          {"scale_reached", json_number(r->scale_reached)},
          {"confidence", json_number(r->confidence())}};
}

json optional_number(const std::optional<double>& x) {
  return x ? json_number(*x) : json(nullptr);
}

json percentiles_json(const Percentiles& p) {
  return {{"p50", json_number(p.p50)},
          {"p99", json_number(p.p99)},
          {"p999", json_number(p.p999)},
          {"max", json_number(p.max)}};
}

json element_json(const ElementReport& e) {
  return {{"flat", e.flat},
          {"index", e.index},
          {"value", json_number(e.value)},
          {"expected", json_number(e.expected)},
          {"error", json_number(e.error)},
          {"allowed", json_number(e.allowed)}};
}

// The finding whose id the verdict names as its first failure, if it is among the cases.
const CaseFinding* first_failing(const Verdict& v) {
  if (!v.first_failing_case) return nullptr;
  for (const auto& c : v.cases)
    if (c.case_id == *v.first_failing_case) return &c;
  return nullptr;
}

// NaN counts as the worst ratio: an error that is not a number did not pass.
double worse_ratio(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::nan("");
  return std::max(a, b);
}

json tensor_dtypes_json(const std::vector<TensorDtype>& tensors) {
  json out = json::array();
  for (const TensorDtype& t : tensors)
    out.push_back({{"name", t.name}, {"dtype", t.dtype}});
  return out;
}

json latency_distribution_json(const LatencyDistribution& d) {
  return {{"p50_ms", json_number(d.p50)},
          {"p90_ms", json_number(d.p90)},
          {"p99_ms", json_number(d.p99)},
          {"max_ms", json_number(d.max)},
          {"n", d.n}};
}

json latency_json(const std::optional<Latency>& l) {
  if (!l) return nullptr;
  return {{"candidate", latency_distribution_json(l->candidate)},
          {"against", l->against ? latency_distribution_json(*l->against) : json(nullptr)},
          {"slo_p99_ms", optional_number(l->slo_p99_ms)},
          {"slo_met", l->slo_p99_ms ? json(l->slo_met()) : json(nullptr)}};
}

// What one timed sample is, per timer (Verdict::timer).
std::string_view sample_meaning(std::string_view timer) {
  if (timer == "cuda_events")
    return "the launch plan's GPU time between two CUDA events after an L2 flush, one per input "
           "set per round, on the first case of each public shape set; kept after the warm-up, "
           "rounds under 75% of the rated SM clock dropped";
  return "the CPU time of one run's launches, summed over the host worker's threads that ran "
         "blocks, on every public-class case of the host plan (--runs runs each, fewer when "
         "stopped early)";
}

// The statistic and aggregation of every figure this verdict holds, each with its timer: what
// the code computes (bench.cpp's summarize_timings and judge_latency, verdict.hpp's
// sample_stats), so a reader of `runtime` knows it is a sum of medians, not a mean.
json figures_json(const Verdict& v) {
  json figures = json::object();
  if (v.timer.empty()) return figures;
  auto add = [&](const char* name, std::string_view statistic, std::string_view aggregation) {
    figures[name] = {{"timer", v.timer}, {"statistic", statistic}, {"aggregation", aggregation}};
  };
  constexpr std::string_view kSumOverCases = "sum over the timed cases";
  bool timed_case = false;
  for (const CaseFinding& c : v.cases)
    timed_case = timed_case || c.timing.has_value();
  if (timed_case)
    add("cases.timing",
        "per series (candidate, reference, against, baseline_stats): median, quartiles (linear "
        "interpolation between ranks), min, max and count of the case's samples",
        "per timed case");
  if (v.runtime_ms) add("runtime", "median of the candidate's samples of each timed case",
                        kSumOverCases);
  if (v.ref_runtime_ms) add("ref_runtime", "median of the reference's samples of each timed case",
                            kSumOverCases);
  if (v.runtime_ms && v.ref_runtime_ms)
    add("speedup", "ref_runtime / runtime", "the ratio of the two sums of medians");
  if (v.speedup_low && v.speedup_high)
    add("speedup_ci",
        "95% interval of the ratio of the sums of medians: speedup x [max(0, 1 - 1.96 r), 1 + "
        "1.96 r], r = sqrt((se_runtime / runtime)^2 + (se_ref_runtime / ref_runtime)^2)",
        "each sum's standard error: its medians' (1.2533 x IQR / 1.349 / sqrt(n)) in quadrature "
        "over the timed cases");
  if (v.fraction_of_floor)
    add("fraction_of_floor", "the timed cases' physical floors summed, over runtime",
        kSumOverCases);
  if (v.baseline_runtime_ms) {
    add("baseline_runtime",
        "median of the baseline's samples of each timed case (timed), or its recorded ms",
        kSumOverCases);
    add("baseline_speedup", "baseline_runtime / runtime", "the ratio of the two sums");
  }
  if (v.latency)
    add("latency",
        "nearest-rank p50, p90 and p99 (the sample at rank ceil(q n)), max and count n",
        "every timed run of every timed case pooled, per kernel (candidate, against)");
  return figures;
}

// Where the verdict's figures come from (docs/cli.md "JSON reports"): the problem's dtypes, the
// driver's release, the SM clock, and what each figure is.
json provenance_json(const Verdict& v) {
  const Provenance& p = v.provenance;
  return {{"inputs", tensor_dtypes_json(p.inputs)},
          {"outputs", tensor_dtypes_json(p.outputs)},
          {"driver_release", p.driver_release},
          {"sm_clock",
           {{"mhz", p.sm_clock_mhz > 0 ? json_number(p.sm_clock_mhz) : json(nullptr)},
            {"source", p.sm_clock_source.empty() ? json(nullptr) : json(p.sm_clock_source)}}},
          {"timer", v.timer.empty() ? json(nullptr) : json(v.timer)},
          {"sample", v.timer.empty() ? json(nullptr) : json(sample_meaning(v.timer))},
          {"figures", figures_json(v)}};
}

}  // namespace

json to_json(const Manifest& m) {
  return {{"kjudge_version", m.kjudge_version},
          {"problem", m.problem},
          {"problem_hash", m.problem_hash},
          {"candidate", m.candidate},
          {"candidate_hash", m.candidate_hash},
          {"backend", m.backend},
          {"trust", m.trust},
          {"nvrtc_version", m.nvrtc_version},
          {"driver_version", m.driver_version},
          {"gpu", m.gpu},
          {"device", m.device >= 0 ? json(m.device) : json(nullptr)},
          {"clocks", m.clocks},
          {"case_budget", m.case_budget},
          {"case_cache",
           {{"hits", m.case_cache_hits},
            {"misses", m.case_cache_misses},
            {"disk_hits", m.case_cache_disk_hits},
            {"disk_stored", m.case_cache_disk_stored},
            {"disk_corrupt", m.case_cache_disk_corrupt},
            {"disk_declined", m.case_cache_disk_declined}}}};
}

json to_json(const OutputFinding& f) {
  json slices = json::array();
  for (const auto& s : f.failed_slices)
    slices.push_back({{"slice", s.slice},
                      {"max_error", json_number(s.max_error)},
                      {"max_bound", json_number(s.max_bound)},
                      {"rms_error", json_number(s.rms_error)},
                      {"rms_bound", json_number(s.rms_bound)}});
  json first = json::array();
  for (const auto& e : f.first)
    first.push_back(element_json(e));
  json regions = json::array();
  for (const auto& r : f.regions)
    regions.push_back({{"region", r.region},
                       {"elements", r.elements},
                       {"errors", r.errors},
                       {"reference_errors", r.reference_errors},
                       {"allowed", r.allowed},
                       {"pass", r.pass()}});
  return {{"output", f.output},
          {"outcome", outcome_name(reason_outcome(f.reason))},
          {"reason", reason_name(f.reason)},
          {"message", f.message},
          {"count", f.count},
          {"mismatches", f.mismatches},
          {"mismatch_fraction", json_number(f.mismatch_fraction)},
          {"nonfinite", f.nonfinite},
          {"excused", f.excused},
          {"overflows_excused", f.overflows_excused},
          {"excused_by_reference", f.excused_by_reference.empty() ? json(nullptr)
                                                                  : json(f.excused_by_reference)},
          {"first", std::move(first)},
          {"worst", f.worst ? element_json(*f.worst) : json(nullptr)},
          {"stats", f.stats.made ? json{{"percentiles", f.stats.binned ? "binned" : "exact"},
                                        {"abs", percentiles_json(f.stats.abs)},
                                        {"rel", percentiles_json(f.stats.rel)},
                                        {"ulp", percentiles_json(f.stats.ulp)}}
                                  : json(nullptr)},
          {"bound",
           {{"policy", f.bound.policy},
            {"expected", f.bound.expected},
            {"source", f.bound.source},
            {"max_bound", json_number(f.bound.max_bound)},
            {"rms_bound", json_number(f.bound.rms_bound)},
            {"max_error", json_number(f.bound.max_error)},
            {"rms_error", json_number(f.bound.rms_error)}}},
          {"failed_slices", std::move(slices)},
          {"failed_slice_count", f.failed_slice_count},
          {"regions", std::move(regions)},
          {"log_error_ratio", json_number(f.log_error_ratio)}};
}

json to_json(const SampleStats& s) {
  return {{"median_ms", json_number(s.median)}, {"q1_ms", json_number(s.q1)},
          {"q3_ms", json_number(s.q3)},         {"min_ms", json_number(s.min)},
          {"max_ms", json_number(s.max)},       {"samples", s.samples}};
}

json to_json(const CaseFinding& c, const ReportOptions& options) {
  // A case the candidate's preconditions kept out was not run: SKIP, for reason precondition.
  const Outcome outcome = c.excluded ? Outcome::skip : reason_outcome(c.reason);
  const Reason reason = c.excluded ? Reason::precondition : c.reason;
  // A generator may read this report: a hidden case tells it only that a hidden case of some
  // class failed and why, never which shape, which values or what the error was.
  if (is_redacted(c, options))
    return {{"class", c.case_class},
            {"hidden", true},
            {"redacted", true},
            {"outcome", outcome_name(outcome)},
            {"reason", reason_name(reason)}};
  json outputs = json::array();
  for (const auto& o : c.outputs)
    outputs.push_back(to_json(o));
  json timing = nullptr;
  if (c.timing) {
    const SampleStats cand = sample_stats(c.timing->candidate_ms);
    const SampleStats ref = sample_stats(c.timing->reference_ms);
    const CaseTiming& t = *c.timing;
    timing = {{"candidate", to_json(cand)},
              {"reference", to_json(ref)},
              {"speedup", cand.median > 0 ? json_number(ref.median / cand.median) : json(nullptr)},
              {"candidate_ms", t.candidate_ms},
              {"reference_ms", t.reference_ms},
              {"stopped_early", t.stopped_early}};
    if (!t.against_ms.empty()) { // bench --against: the old kernel's runs beside
      timing["against"] = to_json(sample_stats(t.against_ms));
      timing["against_ms"] = t.against_ms;
    }
    if (t.floor_ms > 0 || t.sm_clock_mhz > 0) { // the GPU's timing loop
      timing["throttled"] = t.throttled;
      timing["sm_clock_mhz"] = json_number(t.sm_clock_mhz);
      timing["noise"] = json_number(t.noise);
      timing["converged"] = t.converged;
      timing["rotation"] = t.rotation;
      timing["wall_s"] = json_number(t.wall_s);
      timing["floor_bytes"] = json_number(t.floor_bytes);
      timing["bandwidth_gbs"] = json_number(t.bandwidth_gbs);
      timing["floor_ms"] = json_number(t.floor_ms);
      timing["fraction_of_floor"] =
          cand.median > 0 && t.floor_ms > 0 ? json_number(t.floor_ms / cand.median) : json(nullptr);
      timing["floor_bytes_ms"] = json_number(t.floor_bytes_ms);
      timing["floor_flops"] = t.floor_flops > 0 ? json_number(t.floor_flops) : json(nullptr);
      timing["peak_tflops"] = t.peak_tflops > 0 ? json_number(t.peak_tflops) : json(nullptr);
      timing["floor_flops_ms"] = t.floor_flops > 0 ? json_number(t.floor_flops_ms) : json(nullptr);
      timing["peak_unit"] = t.peak_unit.empty() ? json(nullptr) : json(t.peak_unit);
      timing["baseline_ms"] = optional_number(t.baseline_ms);
      timing["baseline"] = t.baseline_ms ? json(t.baseline) : json(nullptr);
      if (!t.baseline_samples_ms.empty()) {
        timing["baseline_stats"] = to_json(sample_stats(t.baseline_samples_ms));
        timing["baseline_samples_ms"] = t.baseline_samples_ms;
      }
    }
  }
  return {{"id", c.case_id},
          {"class", c.case_class},
          {"hidden", c.hidden},
          {"redacted", false},
          {"outcome", outcome_name(outcome)},
          {"reason", reason_name(reason)},
          {"message", c.message},
          {"outputs", std::move(outputs)},
          {"timing", std::move(timing)},
          {"excluded", c.excluded}};
}

json to_json(const Verdict& v, const ReportOptions& options) {
  const CaseFinding* first = first_failing(v);
  const bool hide_first = first && is_redacted(*first, options);
  const std::string message =
      hide_first
          ? fmt::format("a hidden case failed ({}); details withheld", reason_name(first->reason))
          : v.message;

  json cases = json::array();
  for (const auto& c : v.cases)
    cases.push_back(to_json(c, options));

  // Worst over the cases, per output: the figure a reward can shape on. Redacted cases
  // contribute too; the worst ratio reveals no shape or value.
  std::map<std::string, double> ratios;
  for (const auto& c : v.cases)
    for (const auto& o : c.outputs) {
      if (!o.counts()) continue;
      auto [it, fresh] = ratios.try_emplace(o.output, o.log_error_ratio);
      if (!fresh) it->second = worse_ratio(it->second, o.log_error_ratio);
    }
  json ratio_json = json::object();
  std::optional<double> worst_ratio;
  for (const auto& [name, r] : ratios) {
    ratio_json[name] = json_number(r);
    worst_ratio = worst_ratio ? worse_ratio(*worst_ratio, r) : r;
  }

  const bool correct = v.outcome == Outcome::pass;
  std::optional<double> speedup;
  if (v.runtime_ms && v.ref_runtime_ms && *v.runtime_ms > 0)
    speedup = *v.ref_runtime_ms / *v.runtime_ms;

  json skips = json::array();
  for (const auto& s : v.skips)
    skips.push_back(s);

  json resources = json::array();
  for (const LaunchResources& r : v.resources)
    resources.push_back({{"launch", r.launch},
                         {"registers", r.registers},
                         {"static_shared", r.static_shared},
                         {"dynamic_shared", r.dynamic_shared},
                         {"local_bytes", r.local_bytes},
                         {"block_threads", r.block_threads},
                         {"blocks_per_sm", r.blocks_per_sm},
                         {"occupancy", json_number(r.occupancy)},
                         {"grid_occupancy", json_number(r.grid_occupancy)}});
  const json speedup_ci = v.speedup_low && v.speedup_high
                              ? json::array({json_number(*v.speedup_low),
                                             json_number(*v.speedup_high)})
                              : json(nullptr);

  return {
      {"schema_version", kJsonSchemaVersion},
      {"manifest", to_json(v.manifest)},
      {"provenance", provenance_json(v)},
      {"judge_time",
       {{"wall_ms", json_number(v.judge_time.wall_ms)},
        {"candidate_ms", json_number(v.judge_time.candidate_ms)},
        {"start_ms", json_number(v.judge_time.start_ms)},
        {"timing_ms", json_number(v.judge_time.timing_ms)}}},
      {"outcome", outcome_name(v.outcome)},
      {"reason", reason_name(v.reason)},
      {"class", fault_class(v.reason, v.outcome)},
      {"exit_code", static_cast<int>(v.exit_code())},
      {"message", message},
      {"first_failing_case",
       v.first_failing_case && !hide_first ? json(*v.first_failing_case) : json(nullptr)},
      {"first_failing_class", first ? json(first->case_class) : json(nullptr)},
      {"replay", v.replay_command.empty() || hide_first ? json(nullptr) : json(v.replay_command)},
      {"cases_total", v.cases_total},
      {"cases_passed", v.cases_passed},
      {"fraction_passed", json_number(v.fraction_passed())},
      // Cases not run because their shapes do not meet the candidate's `requires` (counted in
      // cases_total, not in cases_passed).
      {"cases_excluded", v.cases_excluded},
      {"preconditions", v.preconditions},
      {"cases", std::move(cases)},
      {"lines_run", lines_run_json(v.lines_run)},
      {"skips", std::move(skips)},
      // Never absent: a trainer can refuse any verdict whose list is not empty.
      {"defences_disabled", v.defences_disabled},
      // null, or why the card refuses the policy that judged this (--allow-loosen).
      {"loosened_card", v.loosened_card.empty() ? json(nullptr) : json(v.loosened_card)},
      // KernelBench's names, as its reward code reads them. runtime stays null (never -1)
      // until bench measures it, so "not measured" cannot be mistaken for a time.
      {"compiled", v.compiled},
      {"correctness", correct},
      {"runtime", optional_number(v.runtime_ms)},
      {"ref_runtime", optional_number(v.ref_runtime_ms)},
      // What runtime measures ("host_cpu": CPU time on the host backend, not a GPU time;
      // "cuda_events": GPU time of the launch plan after an L2 flush).
      {"timer", v.timer.empty() ? json(nullptr) : json(v.timer)},
      {"speedup", optional_number(speedup)},
      {"speedup_ci", speedup_ci}, // 95%, from the medians' noise
      // The problem's baseline, timed in this run or recorded on this GPU (null where there is
      // none that fits).
      {"baseline_runtime", optional_number(v.baseline_runtime_ms)},
      {"baseline", v.baseline_runtime_ms ? json(v.baseline) : json(nullptr)},
      {"baseline_timed", v.baseline_runtime_ms ? json(v.baseline_timed) : json(nullptr)},
      {"baseline_speedup", v.baseline_runtime_ms && v.runtime_ms && *v.runtime_ms > 0
                               ? json_number(*v.baseline_runtime_ms / *v.runtime_ms)
                               : json(nullptr)},
      {"fraction_of_floor", optional_number(v.fraction_of_floor)},
      {"resources", std::move(resources)},
      {"memory_bytes", v.memory_bytes ? json(*v.memory_bytes) : json(nullptr)},
      {"ref_memory_bytes", v.ref_memory_bytes ? json(*v.ref_memory_bytes) : json(nullptr)},
      // Bench: the pooled latency distributions and the SLO (null until bench times a case).
      {"latency", latency_json(v.latency)},
      {"metadata",
       {{"reason", reason_name(v.reason)},
        {"message", message},
        {"hardware", v.manifest.gpu},
        {"backend", v.manifest.backend},
        {"trust", v.manifest.trust},
        {"timer", v.timer}}},
      {"log_error_ratio", std::move(ratio_json)},
      // An ERROR is the problem's or kjudge's fault: such a sample is dropped, never scored.
      {"reward",
       {{"eligible", v.outcome == Outcome::pass || v.outcome == Outcome::fail},
        {"correct", correct},
        {"fraction_passed", json_number(v.fraction_passed())},
        {"log_error_ratio", optional_number(worst_ratio)},
        {"speedup", optional_number(speedup)},
        // How far the verdict is to be trusted: 1, or on the host the fraction of the
        // candidate's lines that its cases ran times the problem's scale they reached.
        {"confidence", json_number(v.lines_run ? v.lines_run->confidence() : 1.0)}}},
  };
}

namespace {

class JsonReporter final : public Reporter {
public:
  JsonReporter(std::ostream& out, ReportOptions options) : out_(out), options_(options) {}
  void report(const Verdict& verdict) override {
    // replace: compiler messages may carry bytes that are not UTF-8; a report must still parse.
    out_ << to_json(verdict, options_).dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    out_.flush();
  }

private:
  std::ostream& out_;
  ReportOptions options_;
};

json location_json(const Location& where) {
  return {
      {"file", where.file}, {"field", where.field}, {"line", where.line}, {"column", where.column}};
}

json perturbation_json(const Perturbation& p) {
  return {{"dim", p.dim}, {"value", p.value}, {"rule", p.rule}};
}

json dims_json(const Env& dims) {
  json j = json::object();
  for (const auto& [k, v] : dims)
    j[k] = v;
  return j;
}

}  // namespace

std::unique_ptr<Reporter> make_json_reporter(std::ostream& out, ReportOptions options) {
  return std::make_unique<JsonReporter>(out, options);
}

json validation_json(const Problem& problem, const ValidationReport& report) {
  json sets = json::array();
  for (const auto& s : report.shapes.sets)
    sets.push_back(
        {{"id", s.id},
         {"hidden", s.hidden},
         {"dims", dims_json(s.dims)},
         {"perturbation", s.perturbation ? perturbation_json(*s.perturbation) : json(nullptr)}});
  json rejected = json::array();
  for (const auto& r : report.shapes.rejected) {
    json j = perturbation_json(r.perturbation);
    j["base"] = r.base_id;
    j["why"] = r.why;
    rejected.push_back(std::move(j));
  }
  json diagnostics = json::array();
  for (const auto& d : report.diagnostics)
    diagnostics.push_back({{"severity", severity_name(d.severity)},
                           {"where", location_json(d.where)},
                           {"message", d.message},
                           {"text", format_diagnostic(d)}});
  return {{"problem", problem.name},
          {"dir", problem.dir.string()},
          {"hash", problem.hash},
          {"ok", report.ok()},
          {"shape_sets", std::move(sets)},
          {"rejected", std::move(rejected)},
          {"diagnostics", std::move(diagnostics)}};
}

json case_plan_json(const Problem& problem, const CasePlan& plan) {
  json cases = json::array();
  for (const auto& c : plan.cases)
    cases.push_back({{"id", c.id},
                     {"class", c.case_class()},
                     {"shape_set", c.shapes.id},
                     {"hidden", c.shapes.hidden},
                     {"seed", c.seed},
                     {"transform", c.transform.label()},
                     {"special", c.special ? json{{"input", c.special->input},
                                                  {"kind", special_kind_name(c.special->kind)}}
                                           : json(nullptr)}});
  json skipped = json::array();
  for (const auto& s : plan.skipped)
    skipped.push_back({{"what", s.what}, {"why", s.why}});
  return {{"problem", problem.name},
          {"hash", problem.hash},
          {"cases", std::move(cases)},
          {"skipped", std::move(skipped)}};
}

}  // namespace kj
