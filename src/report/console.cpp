// The console verdict: what a person reads in a terminal, in a few lines. The first line alone
// answers "did it pass, and if not, where": `PASS softmax (54/54 cases)` or
// `FAIL(mismatch) softmax: case 1a2b3c4d:public0:1:id`. Below it, for each failing output of
// the first few failing cases, the evidence a kernel engineer needs to start debugging (how
// many elements, which bound and why that bound, the worst element, the first mismatches, the
// error percentiles, the failed slices), then the command that replays the case alone.
// Also the text of `kjudge validate` and `kjudge cases`.
#include <cmath>
#include <map>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kjudge/report.hpp"

namespace kj {

namespace {

std::string stopped_early_note() {
  return fmt::format(" (stopped early: over {:g}x the reference's time)", kStopEarlyFactor);
}

constexpr int kFirstShown = 5;   // first mismatches listed per output
constexpr int kSlicesShown = 3;  // failed slices listed per output

// Short numbers for errors and bounds; values get more digits so two f32 that differ in the
// last place do not print alike.
std::string num(double x) {
  return fmt::format("{:.3g}", x);
}
std::string val(double x) {
  return fmt::format("{:.9g}", x);
}

std::string index_text(const ElementReport& e) {
  if (e.index.empty()) return fmt::format("#{}", e.flat);
  return fmt::format("[{}]", fmt::join(e.index, ", "));
}

std::string element_text(const ElementReport& e) {
  std::string s = fmt::format("{} value {} expected {} error {}", index_text(e), val(e.value),
                              val(e.expected), num(e.error));
  if (!std::isnan(e.allowed)) s += fmt::format(" allowed {}", num(e.allowed));
  return s;
}

std::string outcome_text(Outcome o, Reason r, bool color) {
  std::string word(outcome_name(o));
  if (o == Outcome::fail || o == Outcome::error) word += fmt::format("({})", reason_name(r));
  if (!color) return word;
  const char* code = o == Outcome::pass    ? "32"
                     : o == Outcome::fail  ? "31"
                     : o == Outcome::error ? "35"
                                           : "33";
  return fmt::format("\x1b[1;{}m{}\x1b[0m", code, word);
}

void print_percentiles(std::ostream& out, const ErrorStats& s) {
  out << fmt::format("    {:<11} {:>10} {:>10} {:>10} {:>10}{}\n", "error", "p50", "p99", "p99.9",
                     "max", s.binned ? "  (binned: p50-p99.9 at most 1/16 below)" : "");
  auto row = [&](const char* name, const Percentiles& p) {
    out << fmt::format("      {:<9} {:>10} {:>10} {:>10} {:>10}\n", name, num(p.p50), num(p.p99),
                       num(p.p999), num(p.max));
  };
  row("abs", s.abs);
  row("rel", s.rel);
  row("ulp", s.ulp);
}

void print_output(std::ostream& out, const OutputFinding& f, const ReportOptions& o) {
  if (f.pass()) {
    out << fmt::format("  output {}: {}\n", f.output,
                       outcome_text(Outcome::pass, f.reason, o.color));
    return;
  }
  out << fmt::format("  output {}: {}{}\n", f.output,
                     outcome_text(reason_outcome(f.reason), f.reason, o.color),
                     f.message.empty() ? "" : " " + f.message);
  if (!f.counts()) out << fmt::format("    {:<11} {}\n", "excused", f.excused_by_reference);
  std::string counts =
      fmt::format("{} of {} ({:.3g}%)", f.mismatches, f.count, 100.0 * f.mismatch_fraction);
  if (f.nonfinite > 0) counts += fmt::format(", {} non-finite", f.nonfinite);
  if (f.excused > 0) counts += fmt::format("; {} excused by the NaN rule", f.excused);
  if (f.overflows_excused > 0)
    counts += fmt::format("; {} excused as overflows of the precision", f.overflows_excused);
  out << fmt::format("    {:<11} {}\n", "mismatches", counts);
  const BoundReport& b = f.bound;
  if (!b.policy.empty()) {
    std::string bound =
        fmt::format("{} against {}", b.policy, b.expected.empty() ? "golden" : b.expected);
    if (!std::isnan(b.max_bound)) bound += fmt::format(", max {}", num(b.max_bound));
    if (!std::isnan(b.rms_bound)) bound += fmt::format(", rms {}", num(b.rms_bound));
    out << fmt::format("    {:<11} {}\n", "bound", bound);
    if (!b.source.empty()) out << fmt::format("    {:<11} {}\n", "from", b.source);
    if (std::isnan(b.max_error))
      // NaN where a number is expected (an element never written, or computed as NaN): no
      // error figure covers it, and the statistics below leave it out.
      out << fmt::format("    {:<11} no error figure: elements hold NaN where the expected value "
                         "is a number (never written, or computed as NaN)\n",
                         "reached");
    else
      out << fmt::format("    {:<11} max {}, rms {}\n", "reached", num(b.max_error),
                         num(b.rms_error));
  }
  const bool nan_only = std::isnan(b.max_error) && f.stats.abs.max == 0 && f.stats.rel.max == 0;
  if (f.worst) out << fmt::format("    {:<11} {}\n", "worst", element_text(*f.worst));
  for (std::size_t i = 0; i < f.first.size() && i < kFirstShown; ++i)
    out << fmt::format("    {:<11} {}\n", i == 0 ? "first" : "", element_text(f.first[i]));
  if (f.first.size() > kFirstShown)
    out << fmt::format("    {:<11} ... {} more listed in the JSON report\n", "",
                       f.first.size() - kFirstShown);
  if (!nan_only) print_percentiles(out, f.stats);
  for (const auto& r : f.regions)
    out << fmt::format("    {:<11} {}: {} of {} elements beyond its bound, {} allowed "
                       "(reference: {}){}\n",
                       "region", r.region, r.errors, r.elements, r.allowed, r.reference_errors,
                       r.pass() ? "" : " FAIL");
  if (f.failed_slice_count > 0) {
    out << fmt::format("    {:<11} {} failed\n", "slices", f.failed_slice_count);
    for (std::size_t i = 0; i < f.failed_slices.size() && i < kSlicesShown; ++i) {
      const SliceFailure& s = f.failed_slices[i];
      out << fmt::format("    {:<11} slice {}: max {} (bound {}), rms {} (bound {})\n", "", s.slice,
                         num(s.max_error), num(s.max_bound), num(s.rms_error), num(s.rms_bound));
    }
  }
}

void print_case_body(std::ostream& out, const CaseFinding& c, const ReportOptions& o) {
  // The case's message is usually one output's ("y: 3 of 4096 ..."), which the output's own
  // line repeats; print it only when it says something else (a crash, a timeout).
  bool repeated = false;
  for (const auto& f : c.outputs)
    repeated = repeated || (!f.pass() && c.message == f.output + ": " + f.message);
  if (!c.message.empty() && !repeated) out << "  " << c.message << '\n';
  for (const auto& f : c.outputs)
    print_output(out, f, o);
}

class ConsoleReporter final : public Reporter {
public:
  ConsoleReporter(std::ostream& out, ReportOptions options) : out_(out), options_(options) {}

