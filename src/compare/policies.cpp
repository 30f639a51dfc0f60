// The policies compare_output judges on the host element by element (compare_internal.hpp):
// ratio, the CANN regions gate, the approximate tier's metrics (rel_l2, cosine, topk) and the
// exact comparison of integer outputs. Each fills the Work's per-element error, bound and
// verdict and returns the policy's ratio and messages; compare.cpp does the rest.
#include "compare_internal.hpp"
#include "format.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace kj::detail {

using namespace compare_format;

namespace {

// RMS of a sum of squares: long double keeps squares of f64 extremes (1e616, 1e-648) in range.
double rms_of(long double sum_squares, std::int64_t count) {
  if (count <= 0) return 0;
  return static_cast<double>(std::sqrt(sum_squares / static_cast<long double>(count)));
}

const HostTensor& need(const Work& w, const HostTensor* t, const char* what, const char* why) {
  if (!t) spec_fail(*w.spec, fmt::format("{} needs the {}, which is missing", why, what));
  return *t;
}

// The values a policy compares against: the golden rounded to the output dtype, or the
// same-precision reference.
void load_expected(Work& w, Expected e, const char* policy) {
  if (e == Expected::golden) {
    need(w, w.in->golden, "golden", policy);
    for (std::size_t i = 0; i < w.size(); ++i)
      if (w.status[i] == Status::judged) w.x[i] = w.basis[i];
  } else {
    const HostTensor& ref =
        need(w, w.in->reference, "reference (expected = \"reference\")", policy);
    const Reader read(ref);
    for (std::size_t i = 0; i < w.size(); ++i)
      if (w.status[i] == Status::judged) w.x[i] = read(i);
  }
}

} // namespace

PolicyResult judge_ratio(Work& w, const PolicySpec& p, OutputFinding& f) {
  load_expected(w, p.expected, "ratio");
  const double thr = p.threshold, mf = p.max_fraction;
  if (!(thr >= 0) || !(mf >= 0 && mf <= 1))
    spec_fail(*w.spec, fmt::format("ratio(threshold, max_fraction) needs threshold >= 0 and "
                                   "0 <= max_fraction <= 1, got {}, {}",
                                   thr, mf));
  std::vector<double> rels;
  long double r2 = 0;
  double max_rel = 0;
  std::int64_t over = 0;
  std::int64_t worst_over = -1;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w.status[i] != Status::judged) continue;
    const double c = w.c[i], x = w.x[i];
    double rel;
    if (c == x)
      rel = 0; // 0/0 where the expected is 0
    else if (!std::isfinite(x))
      rel = kInf;
    else
      rel = std::fabs(c - x) / std::max(std::fabs(x), ulp_of(w.dtype, x));
    w.err[i] = rel;
    w.allowed[i] = thr;
    w.bad[i] = !(rel <= thr);
    if (w.bad[i]) {
      ++over;
      if (worst_over < 0 || rel > w.err[static_cast<std::size_t>(worst_over)])
        worst_over = static_cast<std::int64_t>(i);
    }
    rels.push_back(rel);
    if (std::isfinite(rel)) {
      max_rel = std::max(max_rel, rel);
      r2 += static_cast<long double>(rel) * rel;
    } else {
      max_rel = kInf;
    }
  }
  const auto judged = static_cast<std::int64_t>(rels.size());
  // The most elements allowed above the threshold: the largest m with m/judged <= mf, found with
  // the same double comparison the fraction test makes, so the two can never disagree.
  std::int64_t m = 0;
  if (judged > 0) {
    m = static_cast<std::int64_t>(std::floor(mf * static_cast<double>(judged)));
    m = std::clamp<std::int64_t>(m, 0, judged);
    auto frac = [&](std::int64_t k) {
      return static_cast<double>(k) / static_cast<double>(judged);
    };
    while (m < judged && frac(m + 1) <= mf)
      ++m;
    while (m > 0 && !(frac(m) <= mf))
      --m;
  }
  PolicyResult r;
  r.element_message = false;
  r.pass = over <= m;
  // Passes iff the (m+1)-th largest relative error is within the threshold: that element's
  // ratio to the threshold is the policy's ratio.
  if (m < judged) {
    auto nth = rels.begin() + static_cast<std::ptrdiff_t>(m);
    std::nth_element(rels.begin(), nth, rels.end(), std::greater<>());
    r.ratio = safe_ratio(*nth, thr);
  }
  f.bound.policy = fmt::format("ratio({}, {})", thr, mf);
  f.bound.expected = std::string(expected_name(p.expected));
  f.bound.source = fmt::format(
      "relative error |c - e| / max(|e|, 1 ulp {} at e) above {} allowed for at most {} of "
      "the elements ({} of {})",
      dtype_name(w.dtype), thr, mf, m, judged);
  f.bound.max_bound = thr;
  f.bound.rms_bound = kNaN;
  f.bound.max_error = max_rel;
  f.bound.rms_error = rms_of(r2, judged);
  const std::string over_text = fmt::format("{} of {} elements ({}) have relative error above {}",
                                            over, judged, show_percent(over, judged), thr);
  std::string worst;
  if (worst_over >= 0) {
    const auto i = static_cast<std::size_t>(worst_over);
    worst = fmt::format("; worst at {}: {} vs {} (relative error {:.3g})",
                        show_index(w, worst_over), show(w.c[i]), show(w.x[i]), w.err[i]);
  }
  r.fail_detail = fmt::format("{}, at most {} allowed{}", over_text, m, worst);
  r.pass_detail = fmt::format("{}, within the {} allowed", over_text, m);
  return r;
}

