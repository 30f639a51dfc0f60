// kj::suite::summarize (kjudge/suite.hpp): one result per sample in, the figures a benchmark
// reports out, each with the words of how it was aggregated, so a "1.56x" always says which
// mean over what.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "kjudge/suite.hpp"

namespace kj::suite {

using nlohmann::json;

std::optional<double> pass_at_k(int n, int c, int k) {
  if (k <= 0 || n < k || c < 0 || c > n) return std::nullopt;
  if (n - c < k) return 1.0;
  // 1 - prod_{i = n-c+1}^{n} (1 - k / i): the ratio C(n-c, k) / C(n, k) term by term.
  double none = 1.0;
  for (int i = n - c + 1; i <= n; ++i) none *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - none;
}

namespace {

std::optional<double> number_at(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

struct Means {
  std::optional<double> geometric, arithmetic;
  int count = 0;
};

Means means_of(const std::vector<double>& speedups) {
  Means m;
  double logs = 0, sum = 0;
  for (const double s : speedups) {
    if (!(s > 0) || !std::isfinite(s)) continue;
    logs += std::log(s);
    sum += s;
    ++m.count;
  }
  if (m.count > 0) {
    m.geometric = std::exp(logs / m.count);
    m.arithmetic = sum / m.count;
  }
  return m;
}

constexpr int kPassK[] = {1, 5, 10};
constexpr double kFastP[] = {0, 1, 1.2, 2};

struct ProblemTally {
  std::string name, category;
  int samples = 0, compiled = 0, correct = 0;
  bool has_baseline = false;
  std::optional<double> best;           // the fastest correct sample's speedup that fast_p uses
  std::optional<double> best_reference; // and its speedup over the reference
  std::string best_sample;
  std::vector<double> correct_speedups; // over the reference
};

std::vector<ProblemTally> tally(const Suite& suite, const std::vector<Outcome>& outcomes) {
  std::vector<ProblemTally> tallies;
  std::map<std::string, std::size_t> at;
  for (const Entry& e : suite.problems) {
    at[e.name] = tallies.size();
    ProblemTally t;
    t.name = e.name;
    t.category = e.category;
    tallies.push_back(std::move(t));
  }
  for (const Outcome& o : outcomes)
    if (o.baseline_speedup && at.contains(o.problem)) tallies[at[o.problem]].has_baseline = true;
  for (const Outcome& o : outcomes) {
    if (!at.contains(o.problem)) continue;
    ProblemTally& t = tallies[at[o.problem]];
    ++t.samples;
    t.compiled += o.compiled ? 1 : 0;
    if (!o.correct) continue;
    ++t.correct;
    if (o.speedup) t.correct_speedups.push_back(*o.speedup);
    const std::optional<double> s = t.has_baseline ? o.baseline_speedup : o.speedup;
    if (s && (!t.best || *s > *t.best)) {
      t.best = s;
      t.best_reference = o.speedup;
      t.best_sample = o.sample;
    }
  }
  return tallies;
}

json pass_at_ks(const std::vector<const ProblemTally*>& problems) {
  json out = json::object();
  for (const int k : kPassK) {
    double sum = 0;
    int counted = 0;
    for (const ProblemTally* t : problems)
      if (const auto p = pass_at_k(t->samples, t->correct, k)) {
        sum += *p;
        ++counted;
      }
    out[fmt::format("pass@{}", k)] = counted ? json(sum / counted) : json(nullptr);
  }
  return out;
}

// The figures over a set of problems (the suite's, or a category's).
json aggregate(const std::vector<const ProblemTally*>& problems) {
  int with_samples = 0, solved = 0, baselined = 0;
  std::vector<double> speedups;
  for (const ProblemTally* t : problems) {
    with_samples += t->samples > 0;
    solved += t->correct > 0;
    baselined += t->has_baseline;
    speedups.insert(speedups.end(), t->correct_speedups.begin(), t->correct_speedups.end());
  }
  json fast = json::object();
  for (const double p : kFastP) {
    int count = 0;
    for (const ProblemTally* t : problems) count += t->best && *t->best > p;
    fast[fmt::format("fast_{}", p)] = with_samples ? json(double(count) / with_samples) : json(nullptr);
  }
  const Means m = means_of(speedups);
  return {
      {"problems", with_samples},
      {"accuracy", with_samples ? json(double(solved) / with_samples) : json(nullptr)},
      {"pass_at_k", pass_at_ks(problems)},
      {"fast_p", fast},
      {"speedup_geometric_mean", optional_json(m.geometric)},
      {"speedup_arithmetic_mean", optional_json(m.arithmetic)},
      {"correct_samples_timed", m.count},
      {"aggregation",
       {{"accuracy", "problems with at least one correct sample / problems with samples"},
        {"pass_at_k", "unbiased estimator 1 - C(n-c,k)/C(n,k) per problem (null where n < k), "
                      "averaged over the problems where it is defined"},
        {"fast_p", fmt::format("problems whose fastest correct sample is faster than p times the "
                               "baseline where the problem has one ({} of {}), else the "
                               "reference / problems with samples",
                               baselined, with_samples)},
        {"speedup_geometric_mean", "geometric mean over every correct, timed sample of "
                                   "reference time / sample time"},
        {"speedup_arithmetic_mean", "arithmetic mean over the same samples (labelled: it "
                                    "overweights large speedups)"}}}};
}

} // namespace

Outcome outcome_of(const json& line) {
  Outcome o;
  o.problem = line.value("problem", "");
  o.sample = line.value("sample", "");
  o.compiled = line.value("compiled", false);
  o.correct = line.value("correct", false);
  o.speedup = number_at(line, "speedup");
  o.baseline_speedup = number_at(line, "baseline_speedup");
  o.seconds = number_at(line, "seconds");
  if (const auto it = line.find("phase_seconds"); it != line.end() && it->is_object()) {
    o.compile_seconds = number_at(*it, "compile");
    o.check_seconds = number_at(*it, "check");
    o.bench_seconds = number_at(*it, "bench");
  }
  return o;
}

json summarize(const Suite& suite, const std::vector<Outcome>& outcomes) {
  const std::vector<ProblemTally> tallies = tally(suite, outcomes);
  std::vector<const ProblemTally*> all;
  std::map<std::string, std::vector<const ProblemTally*>> by_category;
  json problems = json::array(), without = json::array();
  for (const ProblemTally& t : tallies) {
    if (t.samples == 0) { // not in this run (--only, a shard) or no samples given for it
      without.push_back(t.name);
      continue;
    }
    all.push_back(&t);
    by_category[t.category].push_back(&t);
    problems.push_back({{"problem", t.name},
                        {"category", t.category},
                        {"samples", t.samples},
                        {"compiled", t.compiled},
                        {"correct", t.correct},
                        {"fastest_correct", t.best_sample.empty() ? json(nullptr) : json(t.best_sample)},
                        {"speedup", optional_json(t.best_reference)},
                        {"speedup_for_fast_p", optional_json(t.best)},
                        {"speedup_for_fast_p_against", t.has_baseline ? "baseline" : "reference"}});
  }
  json categories = json::object();
  for (const auto& [name, members] : by_category) categories[name] = aggregate(members);
  double total = 0, compile = 0, check = 0, bench = 0;
  for (const Outcome& o : outcomes) {
    total += o.seconds.value_or(0);
    compile += o.compile_seconds.value_or(0);
    check += o.check_seconds.value_or(0);
    bench += o.bench_seconds.value_or(0);
  }
  const json judge_seconds = {
      {"total", total}, {"compile", compile}, {"check", check}, {"bench", bench},
      {"aggregation", "the judge's own seconds, summed over the samples (compile: the "
                      "candidate's start; bench: the timing); samples are judged side by side, "
                      "so the run's wall time is shorter"}};
  return {{"schema_version", 1},
          {"suite", suite.name},
          {"samples", outcomes.size()},
          {"problems_without_samples", without},
          {"suite_figures", aggregate(all)},
          {"categories", categories},
          {"judge_seconds", judge_seconds},
          {"problems", problems}};
}

namespace {

std::string cell(const json& v, const char* format = "{:.3f}") {
  if (v.is_null()) return "-";
  if (v.is_number_float()) return fmt::format(fmt::runtime(format), v.get<double>());
  return v.is_string() ? v.get<std::string>() : v.dump();
}

} // namespace

std::string summary_markdown(const json& summary) {
  const json& s = summary["suite_figures"];
  std::string md = fmt::format("# {}: {} samples over {} problems\n\n", summary["suite"].get<std::string>(),
                               summary["samples"].get<std::size_t>(), s["problems"].get<std::size_t>());
  if (!summary["problems_without_samples"].empty()) {
    std::string names;
    for (const json& n : summary["problems_without_samples"])
      names += (names.empty() ? "" : ", ") + n.get<std::string>();
    md += fmt::format("Problems without samples in this run (not counted): {}.\n\n", names);
  }
  md += "| figure | value | how |\n|---|---|---|\n";
  md += fmt::format("| accuracy | {} | {} |\n", cell(s["accuracy"]), s["aggregation"]["accuracy"].get<std::string>());
  for (const char* k : {"pass@1", "pass@5", "pass@10"}) // json sorts keys: @10 before @5
    md += fmt::format("| {} | {} | {} |\n", k, cell(s["pass_at_k"][k]),
                      s["aggregation"]["pass_at_k"].get<std::string>());
  for (const auto& [k, v] : s["fast_p"].items())
    md += fmt::format("| {} | {} | {} |\n", k, cell(v), s["aggregation"]["fast_p"].get<std::string>());
  md += fmt::format("| speedup, geometric mean | {} | {} |\n", cell(s["speedup_geometric_mean"], "{:.3f}x"),
                    s["aggregation"]["speedup_geometric_mean"].get<std::string>());
  md += fmt::format("| speedup, arithmetic mean | {} | {} |\n\n", cell(s["speedup_arithmetic_mean"], "{:.3f}x"),
                    s["aggregation"]["speedup_arithmetic_mean"].get<std::string>());
  const json& t = summary["judge_seconds"];
  md += fmt::format("Judge time: {:.1f} s (compile {:.1f} s, check {:.1f} s, bench {:.1f} s), {}.\n\n",
                    t["total"].get<double>(), t["compile"].get<double>(), t["check"].get<double>(),
                    t["bench"].get<double>(), t["aggregation"].get<std::string>());
  md += "| category | problems | accuracy | pass@1 | geometric mean speedup |\n|---|---|---|---|---|\n";
  for (const auto& [name, c] : summary["categories"].items())
    md += fmt::format("| {} | {} | {} | {} | {} |\n", name, c["problems"].dump(), cell(c["accuracy"]),
                      cell(c["pass_at_k"]["pass@1"]), cell(c["speedup_geometric_mean"], "{:.3f}x"));
  md += "\n| problem | samples | compiled | correct | fastest correct | speedup |\n|---|---|---|---|---|---|\n";
  for (const json& p : summary["problems"])
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", p["problem"].get<std::string>(), p["samples"].dump(),
                      p["compiled"].dump(), p["correct"].dump(), cell(p["fastest_correct"]),
                      cell(p["speedup"], "{:.3f}x"));
  return md;
}

} // namespace kj::suite