  void report(const Verdict& v) override {
    const std::string& problem = v.manifest.problem;
    const std::string head = outcome_text(v.outcome, v.reason, options_.color);
    std::vector<const CaseFinding*> failing;
    for (const auto& c : v.cases)
      if (!c.pass() && !c.excluded) failing.push_back(&c);
    const CaseFinding* first = nullptr;
    if (v.first_failing_case)
      for (const auto* c : failing)
        if (c->case_id == *v.first_failing_case) first = c;

    if (v.outcome == Outcome::pass) {
      out_ << fmt::format("{} {} ({}/{} cases)\n", head, problem, v.cases_passed, v.cases_total);
    } else if (first && is_redacted(*first, options_)) {
      out_ << fmt::format("{} {}: a {} case (details withheld)\n", head, problem,
                          first->case_class);
    } else if (v.first_failing_case) {
      out_ << fmt::format("{} {}: case {}\n", head, problem, *v.first_failing_case);
      if (first) {
        print_case_body(out_, *first, options_);
      } else if (!v.message.empty()) {
        out_ << "  " << v.message << '\n';
      }
    } else {
      out_ << fmt::format("{} {}{}\n", head, problem, v.message.empty() ? "" : ": " + v.message);
    }

    // Further failing cases: the first few in full (their outputs may fail differently),
    // the rest counted.
    int shown = first ? 1 : 0;
    std::size_t rest = 0;
    for (const auto* c : failing) {
      if (c == first) continue;
      if (shown >= options_.max_cases_shown) {
        ++rest;
        continue;
      }
      ++shown;
      const std::string what = outcome_text(reason_outcome(c->reason), c->reason, options_.color);
      if (is_redacted(*c, options_)) {
        out_ << fmt::format("{} a {} case (details withheld)\n", what, c->case_class);
        continue;
      }
      out_ << fmt::format("{} case {}\n", what, c->case_id);
      print_case_body(out_, *c, options_);
    }
    if (rest > 0) out_ << fmt::format("... and {} more failing cases\n", rest);

    if (!v.replay_command.empty() && v.outcome != Outcome::pass &&
        !(first && is_redacted(*first, options_)))
      out_ << "replay: " << v.replay_command << '\n';
    if (v.outcome != Outcome::pass && v.cases_total > 0)
      out_ << fmt::format("{}/{} cases passed\n", v.cases_passed, v.cases_total);
    if (!v.preconditions.empty()) print_preconditions(v);
    if (v.lines_run) print_lines_run(*v.lines_run, v.manifest.candidate);
    if (v.timer == "cuda_events") {
      print_gpu_bench(v);
    } else {
      for (const CaseFinding& c : v.cases) {
        if (!c.timing || is_redacted(c, options_)) continue;
        const SampleStats cand = sample_stats(c.timing->candidate_ms);
        const SampleStats ref = sample_stats(c.timing->reference_ms);
        out_ << fmt::format("timed {}: {} ms (IQR {}-{}, {} runs), reference {} ms", c.case_id,
                            num(cand.median), num(cand.q1), num(cand.q3), cand.samples,
                            num(ref.median));
        if (cand.median > 0) out_ << fmt::format(", speedup {}x", num(ref.median / cand.median));
        if (c.timing->stopped_early) out_ << stopped_early_note();
        out_ << '\n';
      }
    }
    if (v.latency) print_latency(*v.latency, v.timer);
    if (v.runtime_ms) {
      out_ << fmt::format("runtime {} ms", num(*v.runtime_ms));
      if (v.ref_runtime_ms) out_ << fmt::format(" (reference {} ms)", num(*v.ref_runtime_ms));
      if (v.ref_runtime_ms && *v.runtime_ms > 0)
        out_ << fmt::format(", speedup {}x", num(*v.ref_runtime_ms / *v.runtime_ms));
      if (v.speedup_low && v.speedup_high)
        out_ << fmt::format(" [{}, {}]", num(*v.speedup_low), num(*v.speedup_high));
      if (v.fraction_of_floor)
        out_ << fmt::format(", {:.0f}% of the physical floor's speed", 100 * *v.fraction_of_floor);
      if (v.timer == "host_cpu")
        out_ << ": CPU time of the launches on the host backend, not a GPU time";
      out_ << '\n';
      if (v.baseline_runtime_ms && *v.runtime_ms > 0)
        out_ << fmt::format(
            "baseline {}: {} ms {}, speedup {}x\n", v.baseline, num(*v.baseline_runtime_ms),
            v.baseline_timed ? "timed in this run" : "recorded on " + v.manifest.gpu,
            num(*v.baseline_runtime_ms / *v.runtime_ms));
    }
    for (const auto& s : v.skips)
      out_ << s << '\n';
    if (!v.defences_disabled.empty())
      out_ << fmt::format("UNSAFE: test switches turned off {}: this verdict judges nothing\n",
                          fmt::join(v.defences_disabled, ", "));
    if (!v.loosened_card.empty())
      out_ << fmt::format("LOOSENED (--allow-loosen): {}\n", v.loosened_card);
    // A host verdict says so: it was not measured on a GPU and its cases may be a budget.
    if (v.manifest.backend == "host")
      out_ << "host backend (trust = host)"
           << (v.manifest.case_budget.empty() ? "" : ": " + v.manifest.case_budget) << '\n';
    out_.flush();
  }

private:
  // Prominent, since the candidate was judged on fewer cases than the problem has: which
  // preconditions, how many cases they kept out, and the shape sets of those not hidden.
  void print_preconditions(const Verdict& v) {
    std::set<std::string> sets;
    std::int64_t hidden = 0;
    for (const CaseFinding& c : v.cases) {
      if (!c.excluded) continue;
      if (c.hidden) {
        ++hidden;
        continue;
      }
      sets.insert(c.shape_set);
    }
    out_ << fmt::format("PRECONDITIONS: the candidate requires {}: judged on {} of {} cases; {} "
                        "not run count as not passed",
                        fmt::join(v.preconditions, ", "), v.cases_total - v.cases_excluded,
                        v.cases_total, v.cases_excluded);
    if (!sets.empty()) out_ << fmt::format(" (shape sets {}", fmt::join(sets, ", "));
    if (hidden > 0) out_ << fmt::format("{}{} hidden", sets.empty() ? " (" : "; ", hidden);
    if (!sets.empty() || hidden > 0) out_ << ")";
    out_ << '\n';
  }

