// The decomposition's terms and statistics (localize_internal.hpp): signed per element, in the
// statistic of the output's gate, summarised as p50/p99/p99.9/max of |e| beside the reference's;
// the orthogonality diagnostic; the stage to fix.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "kjudge/compare.hpp"
#include "localize/localize_internal.hpp"

namespace kj::localize {

namespace {

constexpr const char* kTermNames[5] = {"inherited", "own", "interaction", "total", "conversion"};
enum : int { inherited, own, interaction, total, conversion };

double percentile(std::vector<float>& v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) -
                 (q > 0 ? 1 : 0);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

double tail(const TermStats& s) { return s.p999; }

// kernel / reference, where the reference's tail is zero: infinite for any error at all.
double ratio(double kernel, double reference) {
  if (reference > 0) return kernel / reference;
  return kernel > 0 ? INFINITY : 1.0;
}

} // namespace

Statistic::Statistic(const OutputSpec& out) {
  switch (out.policy.kind) {
  case PolicySpec::Kind::ulp:
  case PolicySpec::Kind::ratio:
    kind_ = Kind::relative;
    name_ = "relative";
    break;
  case PolicySpec::Kind::regions:
    kind_ = Kind::regions;
    small_ = cann_constants(out.dtype).cancel_boundary;
    name_ = "regions: absolute where |golden| is small or cancels, relative elsewhere";
    break;
  default:
    name_ = "absolute";
  }
}

double Statistic::operator()(double error, double golden) const {
  switch (kind_) {
  case Kind::relative:
    return error / (std::fabs(golden) + 1e-30);
  case Kind::regions:
    return std::fabs(golden) < small_ ? error : error / (std::fabs(golden) + 1e-7);
  case Kind::absolute:
    break;
  }
  return error;
}

void Series::add(double e, bool sampled) {
  if (!std::isfinite(e)) return;
  sum += e;
  sum_sq += e * e;
  max = std::max(max, std::fabs(e));
  ++count;
  if (sampled) sample_.push_back(static_cast<float>(std::fabs(e)));
}

TermStats Series::stats() const {
  TermStats s;
  std::vector<float> v = sample_;
  s.p50 = percentile(v, 0.5);
  s.p99 = percentile(v, 0.99);
  s.p999 = percentile(v, 0.999);
  s.max = max;
  s.count = count;
  if (count > 0) {
    s.mean = sum / static_cast<double>(count);
    s.rms = std::sqrt(sum_sq / static_cast<double>(count));
  }
  return s;
}

Accumulator::Accumulator(const Problem& problem)
    : problem_(problem), cuts_(problem.stages.size(), std::vector<AtOutput>(problem.outputs.size())),
      stages_(problem.stages.size()) {
  for (const OutputSpec& out : problem.outputs) statistics_.emplace_back(out);
}

void Accumulator::stage_error(std::size_t stage, const HostTensor& exact, const HostTensor& device,
                              const HostTensor& reference) {
  const std::int64_t n = exact.numel();
  const std::int64_t stride = std::max<std::int64_t>(1, n / kSampleCap);
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = exact.get(i);
    stages_[stage].first.add(device.get(i) - g, i % stride == 0);
    stages_[stage].second.add(reference.get(i) - g, i % stride == 0);
  }
}

void Accumulator::cut(std::size_t stage, std::size_t output, const CutTensors& t) {
  AtOutput& a = cuts_[stage][output];
  a.seen = true;
  const Statistic& f = statistics_[output];
  const std::int64_t n = t.truth.numel();
  const std::int64_t stride = std::max<std::int64_t>(1, n / kSampleCap);
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = t.truth.get(i);
    if (!std::isfinite(g)) continue;
    const bool sampled = i % stride == 0;
    // The downstream launches' own error is counted from the exact stage as the interface
    // dtype holds it (exact_C(round(exact_B))): the rounding is the conversion's term, never
    // charged to them.
    const double converted = t.conversion.get(i);
    const double tot = t.total.get(i) - g, inh = t.inherited.get(i) - g,
                 ow = t.own.get(i) - converted, conv = converted - g;
    const double rtot = t.ref_total.get(i) - g, rinh = t.ref_inherited.get(i) - g,
                 rown = t.ref_own.get(i) - converted;
    const double k[5] = {inh, ow, tot - inh - ow, tot, conv};
    const double r[5] = {rinh, rown, rtot - rinh - rown, rtot, conv};
    for (int j = 0; j < 5; ++j) {
      a.kernel[j].add(f(k[j], g), sampled);
      a.reference[j].add(f(r[j], g), sampled);
    }
    if (std::isfinite(inh * ow)) a.cross += f(inh, g) * f(ow, g);
    if (std::isfinite(rinh * rown)) a.ref_cross += f(rinh, g) * f(rown, g);
  }
}

