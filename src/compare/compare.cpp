// compare_output: one output of one case judged on the host, exactly as docs/design.md
// "Comparison" defines it. The order is fixed: first the non-finite rules against the golden
// rounded to the output dtype (they settle every element where the golden is not finite, and
// fail every non-finite candidate value they do not excuse), then the policy on the elements
// left, then the statistics and the one-line message every report shows. relative, allclose,
// ulp and exact go to the one pass the GPU comparator runs too (pass.cpp, bit for bit the same
// findings); this file judges the rest (ratio, regions, the metrics, integer outputs) element
// by element, and its tests are the definition of all of them.
#include "kjudge/compare.hpp"

#include "format.hpp"
#include "pass.hpp"
#include "percentiles.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace kj {

using namespace compare_format;

namespace {


// What the non-finite rules made of an element.
enum class Status : std::uint8_t {
  judged,         // rounded golden finite, candidate finite: the policy decides
  settled,        // rounded golden non-finite and the candidate matches it
  excused,        // the NaN rule exempts the element from any judgement
  // In a case with extreme (dtype-max, infinite) inputs, a non-finite candidate value where
  // the precision overflows: the golden is finite but beyond the dtype's range (it rounds to
  // Inf; a different order of the same sum meets +Inf and -Inf and gives NaN, or the other
  // Inf), or it is within range but the same-precision reference overflows there too. Which
  // non-finite value an overflow ends in depends on the order of operations, so it is not
  // judged. An infinite golden (an Inf input passed through) is still matched by sign.
  precision_overflow,
  fail_nonfinite, // a non-finite candidate value the rules do not allow
  fail_mismatch,  // a finite candidate value where the rounded golden is not finite
};

struct Work {
  const CompareInputs* in = nullptr;
  const OutputSpec* spec = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  std::int64_t n = 0;
  std::vector<double> c;     // candidate
  std::vector<double> basis; // what the non-finite rules judge against (rounded golden)
  std::vector<Status> status;
  // Filled by the policy for judged elements (NaN, NaN, NaN, 0 elsewhere).
  std::vector<double> x;       // the value compared against
  std::vector<double> err;     // error in the policy's unit
  std::vector<double> allowed; // the element's bound in that unit, NaN if not elementwise
  std::vector<std::uint8_t> bad;

  std::size_t size() const { return static_cast<std::size_t>(n); }
};

// The arrays of a Work, kept from one compare_output to the next on the same thread. A 2^24
// element output needs about a gigabyte of them, and faulting in fresh pages cost more than
// all the judging; `kjudge check` compares many cases of the same size in a row.
struct Scratch {
  std::vector<double> c, basis, x, err, allowed;
  std::vector<Status> status;
  std::vector<std::uint8_t> bad;
  std::vector<double> abs_e, rel_e, ulp_e; // finish's statistics
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

// Lends the scratch arrays to a Work for its lifetime, exception or not.
struct BorrowScratch {
  Work& w;
  explicit BorrowScratch(Work& work) : w(work) { swap_arrays(); }
  ~BorrowScratch() { swap_arrays(); }
  BorrowScratch(const BorrowScratch&) = delete;
  BorrowScratch& operator=(const BorrowScratch&) = delete;
  void swap_arrays() {
    Scratch& s = scratch();
    w.c.swap(s.c);
    w.basis.swap(s.basis);
    w.x.swap(s.x);
    w.err.swap(s.err);
    w.allowed.swap(s.allowed);
    w.status.swap(s.status);
    w.bad.swap(s.bad);
  }
};

struct PolicyResult {
  bool pass = true;
  double ratio = 0;            // error / allowed of the whole policy: passes iff <= 1
  bool element_message = true; // "m of n elements beyond the bound" describes a failure
  std::string fail_detail;     // policy-level part of a failing message
  std::string pass_detail;     // the message of a pass
};

// One ulp of the output's dtype at x (1 for an integer dtype): the pass's ulp_at_hd, kj::ulp_of
// from the exponent bits, which the generic ulp_of (a format lookup, ilogb, ldexp) cost too much
// for at every element.
double unit_at(DType t, double x) {
  return is_float(t) ? detail::ulp_at_hd(static_cast<int>(t), x) : 1.0;
}

// Element reads of a tensor: f32 and f64 straight from the buffer, other dtypes through get(),
// whose per-element dtype switch and bounds check were a large part of judging a big output.
struct Reader {
  const HostTensor* t = nullptr;
  const float* f32 = nullptr;
  const double* f64 = nullptr;