  // Host coverage: a passing host verdict is only as strong as the lines its cases ran and the
  // scale they reached.
  void print_lines_run(const LinesRun& r, const std::string& candidate) {
    if (r.scale_reached < 1)
      out_ << fmt::format("scale: the host cases reached {:.2f} of the problem's own shapes (log "
                          "of their work); this host verdict is weaker (confidence {:.2f})\n",
                          r.scale_reached, r.confidence());
    if (!r.measured) {
      out_ << "coverage: not measured: " << r.not_measured << '\n';
      return;
    }
    const std::string added =
        r.added_cases.empty() ? ""
                              : fmt::format(" (larger cases added: {})", fmt::join(r.added_cases, ", "));
    if (r.unrun.empty()) {
      out_ << fmt::format("coverage: all {} lines of the candidate's code ran on the host cases{}\n",
                          r.lines, added);
      return;
    }
    std::vector<std::string> spans;
    for (std::size_t i = 0; i < r.unrun.size();) {
      std::size_t j = i;
      while (j + 1 < r.unrun.size() && r.unrun[j + 1] == r.unrun[j] + 1)
        ++j;
      spans.push_back(j == i ? fmt::format("{}", r.unrun[i])
                             : fmt::format("{}-{}", r.unrun[i], r.unrun[j]));
      i = j + 1;
    }
    const std::string file = std::filesystem::path(candidate).filename().string();
    out_ << fmt::format("COVERAGE: {} of the candidate's {} lines with code never ran on the host "
                        "cases: {} {}{}{}; this host verdict is weaker (confidence {:.2f})\n",
                        r.unrun.size(), r.lines, file.empty() ? "lines" : file,
                        fmt::join(spans, ", "), added,
                        r.stopped.empty() ? "" : "; no more were added: " + r.stopped,
                        r.confidence());
  }