void Accumulator::finish(Localization& l) const {
  for (std::size_t s = 0; s < stages_.size(); ++s)
    l.stage_errors.push_back({problem_.stages[s].name, stages_[s].first.stats(),
                              stages_[s].second.stats()});
  for (std::size_t s = 0; s < cuts_.size(); ++s)
    for (std::size_t o = 0; o < cuts_[s].size(); ++o) {
      const AtOutput& a = cuts_[s][o];
      if (!a.seen) continue;
      CutAtOutput c;
      c.stage = problem_.stages[s].name;
      c.output = problem_.outputs[o].name;
      c.statistic = statistics_[o].name();
      for (int j = 0; j < 5; ++j)
        c.terms.push_back({kTermNames[j], a.kernel[j].stats(), a.reference[j].stats()});
      // The diagnostic, from every element's moments (never the sample).
      Orthogonality& d = c.orthogonality;
      const double n = static_cast<double>(std::max<std::int64_t>(a.kernel[total].count, 1));
      const TermStats& inh = c.terms[inherited].kernel;
      const TermStats& ow = c.terms[own].kernel;
      const TermStats& tot = c.terms[total].kernel;
      const TermStats& inter = c.terms[interaction].kernel;
      d.total_sq = tot.rms * tot.rms;
      d.sum_sq = inh.rms * inh.rms + ow.rms * ow.rms;
      const double cov = a.cross / n - inh.mean * ow.mean;
      const double sd = std::sqrt(std::max(0.0, inh.rms * inh.rms - inh.mean * inh.mean)) *
                        std::sqrt(std::max(0.0, ow.rms * ow.rms - ow.mean * ow.mean));
      d.correlation = sd > 0 ? cov / sd : 0;
      for (const auto& [name, t] : {std::pair{"inherited", inh}, std::pair{"own", ow}})
        if (std::fabs(t.mean) > 0.1 * t.rms)
          d.failed.push_back(fmt::format("{}'s mean {:.3g} is not near zero (rms {:.3g})", name,
                                         t.mean, t.rms));
      if (std::fabs(d.correlation) > 0.2)
        d.failed.push_back(fmt::format("inherited and own are correlated ({:.2f})", d.correlation));
      if (inter.rms > 0.1 * tot.rms)
        d.failed.push_back(fmt::format("the interaction is not small (rms {:.3g} of total {:.3g})",
                                       inter.rms, tot.rms));
      l.cuts.push_back(std::move(c));
    }
  name_culprit(problem_, l);
}

void name_culprit(const Problem& problem, Localization& l) {
  // The worst output's ratio at a cut, for one term.
  auto worst = [&](const std::string& stage, int term) {
    double r = 0;
    for (const CutAtOutput& c : l.cuts)
      if (c.stage == stage)
        r = std::max(r, ratio(tail(c.terms[term].kernel), tail(c.terms[term].reference)));
    return r;
  };
  l.culprit = "none";
  l.factor = 1;
  for (const StageSpec& s : problem.stages) {
    const double r = worst(s.name, inherited);
    if (r > kOwnsTheError) {
      l.culprit = "stage:" + s.name;
      l.factor = r;
      l.explanation = fmt::format(
          "the error inherited through stage '{}' is {:.3g}x the reference's (p99.9): the "
          "launches up to it own the error; its tail must come down {:.3g}x to reach the "
          "reference's",
          s.name, r, r);
      return;
    }
  }
  const std::string last = problem.stages.back().name;
  const double r = worst(last, own);
  std::string outputs;
  for (const OutputSpec& o : problem.outputs) outputs += (outputs.empty() ? "" : ",") + o.name;
  if (r > kOwnsTheError) {
    l.culprit = "stage:" + outputs;
    l.factor = r;
    l.explanation = fmt::format(
        "what stage '{}' inherits is within {:.3g}x of the reference's, but the launches after "
        "it add {:.3g}x the reference's own error (p99.9): they own the error; their tail must "
        "come down {:.3g}x",
        last, kOwnsTheError, r, r);
    return;
  }
  l.explanation = fmt::format("every stage's error is within {:.3g}x of the reference's (p99.9)",
                              kOwnsTheError);
}

} // namespace kj::localize