  Reader() = default;
  explicit Reader(const HostTensor& tensor) : t(&tensor) {
    if (tensor.dtype() == DType::f32) f32 = tensor.data<float>();
    if (tensor.dtype() == DType::f64) f64 = tensor.data<double>();
  }
  double operator()(std::size_t i) const {
    if (f32) return static_cast<double>(f32[i]);
    if (f64) return f64[i];
    return t->get(static_cast<std::int64_t>(i));
  }
};

std::string show_index(const Work& w, std::int64_t flat) {
  return compare_format::show_index(w.shape, flat);
}

// RMS of a sum of squares: long double keeps squares of f64 extremes (1e616, 1e-648) in range.
double rms_of(long double sum_squares, std::int64_t count) {
  if (count <= 0) return 0;
  return static_cast<double>(std::sqrt(sum_squares / static_cast<long double>(count)));
}

// ---------------------------------------------------------------------------------------------
// Inputs and the non-finite rules

void check_tensor(const OutputSpec& spec, const HostTensor& t, const HostTensor& actual,
                  const char* what, bool same_dtype) {
  if (same_dtype && t.dtype() != spec.dtype)
    spec_fail(spec, fmt::format("the {} is {} but the output is declared {}", what,
                                dtype_name(t.dtype()), dtype_name(spec.dtype)));
  if (t.shape() != actual.shape())
    spec_fail(spec, fmt::format("the {} has shape {} but the candidate output has {}", what,
                                shape_string(t.shape()), shape_string(actual.shape())));
}

const HostTensor& need(const Work& w, const HostTensor* t, const char* what, const char* why) {
  if (!t) spec_fail(*w.spec, fmt::format("{} needs the {}, which is missing", why, what));
  return *t;
}

// docs/design.md "Comparison", against the golden rounded to the output dtype: ±Inf must match
// in position and sign; a non-finite value where the rounded golden is finite fails; NaN
// positions per the problem's rule. A NaN is never a wildcard: only the golden's NaN (or, under
// `ignore`, a NaN planted in the inputs) excuses anything, never a NaN of the candidate or of
// the reference.
void classify(Work& w) {
  const NanRule rule = w.in->nan;
  const bool nan_anywhere = rule == NanRule::ignore && w.in->nan_in_inputs;
  // Precision overflows: only in cases with extreme inputs, and only against a golden (without
  // one the reference is the basis itself).
  const bool reference_beside_golden = w.in->extreme_in_inputs && w.in->golden &&
                                       w.in->reference && is_float(w.in->reference->dtype());
  const Reader read_ref = reference_beside_golden ? Reader(*w.in->reference) : Reader();
  const Reader read_golden = reference_beside_golden ? Reader(*w.in->golden) : Reader();
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double b = w.basis[i];
    const double v = w.c[i];
    Status s;
    if (std::isnan(b)) {
      if (rule != NanRule::propagate)
        s = Status::excused;
      else if (std::isnan(v))
        s = Status::settled;
      else if (std::isinf(v))
        s = Status::fail_nonfinite;
      else
        s = Status::fail_mismatch;
    } else if (std::isinf(b)) {
      if (v == b)
        s = Status::settled;
      else if (std::isnan(v) && nan_anywhere)
        s = Status::excused;
      else if (std::isfinite(v))
        s = Status::fail_mismatch;
      else if (reference_beside_golden && std::isfinite(read_golden(i)))
        s = Status::precision_overflow; // a finite true value beyond the dtype's range
      else
        s = Status::fail_nonfinite; // NaN, or Inf of the other sign
    } else {
      if (std::isfinite(v))
        s = Status::judged;
      else if (std::isnan(v) && nan_anywhere)
        s = Status::excused;
      else if (reference_beside_golden && !std::isfinite(read_ref(i)))
        s = Status::precision_overflow;
      else
        s = Status::fail_nonfinite;
    }
    w.status[i] = s;
  }
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
      rel = k_inf;
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
      max_rel = k_inf;
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
  f.bound.rms_bound = k_nan;
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
    w.allowed[i] = k_nan;
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
        value = d2 == 0 ? 0.0 : k_inf;
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
  f.bound.rms_bound = k_nan;
  f.bound.max_error = value;
  f.bound.rms_error = k_nan;
  r.fail_detail = fmt::format("{} {} {}", what, upper ? "above" : "below", thr);
  r.pass_detail = fmt::format("{} {} {}", what, upper ? "<=" : ">=", thr);
  return r;
}

// ---------------------------------------------------------------------------------------------
// Integer outputs

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
  f.bound.rms_bound = k_nan;
  f.bound.max_error = max_e;
  f.bound.rms_error = rms_of(e2, judged);
  r.pass_detail = fmt::format("{} equal to the {}{}", plural(w.n, "element", "elements"),
                              f.bound.expected, ties == "exact" ? "" : " within 1");
  return r;
}