  // Bench: the pooled latency distributions, the old kernel's beside the candidate's, and the
  // SLO's result, on one line (a canary's dashboard).
  void print_latency(const Latency& l, const std::string& timer) {
    auto distribution = [](const LatencyDistribution& d) {
      return fmt::format("p50 {} ms, p90 {} ms, p99 {} ms, max {} ms (n {})", num(d.p50),
                         num(d.p90), num(d.p99), num(d.max), d.n);
    };
    out_ << fmt::format("latency ({}, every timed run): candidate {}",
                        timer == "cuda_events" ? "GPU time" : "CPU time",
                        distribution(l.candidate));
    if (l.against) out_ << "; --against kernel " << distribution(*l.against);
    if (l.slo_p99_ms)
      out_ << fmt::format("; SLO p99 <= {} ms: {}", num(*l.slo_p99_ms),
                          l.slo_met() ? "met" : "MISSED");
    out_ << '\n';
  }

  // The GPU bench's table: per timed case the medians, their spread and the floor, then the
  // launches' resources and the memory held.
  void print_gpu_bench(const Verdict& v) {
    bool header = false;
    for (const CaseFinding& c : v.cases) {
      if (!c.timing || is_redacted(c, options_)) continue;
      const CaseTiming& t = *c.timing;
      const SampleStats cand = sample_stats(t.candidate_ms);
      const SampleStats ref = sample_stats(t.reference_ms);
      if (!header) {
        out_ << fmt::format("{:<28} {:>11} {:>11} {:>8} {:>10} {:>8} {:>8} {:>7}\n", "timed case",
                            "candidate", "reference", "speedup", "floor", "of floor", "samples",
                            "noise");
        header = true;
      }
      out_ << fmt::format(
          "{:<28} {:>8} ms {:>8} ms {:>7}x {:>7} ms {:>7.0f}% {:>8} {:>6.2f}%{}\n", c.case_id,
          num(cand.median), num(ref.median), cand.median > 0 ? num(ref.median / cand.median) : "-",
          num(t.floor_ms), cand.median > 0 ? 100 * t.floor_ms / cand.median : 0.0, cand.samples,
          100 * t.noise, t.stopped_early ? stopped_early_note() : t.converged ? "" : " (time cap)");
      out_ << fmt::format("  candidate IQR {}-{} ms, {} throttled sample(s) dropped, SM clock {:.0f} "
                          "MHz, {} input sets, {:.2f} s; floor {:.4g} bytes at {:.0f} GB/s\n",
                          num(cand.q1), num(cand.q3), t.throttled, t.sm_clock_mhz, t.rotation,
                          t.wall_s, t.floor_bytes, t.bandwidth_gbs);
      if (t.floor_flops > 0)
        out_ << fmt::format("  floor {:.4g} FLOPs at {:.1f} TFLOP/s ({}): {} ms\n", t.floor_flops,
                            t.peak_tflops, t.peak_unit, num(t.floor_flops_ms));
      else if (!t.peak_unit.empty())
        out_ << fmt::format("  {}\n", t.peak_unit);
      if (!t.baseline_samples_ms.empty())
        out_ << fmt::format("  baseline {}: {} ms, speedup {}x\n", t.baseline,
                            num(*t.baseline_ms),
                            cand.median > 0 ? num(*t.baseline_ms / cand.median) : "-");
    }
    for (const LaunchResources& r : v.resources)
      out_ << fmt::format("  {}: {} registers, {} + {} bytes shared, {} bytes local, {} threads, "
                          "{} blocks/SM, occupancy {:.0f}% ({:.0f}% with the grid's waves)\n",
                          r.launch, r.registers, r.static_shared, r.dynamic_shared, r.local_bytes,
                          r.block_threads, r.blocks_per_sm, 100 * r.occupancy,
                          100 * r.grid_occupancy);
    if (v.memory_bytes && v.ref_memory_bytes)
      out_ << fmt::format("  memory: candidate {:.1f} MiB, reference {:.1f} MiB\n",
                          static_cast<double>(*v.memory_bytes) / (1 << 20),
                          static_cast<double>(*v.ref_memory_bytes) / (1 << 20));
  }

