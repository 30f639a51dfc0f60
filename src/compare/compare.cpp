// compare_output: one output of one case judged on the host, exactly as docs/design.md
// "Comparison" defines it. The order is fixed: first the non-finite rules against the golden
// rounded to the output dtype (they settle every element where the golden is not finite, and
// fail every non-finite candidate value they do not excuse), then the policy on the elements
// left, then the statistics and the one-line message every report shows. relative, allclose,
// ulp and exact go to the one pass the GPU comparator runs too (pass.cpp, bit for bit the same
// findings); the rest (ratio, regions, the metrics, integer outputs) are judged element by
// element, here (the inputs' checks, the non-finite rules, the statistics and the message) and
// in policies.cpp (the policies), and their tests are the definition of all of them.
#include "kjudge/compare.hpp"

#include "compare_internal.hpp"
#include "format.hpp"
#include "pass.hpp"
#include "percentiles.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace kj {

using namespace compare_format;
using detail::judge_integers;
using detail::judge_metric;
using detail::judge_ratio;
using detail::judge_regions;
using detail::PolicyResult;
using detail::Reader;
using detail::show_index;
using detail::Status;
using detail::Work;

std::string detail::show_index(const Work& w, std::int64_t flat) {
  return compare_format::show_index(w.shape, flat);
}

namespace {

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

// One ulp of the output's dtype at x (1 for an integer dtype): the pass's ulp_at_hd, kj::ulp_of
// from the exponent bits, which the generic ulp_of (a format lookup, ilogb, ldexp) cost too much
// for at every element.
double unit_at(DType t, double x) {
  return is_float(t) ? detail::ulp_at_hd(static_cast<int>(t), x) : 1.0;
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
      e.allowed = kNaN;
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
      s = {true, kInf, kInf};
      break;
    case Status::fail_mismatch:
      if (finite_where_not++ == 0) first_finite_where_not = fi;
      s = {true, kInf, kInf};
      break;
    case Status::judged: {
      const double e = std::isnan(w.err[i]) ? kInf : w.err[i];
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
    if (s.failing && f.first.size() < kReportMax) f.first.push_back(report(i));
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
  if (nonfinite > 0) {
    const auto u = static_cast<std::size_t>(first_nonfinite);
    parts.push_back(nonfinite_part(nonfinite, show_index(w, first_nonfinite), w.c[u], w.basis[u],
                                   w.in->golden != nullptr, w.dtype, w.in->reference_name));
  }
  if (finite_where_not > 0)
    parts.push_back(finite_where_not_part(finite_where_not, at(first_finite_where_not)));
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
  w.basis.assign(w.size(), kNaN);
  w.status.assign(w.size(), Status::judged);
  w.x.assign(w.size(), kNaN);
  w.err.assign(w.size(), kNaN);
  w.allowed.assign(w.size(), kNaN);
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
  // These policies' percentiles come with the judging; dropped when unasked, as the pass does.
  if (!statistics_wanted(in, !f.pass())) {
    f.stats = ErrorStats{};
    f.stats.made = false;
  }
  return f;
}

std::optional<ScaledError> error_over_golden_scale(DType output, const HostTensor& golden,
                                                   const HostTensor& values) {
  double max_g = 0, sq_g = 0, max_e = 0, sq_e = 0;
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < golden.numel(); ++i) {
    const double g = golden.get(i), v = values.get(i);
    // Where the dtype cannot hold the golden, nothing in it can: no one's error.
    if (!std::isfinite(g) || !std::isfinite(round_to(output, g))) continue;
    const double e = std::isfinite(v) ? std::fabs(v - g) : std::numeric_limits<double>::infinity();
    max_g = std::max(max_g, std::fabs(g));
    sq_g += g * g;
    max_e = std::max(max_e, e);
    sq_e += e * e;
    ++n;
  }
  if (n == 0) return std::nullopt;
  const double floor = float_format(output).min_normal, count = static_cast<double>(n);
  return ScaledError{max_e / std::max(max_g, floor),
                     std::sqrt(sq_e / count) / std::max(std::sqrt(sq_g / count), floor)};
}

} // namespace kj