// ---------------------------------------------------------------------------------------------
// regions: the CANN two-phase gate (numerics.md)

namespace {

enum class Region : std::uint8_t { normal, small, cancellation };

struct RegionVerdict {
  Region region;
  double error; // absolute in small/cancellation, relative in normal
  double allowed;
  bool bad;
};

RegionVerdict region_of(const RegionConstants& k, double v, double g) {
  const double a = std::fabs(g);
  const double e = std::fabs(v - g);
  if (a < k.small_boundary) return {Region::small, e, k.small_abs_bound, !(e <= k.small_abs_bound)};
  if (a < k.cancel_boundary && std::fabs(v) < k.cancel_boundary)
    return {Region::cancellation, e, k.cancel_abs_bound, !(e <= k.cancel_abs_bound)};
  const double rel = e / (a + 1e-7);
  return {Region::normal, rel, 10 * k.threshold, !(rel <= 10 * k.threshold)};
}

} // namespace

PolicyResult judge_regions(Work& w, OutputFinding& f) {
  need(w, w.in->golden, "golden", "regions");
  const HostTensor& ref = need(w, w.in->reference, "same-precision reference", "regions");
  const RegionConstants k = cann_constants(w.dtype);

  // Phase 1 on rel_i = |c - g_r| / (|g_r| + 1e-7).
  long double sum_rel = 0;
  double mare = 0;
  std::int64_t judged = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w.status[i] != Status::judged) continue;
    const double g = w.basis[i];
    const double rel = std::fabs(w.c[i] - g) / (std::fabs(g) + 1e-7);
    w.x[i] = g;
    w.err[i] = rel;
    w.allowed[i] = 10 * k.threshold;
    sum_rel += rel;
    mare = std::max(mare, rel);
    ++judged;
  }
  const double mere =
      judged > 0 ? static_cast<double>(sum_rel / static_cast<long double>(judged)) : 0.0;
  const bool phase1 = mere < k.threshold && mare < 10 * k.threshold;

  const std::string dt{dtype_name(w.dtype)};
  f.bound.policy = "regions";
  f.bound.expected = "golden";
  f.bound.max_bound = 10 * k.threshold;
  f.bound.rms_bound = k.threshold;
  f.bound.max_error = mare;
  f.bound.rms_error = mere;
  f.bound.source = fmt::format(
      "CANN gate for {}: phase 1 MERE < T={:.3g} and MARE < 10T; phase 2 regions: small "
      "|g| < {:.3g} (abs error <= {:.3g}), cancellation |g| < {:.3g} and |out| < {:.3g} (abs "
      "error <= {:.3g}), normal (rel error <= {:.3g}); counts against the reference's",
      dt, k.threshold, k.small_boundary, k.small_abs_bound, k.cancel_boundary, k.cancel_boundary,
      k.cancel_abs_bound, 10 * k.threshold);

  PolicyResult r;
  r.element_message = false;
  if (phase1) {
    r.pass = true;
    r.ratio = std::max(mere / k.threshold, mare / (10 * k.threshold));
    r.pass_detail = fmt::format("phase 1: MERE {:.3g} < {:.3g} and MARE {:.3g} < {:.3g}", mere,
                                k.threshold, mare, 10 * k.threshold);
    return r;
  }

  // Phase 2: every region's error count against the same-precision reference's.
  std::array<RegionCount, 3> counts{};
  counts[0].region = "normal";
  counts[1].region = "small";
  counts[2].region = "cancellation";
  for (std::size_t i = 0; i < w.size(); ++i) {
    const Status s = w.status[i];
    const double g = w.basis[i];
    // The reference is counted wherever the rounded golden is finite and nothing is excused.
    if (s == Status::judged || (s == Status::fail_nonfinite && std::isfinite(g))) {
      const RegionVerdict rv = region_of(k, ref.get(static_cast<std::int64_t>(i)), g);
      if (rv.bad) ++counts[static_cast<std::size_t>(rv.region)].reference_errors;
    }
    if (s != Status::judged) continue;
    const RegionVerdict cv = region_of(k, w.c[i], g);
    auto& rc = counts[static_cast<std::size_t>(cv.region)];
    ++rc.elements;
    w.err[i] = cv.error;
    w.allowed[i] = cv.allowed;
    w.bad[i] = cv.bad;
    if (cv.bad) ++rc.errors;
  }
  // Normal: none allowed where the reference has none, else twice its count; small-value and
  // cancellation: count / max(reference count, 1) <= 2.
  counts[0].allowed = 2 * counts[0].reference_errors;
  counts[1].allowed = 2 * std::max<std::int64_t>(counts[1].reference_errors, 1);
  counts[2].allowed = 2 * std::max<std::int64_t>(counts[2].reference_errors, 1);

  std::string failed;
  for (const auto& rc : counts) {
    r.ratio = std::max(r.ratio,
                       safe_ratio(static_cast<double>(rc.errors), static_cast<double>(rc.allowed)));
    if (!rc.pass()) {
      r.pass = false;
      failed += fmt::format("{}{} region {} (reference {}, allowed {})", failed.empty() ? "" : "; ",
                            rc.region, plural(rc.errors, "error", "errors"), rc.reference_errors,
                            rc.allowed);
    }
    f.regions.push_back(rc);
  }
  const std::string p1 = fmt::format("phase 1 fails (MERE {:.3g}, MARE {:.3g})", mere, mare);
  r.fail_detail = p1 + "; phase 2: " + failed;
  r.pass_detail = fmt::format("{}; phase 2 passes: errors normal {}, small {}, cancellation {}", p1,
                              counts[0].errors, counts[1].errors, counts[2].errors);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Approximate tier: named metrics