  std::ostream& out_;
  ReportOptions options_;
};

std::string dims_text(const Env& dims) {
  std::string s;
  for (const auto& [k, v] : dims)
    s += fmt::format("{}{}={}", s.empty() ? "" : ", ", k, v);
  return "{" + s + "}";
}

}  // namespace

std::unique_ptr<Reporter> make_console_reporter(std::ostream& out, ReportOptions options) {
  return std::make_unique<ConsoleReporter>(out, options);
}

void print_validation(std::ostream& out, std::ostream& diagnostics, const Problem& problem,
                      const ValidationReport& report) {
  // A problem that did not load has no hash to show.
  out << fmt::format("{}{}: {}\n", problem.name,
                     problem.hash.empty() ? "" : " " + problem.short_hash(),
                     report.ok() ? "ok" : "invalid");
  // Base sets first, then each vary dim's surviving perturbations grouped by the set they
  // came from, so an author sees at a glance which sizes a kernel will meet.
  // dim -> (base set, values), base sets in canonical order.
  std::map<std::string, std::vector<std::pair<std::string, std::vector<std::string>>>> by_dim;
  for (const auto& s : report.shapes.sets) {
    if (!s.perturbation) {
      out << fmt::format("  {:<10} {}{}\n", s.id, dims_text(s.dims), s.hidden ? " (hidden)" : "");
      continue;
    }
    const auto& p = *s.perturbation;
    const auto tilde = s.id.find('~');
    const std::string base = tilde == std::string::npos ? s.id : s.id.substr(0, tilde);
    auto& bases = by_dim[p.dim];
    if (bases.empty() || bases.back().first != base) bases.push_back({base, {}});
    bases.back().second.push_back(fmt::format("{} ({})", p.value, p.rule));
  }
  for (std::size_t r = 0; r < problem.dims.hidden_ranges.size(); ++r) {
    std::string bounds;
    for (const auto& [dim, b] : problem.dims.hidden_ranges[r].bounds)
      bounds += fmt::format("{}{}={}", bounds.empty() ? "" : ", ", dim,
                            b.first == b.second ? fmt::format("{}", b.first)
                                                : fmt::format("[{}, {}]", b.first, b.second));
    out << fmt::format("  range{:<5} {{{}}} (hidden: {} drawn with the secret)\n", r, bounds,
                       problem.dims.hidden_draws);
  }
  for (const auto& dim : problem.dims.vary) {
    auto it = by_dim.find(dim);
    if (it == by_dim.end()) {
      out << fmt::format("  vary {}: no perturbation survives\n", dim);
      continue;
    }
    for (const auto& [base, values] : it->second)
      out << fmt::format("  vary {} of {}: {}\n", dim, base, fmt::join(values, ", "));
  }
  for (const auto& r : report.shapes.rejected)
    out << fmt::format("  rejected {}={} ({}) of {}: {}\n", r.perturbation.dim,
                       r.perturbation.value, r.perturbation.rule, r.base_id, r.why);
  for (const auto& d : report.diagnostics)
    diagnostics << format_diagnostic(d) << '\n';
}

void print_case_plan(std::ostream& out, const Problem& problem, const CasePlan& plan) {
  out << fmt::format("{} {}: {} cases, {} skipped\n", problem.name, problem.short_hash(),
                     plan.cases.size(), plan.skipped.size());
  for (const auto& c : plan.cases)
    out << fmt::format("{}  {}\n", c.id, c.case_class());
  for (const auto& s : plan.skipped)
    out << fmt::format("SKIP({}) {}\n", s.why, s.what);
}

}  // namespace kj