// ---------------------------------------------------------------------------------------------
// Statistics, worst element, message

void finish(Work& w, const PolicyResult& r, OutputFinding& f) {
  std::int64_t nonfinite = 0, finite_where_not = 0, bad = 0, excused = 0, overflows = 0;
  std::int64_t first_nonfinite = -1, first_finite_where_not = -1;
  std::int64_t worst = -1, worst_bad = -1;
  // Severity orders elements for "worst": failing before passing, then by error / allowed,
  // then by the error itself; the first of equals wins.
  struct Severity {
    bool failing = false;
    double ratio = 0, error = 0;
    bool operator>(const Severity& o) const {
      if (failing != o.failing) return failing;
      if (ratio != o.ratio) return ratio > o.ratio;
      return error > o.error;
    }
  };
  Severity worst_s, worst_bad_s;
  std::vector<double>& abs_e = scratch().abs_e;
  std::vector<double>& rel_e = scratch().rel_e;
  std::vector<double>& ulp_e = scratch().ulp_e;
  abs_e.clear();
  rel_e.clear();
  ulp_e.clear();
  abs_e.reserve(w.size());
  rel_e.reserve(w.size());
  ulp_e.reserve(w.size());

  auto report = [&](std::size_t i) {
    ElementReport e;
    e.flat = static_cast<std::int64_t>(i);
    e.index = unravel(w.shape, e.flat);
    e.value = w.c[i];
    if (w.status[i] == Status::judged) {
      e.expected = w.x[i];
      e.error = w.err[i];
      e.allowed = w.allowed[i];
    } else {
      e.expected = w.basis[i];
      e.error = std::fabs(w.c[i] - w.basis[i]);
      e.allowed = k_nan;
    }
    return e;
  };

  for (std::size_t i = 0; i < w.size(); ++i) {
    const auto fi = static_cast<std::int64_t>(i);
    Severity s;
    switch (w.status[i]) {
    case Status::excused:
      ++excused;
      continue;
    case Status::precision_overflow:
      ++overflows;
      continue;
    case Status::settled:
      continue;
    case Status::fail_nonfinite:
      if (nonfinite++ == 0) first_nonfinite = fi;
      s = {true, k_inf, k_inf};
      break;
    case Status::fail_mismatch:
      if (finite_where_not++ == 0) first_finite_where_not = fi;
      s = {true, k_inf, k_inf};
      break;
    case Status::judged: {
      const double e = std::isnan(w.err[i]) ? k_inf : w.err[i];
      s = {w.bad[i] != 0, std::isnan(w.allowed[i]) ? e : safe_ratio(w.err[i], w.allowed[i]), e};
      if (w.bad[i]) {
        ++bad;
        if (worst_bad < 0 || s > worst_bad_s) worst_bad = fi, worst_bad_s = s;
      }
      const double x = w.x[i];
      if (std::isfinite(x)) {
        const double a = std::fabs(w.c[i] - x);
        const double unit = unit_at(w.dtype, x);
        abs_e.push_back(a);
        // Saturated at the largest double: "never inf", even for f64 errors over a subnormal.
        const double big = std::numeric_limits<double>::max();
        rel_e.push_back(w.c[i] == x ? 0.0 : std::min(a / std::max(std::fabs(x), unit), big));
        ulp_e.push_back(std::min(a / unit, big));
      }
      break;
    }
    }
    if (s.failing && f.first.size() < k_report_max) f.first.push_back(report(i));
    if (worst < 0 || s > worst_s) worst = fi, worst_s = s;
  }
  if (worst >= 0) f.worst = report(static_cast<std::size_t>(worst));
  f.stats.abs = exact_percentiles_in_place(abs_e);
  f.stats.rel = exact_percentiles_in_place(rel_e);
  f.stats.ulp = exact_percentiles_in_place(ulp_e);

  f.nonfinite = nonfinite;
  f.excused = excused;
  f.overflows_excused = overflows;
  f.mismatches = nonfinite + finite_where_not + bad;
  f.mismatch_fraction =
      w.n > 0 ? static_cast<double>(f.mismatches) / static_cast<double>(w.n) : 0.0;

  const bool policy_fails = !r.pass;
  if (nonfinite > 0)
    f.reason = Reason::nonfinite;
  else if (finite_where_not > 0 || policy_fails)
    f.reason = Reason::mismatch;
  else
    f.reason = Reason::none;

  f.log_error_ratio = log_error_ratio(r.ratio, nonfinite > 0 || finite_where_not > 0, f.pass());

  std::vector<std::string> parts;
  auto at = [&](std::int64_t i) {
    const auto u = static_cast<std::size_t>(i);
    const double e = w.status[u] == Status::judged ? w.x[u] : w.basis[u];
    return fmt::format("{}: {} vs {}", show_index(w, i), show(w.c[u]), show(e));
  };
  if (nonfinite > 0)
    parts.push_back(fmt::format("{} where the rounded golden does not allow {}; first at {}",
                                plural(nonfinite, "non-finite value", "non-finite values"),
                                nonfinite == 1 ? "it" : "them", at(first_nonfinite)));
  if (finite_where_not > 0)
    parts.push_back(fmt::format("{} where the rounded golden is not finite; first at {}",
                                plural(finite_where_not, "finite value", "finite values"),
                                at(first_finite_where_not)));
  if (policy_fails) {
    if (r.element_message && bad > 0)
      parts.push_back(fmt::format("{} of {} elements ({}) beyond the bound; worst at {}", bad, w.n,
                                  show_percent(bad, w.n), at(worst_bad)));
    if (!r.fail_detail.empty()) parts.push_back(r.fail_detail);
  }
  if (parts.empty()) {
    f.message = r.pass_detail;
    if (excused > 0)
      f.message +=
          fmt::format(" ({} excused by the NaN rule)", plural(excused, "element", "elements"));
    if (overflows > 0)
      f.message += fmt::format(" ({} non-finite where the precision overflows on the extreme "
                               "inputs, not judged)",
                               plural(overflows, "element", "elements"));
  } else {
    for (const auto& p : parts)
      f.message += (f.message.empty() ? "" : "; ") + p;
  }
}

} // namespace