PolicyResult judge_metric(Work& w, const PolicySpec& p, OutputFinding& f) {
  if (p.expected == Expected::golden) {
    const HostTensor& golden = need(w, w.in->golden, "golden", p.metric.c_str());
    for (std::size_t i = 0; i < w.size(); ++i)
      if (w.status[i] == Status::judged) w.x[i] = golden.get(static_cast<std::int64_t>(i));
  } else {
    load_expected(w, Expected::reference, p.metric.c_str());
  }
  const double thr = p.metric_threshold;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w.status[i] != Status::judged) continue;
    w.err[i] = std::fabs(w.c[i] - w.x[i]);
    w.allowed[i] = kNaN;
  }

  PolicyResult r;
  r.element_message = false;
  double value = 0;
  std::string what;
  if (p.metric == "rel_l2" || p.metric == "cosine") {
    long double d2 = 0, c2 = 0, x2 = 0, cx = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w.status[i] != Status::judged) continue;
      const long double c = w.c[i], x = w.x[i];
      d2 += (c - x) * (c - x);
      c2 += c * c;
      x2 += x * x;
      cx += c * x;
    }
    if (p.metric == "rel_l2") {
      // ||c - g|| / ||g||; a zero golden leaves only "exactly zero" as a pass.
      if (x2 == 0)
        value = d2 == 0 ? 0.0 : kInf;
      else
        value = static_cast<double>(std::sqrt(d2) / std::sqrt(x2));
      r.pass = value <= thr;
      r.ratio = safe_ratio(value, thr);
      what = fmt::format("rel_l2 {:.3g}", value);
    } else {
      // Two zero vectors point the same way; one zero vector points nowhere.
      if (c2 == 0 && x2 == 0)
        value = 1;
      else if (c2 == 0 || x2 == 0)
        value = 0;
      else
        value = std::clamp(static_cast<double>(cx / (std::sqrt(c2) * std::sqrt(x2))), -1.0, 1.0);
      r.pass = value >= thr;
      r.ratio = safe_ratio(1 - value, 1 - thr);
      what = fmt::format("cosine {:.9g}", value);
    }
  } else if (p.metric == "topk") {
    const std::int64_t last = w.shape.empty() ? 1 : w.shape.back();
    if (p.topk <= 0 || p.topk > last)
      spec_fail(*w.spec,
                fmt::format("topk({}, ...) needs 1 <= k <= {} (the last axis)", p.topk, last));
    const std::int64_t rows = last > 0 ? w.n / last : 0;
    std::int64_t counted = 0, agree = 0;
    std::vector<std::int64_t> ic(static_cast<std::size_t>(last)), ix(ic.size());
    // Highest value first, ties to the lower index; NaN ranks below everything.
    auto top = [&](std::vector<std::int64_t>& idx, const std::vector<double>& v,
                   std::int64_t base) {
      for (std::int64_t j = 0; j < last; ++j)
        idx[static_cast<std::size_t>(j)] = j;
      auto key = [&](std::int64_t j) { return v[static_cast<std::size_t>(base + j)]; };
      auto before = [&](std::int64_t a, std::int64_t b) {
        const double va = key(a), vb = key(b);
        const bool na = std::isnan(va), nb = std::isnan(vb);
        if (na != nb) return nb; // a number before a NaN
        if (!na && va != vb) return va > vb;
        return a < b;
      };
      std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(p.topk), idx.end(),
                        before);
      std::sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(p.topk));
    };
    // Expected values of settled elements (matching Infs) rank like any other value.
    for (std::size_t i = 0; i < w.size(); ++i)
      if (w.status[i] == Status::settled) w.x[i] = w.basis[i];
    for (std::int64_t row = 0; row < rows; ++row) {
      const std::int64_t base = row * last;
      bool usable = true;
      for (std::int64_t j = 0; j < last && usable; ++j) {
        const Status s = w.status[static_cast<std::size_t>(base + j)];
        usable = s == Status::judged || s == Status::settled;
      }
      // A row with an excused or failing element has no defined top-k to agree with.
      if (!usable) continue;
      ++counted;
      top(ic, w.c, base);
      top(ix, w.x, base);
      if (std::equal(ic.begin(), ic.begin() + static_cast<std::ptrdiff_t>(p.topk), ix.begin()))
        ++agree;
    }
    value = counted > 0 ? static_cast<double>(agree) / static_cast<double>(counted) : 1.0;
    r.pass = value >= thr;
    r.ratio = safe_ratio(1 - value, 1 - thr);
    what = fmt::format("top-{} agreement {:.6g} ({} of {} rows)", p.topk, value, agree, counted);
  } else {
    spec_fail(*w.spec, fmt::format("unknown metric '{}' (rel_l2, cosine, topk)", p.metric));
  }

  const bool upper = p.metric == "rel_l2";
  f.bound.policy = p.metric == "topk" ? fmt::format("topk({}, {})", p.topk, thr)
                                      : fmt::format("{}({})", p.metric, thr);
  f.bound.expected = std::string(expected_name(p.expected));
  f.bound.source = fmt::format("{} {} {} against the {}", p.metric, upper ? "<=" : ">=", thr,
                               expected_name(p.expected));
  f.bound.max_bound = thr;
  f.bound.rms_bound = kNaN;
  f.bound.max_error = value;
  f.bound.rms_error = kNaN;
  r.fail_detail = fmt::format("{} {} {}", what, upper ? "above" : "below", thr);
  r.pass_detail = fmt::format("{} {} {}", what, upper ? "<=" : ">=", thr);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Integer outputs