OutputFinding compare_output(const CompareInputs& in) {
  KJ_EXPECTS(in.spec != nullptr, "compare_output needs the output's spec");
  const OutputSpec& spec = *in.spec;
  if (!in.actual) spec_fail(spec, "no candidate tensor to compare");
  const HostTensor& actual = *in.actual;
  if (actual.dtype() != spec.dtype)
    spec_fail(spec, fmt::format("the candidate tensor is {} but the output is declared {}",
                                dtype_name(actual.dtype()), dtype_name(spec.dtype)));
  if (in.reference) check_tensor(spec, *in.reference, actual, "reference", true);
  if (in.golden) check_tensor(spec, *in.golden, actual, "golden", false);

  // relative, allclose, ulp and exact: one pass, the GPU comparator's, replayed here.
  const PassInputs pass_in = pass_inputs(in);
  if (const std::optional<detail::compare_params> p = pass_params(pass_in)) {
    HostPassSource source(in);
    return judge_in_one_pass(pass_in, *p, source);
  }

  Work w;
  const BorrowScratch borrowed(w);
  w.in = &in;
  w.spec = &spec;
  w.dtype = spec.dtype;
  w.shape = actual.shape();
  w.n = actual.numel();
  w.c.resize(w.size());
  w.basis.assign(w.size(), k_nan);
  w.status.assign(w.size(), Status::judged);
  w.x.assign(w.size(), k_nan);
  w.err.assign(w.size(), k_nan);
  w.allowed.assign(w.size(), k_nan);
  w.bad.assign(w.size(), 0);

  OutputFinding f;
  f.output = spec.name;
  f.count = w.n;

  PolicySpec policy = spec.policy;
  // The exact tier is bit-identity whatever policy the output names (docs/design.md "Comparison").
  if (in.tier == Tier::exact && policy.kind != PolicySpec::Kind::exact) {
    policy.kind = PolicySpec::Kind::exact;
    policy.expected = Expected::reference;
  }
  if (in.tier == Tier::approximate && policy.kind != PolicySpec::Kind::metric &&
      !is_integer(w.dtype))
    spec_fail(spec, fmt::format("the approximate tier judges by a metric (rel_l2, cosine, topk), "
                                "not by '{}'",
                                policy.text.empty() ? policy_kind_name(policy.kind)
                                                    : std::string_view(policy.text)));

  PolicyResult r;
  if (is_integer(w.dtype)) {
    r = judge_integers(w, f);
  } else {
    // The non-finite rules judge against the golden rounded to the output dtype; without a
    // golden (an exact-tier copy judged against the reference alone) the reference stands in.
    if (in.golden) {
      // round_to, as the pass rounds (the conversion instruction for f32, x itself for f64).
      const Reader read(*in.golden);
      const int dtype = static_cast<int>(w.dtype);
      for (std::size_t i = 0; i < w.size(); ++i)
        w.basis[i] = detail::round_basis(dtype, read(i));
    } else if (in.reference) {
      const Reader read(*in.reference);
      for (std::size_t i = 0; i < w.size(); ++i)
        w.basis[i] = read(i);
    } else {
      spec_fail(spec, "a float output needs a golden or a reference to compare against");
    }
    const Reader read_actual(actual);
    for (std::size_t i = 0; i < w.size(); ++i)
      w.c[i] = read_actual(i);
    classify(w);
    switch (policy.kind) {
    case PolicySpec::Kind::ratio:
      r = judge_ratio(w, policy, f);
      break;
    case PolicySpec::Kind::regions:
      r = judge_regions(w, f);
      break;
    case PolicySpec::Kind::metric:
      r = judge_metric(w, policy, f);
      break;
    default:
      throw InternalError("relative, allclose, ulp and exact are judged by the pass (pass.cpp)");
    }
  }
  finish(w, r, f);
  return f;
}

} // namespace kj