namespace {

std::int64_t read_int(const HostTensor& t, std::int64_t i) {
  // get() is exact for every integer dtype but i64 beyond 2^53.
  if (t.dtype() == DType::i64) return t.data<std::int64_t>()[i];
  return static_cast<std::int64_t>(t.get(i));
}

std::int64_t saturate_int(double v) {
  constexpr double two63 = 9223372036854775808.0;
  if (v >= two63) return std::numeric_limits<std::int64_t>::max();
  if (v < -two63) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(v);
}

} // namespace

// Integer outputs of float computations (quantise, argmax) are judged exactly against the
// reference, which shares the candidate's float rounding, or against the golden rounded to the
// dtype when there is no reference. ties = "off_by_one" accepts |c - e| <= 1 for outputs where
// a value on a rounding boundary may legitimately go either way. The float policy is not used.
PolicyResult judge_integers(Work& w, OutputFinding& f) {
  const HostTensor* ref = w.in->reference;
  const HostTensor* golden = w.in->golden;
  if (!ref && !golden)
    spec_fail(*w.spec, "an integer output needs a reference or a golden to compare against");
  const std::string ties = w.spec->ties.value_or("exact");
  if (ties != "exact" && ties != "off_by_one")
    spec_fail(*w.spec, fmt::format("unknown ties rule '{}' (exact, off_by_one)", ties));
  const long double tol = ties == "off_by_one" ? 1 : 0;

  PolicyResult r;
  double max_e = 0;
  long double e2 = 0;
  std::int64_t judged = 0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const auto fi = static_cast<std::int64_t>(i);
    const std::int64_t c = read_int(*w.in->actual, fi);
    w.c[i] = static_cast<double>(c);
    std::int64_t x;
    if (ref) {
      x = read_int(*ref, fi);
    } else if (is_integer(golden->dtype())) {
      x = read_int(*golden, fi);
    } else {
      // Tested before rounding: round_to takes a NaN to 0 for an integer dtype.
      const double g = golden->get(fi);
      w.basis[i] = g;
      if (std::isnan(g)) {
        // No integer carries a NaN: exempt/ignore excuse the element, propagate cannot be met.
        w.status[i] = w.in->nan == NanRule::propagate ? Status::fail_mismatch : Status::excused;
        continue;
      }
      x = saturate_int(round_to(w.dtype, g));
    }
    w.basis[i] = static_cast<double>(x);
    w.status[i] = Status::judged;
    const long double d = std::fabs(static_cast<long double>(c) - static_cast<long double>(x));
    w.x[i] = static_cast<double>(x);
    w.err[i] = static_cast<double>(d);
    w.allowed[i] = static_cast<double>(tol);
    w.bad[i] = d > tol;
    if (w.bad[i]) r.pass = false;
    r.ratio = std::max(r.ratio, safe_ratio(w.err[i], w.allowed[i]));
    max_e = std::max(max_e, w.err[i]);
    e2 += d * d;
    ++judged;
  }
  f.bound.policy = ties == "exact" ? "exact (integer)" : "exact (integer, ties = \"off_by_one\")";
  f.bound.expected = ref ? "reference" : "golden";
  f.bound.source = ties == "exact"
                       ? std::string("integer outputs are compared exactly")
                       : std::string("integer outputs: |c - e| <= 1 (ties = \"off_by_one\")");
  f.bound.max_bound = static_cast<double>(tol);
  f.bound.rms_bound = kNaN;
  f.bound.max_error = max_e;
  f.bound.rms_error = rms_of(e2, judged);
  r.pass_detail = fmt::format("{} equal to the {}{}", plural(w.n, "element", "elements"),
                              f.bound.expected, ties == "exact" ? "" : " within 1");
  return r;
}

} // namespace kj::detail
