// The elementwise policies judged from one pass (pass.hpp): the pass's parameters from an
// output's spec, and the finding built from a pass's statistics, which the host's pass
// (host_pass.cpp) and the GPU comparator share.
#include "pass.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "format.hpp"

namespace kj {

using namespace compare_format;
using detail::cmp_element;
using detail::cmp_severity;
using detail::cmp_stats;
using detail::compare_params;

PassInputs pass_inputs(const CompareInputs& in) {
  return pass_inputs_of(in, in.actual->shape(), in.golden != nullptr, in.reference != nullptr);
}

SliceLayout slice_layout(const OutputSpec& spec, const Shape& shape) {
  SliceLayout l;
  l.inner = 1;
  for (const std::int64_t d : shape)
    l.inner *= d;
  if (spec.policy.kind != PolicySpec::Kind::relative || !spec.slice) return l;
  const int rank = static_cast<int>(shape.size());
  const int axis = *spec.slice;
  if (axis < 0 || axis >= rank)
    spec_fail(spec, fmt::format("slice = {} is not an axis of a rank-{} output", axis, rank));
  l.axis = axis;
  l.outer = 1;
  l.inner = 1;
  for (int d = 0; d < axis; ++d)
    l.outer *= shape[static_cast<std::size_t>(d)];
  l.extent = shape[static_cast<std::size_t>(axis)];
  for (int d = axis + 1; d < rank; ++d)
    l.inner *= shape[static_cast<std::size_t>(d)];
  return l;
}

std::optional<compare_params> pass_params(const PassInputs& in) {
  const OutputSpec& spec = *in.spec;
  const DType t = spec.dtype;
  if (!is_float(t)) return std::nullopt;
  PolicySpec policy = spec.policy;
  if (in.tier == Tier::exact && policy.kind != PolicySpec::Kind::exact) {
    policy.kind = PolicySpec::Kind::exact;
    policy.expected = Expected::reference;
  }
  if (in.tier == Tier::approximate) return std::nullopt;

  compare_params p{};
  switch (policy.kind) {
  case PolicySpec::Kind::relative: {
    p.policy = detail::cmp_relative;
    if (!in.has_golden) spec_fail(spec, "relative needs the golden, which is missing");
    if (!in.has_reference)
      spec_fail(spec, "relative needs the same-precision reference, which is missing");
    const double k = policy.k.value_or(default_relative_k(t));
    if (!(k >= 0) || !std::isfinite(k))
      spec_fail(spec, fmt::format("relative(k) needs a finite k >= 0, got {}", k));
    break;
  }
  case PolicySpec::Kind::allclose: {
    p.policy = detail::cmp_allclose;
    const auto [d_rtol, d_atol] = torch_default_tolerances(t);
    p.rtol = policy.rtol.value_or(d_rtol);
    p.atol = policy.atol.value_or(d_atol);
    if (!(p.rtol >= 0) || !(p.atol >= 0))
      spec_fail(spec,
                fmt::format("allclose needs rtol, atol >= 0, got {}, {}", p.rtol, p.atol));
    break;
  }
  case PolicySpec::Kind::ulp:
    p.policy = detail::cmp_ulp;
    p.max_ulps = policy.ulps;
    if (!(p.max_ulps >= 0))
      spec_fail(spec, fmt::format("ulp(n) needs n >= 0, got {}", p.max_ulps));
    break;
  case PolicySpec::Kind::exact:
    p.policy = detail::cmp_exact;
    break;
  default:
    return std::nullopt;
  }
  if (p.policy != detail::cmp_relative) {
    const char* name = p.policy == detail::cmp_allclose ? "allclose"
                       : p.policy == detail::cmp_ulp    ? "ulp(n)"
                                                        : "exact";
    if (policy.expected == Expected::golden && !in.has_golden)
      spec_fail(spec, fmt::format("{} needs the golden, which is missing", name));
    if (policy.expected == Expected::reference && !in.has_reference)
      spec_fail(spec, fmt::format("{} needs the reference (expected = \"reference\"), which is "
                                  "missing",
                                  name));
    p.expected_golden = policy.expected == Expected::golden ? 1 : 0;
  }
  if (!in.has_golden && !in.has_reference)
    spec_fail(spec, "a float output needs a golden or a reference to compare against");

  const SliceLayout l = slice_layout(spec, in.shape);
  p.n = 1;
  for (const std::int64_t d : in.shape)
    p.n *= d;
  const std::int64_t slices = l.axis < 0 ? 1 : l.extent;
  p.slice_len = l.axis < 0 ? p.n : l.outer * l.inner;
  p.chunks_per_slice = (p.slice_len + detail::cmp_chunk - 1) / detail::cmp_chunk;
  p.chunks = p.chunks_per_slice * slices;
  p.dtype = static_cast<int>(t);
  p.nan_rule = static_cast<int>(in.nan);
  p.nan_anywhere = in.nan == NanRule::ignore && in.nan_in_inputs ? 1 : 0;
  p.beside_golden = in.extreme_in_inputs && in.has_golden && in.has_reference ? 1 : 0;
  p.has_golden = in.has_golden ? 1 : 0;
  p.strict_zero = in.signed_zero_strict ? 1 : 0;
  return p;
}

// ---------------------------------------------------------------------------------------------
// The finding

namespace {

// relative's bound over one group of elements (the whole output or a slice), from its stats.
struct RelBound {
  double max_e = 0, rms_e = 0;
  double max_r = 0, rms_r = 0;
  double max_g = 0, rms_g = 0;
  double floor = 0, floor_rms = 0;
  double max_bound = 0, rms_bound = 0;
  bool pass = true;
  double ratio = 0;
};

// The floor of relative's bound as its source states it: one ulp of the dtype at the golden's
// magnitude `g`. At 0 that is the dtype's smallest subnormal, and the text says so: a bare
// "1 ulp at max|golden|=0: 1.4e-45" reads as a typo for a bound.
std::string relative_floor_text(const std::string& dt, const char* magnitude, double g,
                                double floor) {
  if (g == 0)
    return fmt::format("floor 1 ulp {} at {}=0, its smallest subnormal: {:.3g}", dt, magnitude,
                       floor);
  return fmt::format("floor 1 ulp {} at {}={:.3g}: {:.3g}", dt, magnitude, g, floor);
}

// `typical` (slices only): the whole output's rms(ref - golden) / rms(golden). A slice's floor is
// its golden's scale times it, so that a slice where the reference happens to be far more
// accurate than it is elsewhere (one of 1100 rows, by luck) does not hold a candidate to that
// luck, while a slice of another scale keeps a bound of its own scale.
RelBound rel_bound(const cmp_stats& a, DType t, double k, double typical = 0) {
  RelBound b;
  b.max_e = a.max_e;
  b.rms_e = detail::scaled_rms(a.sum_e, a.exp_e, a.judged);
  b.max_r = a.max_r;
  b.rms_r = detail::scaled_rms(a.sum_r, a.exp_r, a.ref_count);
  b.max_g = a.max_g;
  b.rms_g = detail::scaled_rms(a.sum_g, a.exp_g, a.judged);
  b.floor = std::max(ulp_of(t, b.max_g), b.max_g * typical);
  b.floor_rms = std::max(ulp_of(t, b.rms_g), b.rms_g * typical);
  b.max_bound = k * std::max(b.max_r, b.floor);
  b.rms_bound = k * std::max(b.rms_r, b.floor_rms);
  b.pass = (b.max_e <= b.max_bound) && (b.rms_e <= b.rms_bound);
  b.ratio = std::max(safe_ratio(b.max_e, b.max_bound), safe_ratio(b.rms_e, b.rms_bound));
  return b;
}

// The policy's part of a finding.
struct PolicyPart {
  bool pass = true;
  double ratio = 0;
  std::string fail_detail, pass_detail;
  std::vector<double> bounds; // relative: per slice (or one), for element reports
};

} // namespace

OutputFinding judge_in_one_pass(const PassInputs& in, const compare_params& p,
                                PassSource& source) {
  const OutputSpec& spec = *in.spec;
  const DType t = spec.dtype;
  const std::string dt{dtype_name(t)};
  const Shape& shape = in.shape;
  const SliceLayout l = slice_layout(spec, shape);
  const std::int64_t n = p.n;
  PolicySpec policy = spec.policy;
  if (in.tier == Tier::exact && policy.kind != PolicySpec::Kind::exact) {
    policy.kind = PolicySpec::Kind::exact;
    policy.expected = Expected::reference;
  }

  OutputFinding f;
  f.output = spec.name;
  f.count = n;

  // The histograms only where binned percentiles are asked for whatever the verdict; a failing
  // output without them gets a second pass below.
  const bool histograms_now = in.statistics && !in.exact_percentiles;
  PassSummary pass = source.run(p, nullptr, histograms_now);
  cmp_stats w = pass.whole;
  PolicyPart r;
  cmp_severity worst = w.worst, worst_bad = w.worst_bad;

  if (p.policy == detail::cmp_relative) {
    const bool kGiven = policy.k.has_value();
    const double k = policy.k.value_or(default_relative_k(t));
    const bool sliced = l.axis >= 0;
    const RelBound wb = rel_bound(w, t, k);
    const double typical = wb.rms_g > 0 && std::isfinite(wb.rms_r) ? wb.rms_r / wb.rms_g : 0;
    std::vector<RelBound> sb;
    for (const cmp_stats& s : pass.slices)
      sb.push_back(rel_bound(s, t, k, typical));
    r.pass = wb.pass;
    r.ratio = wb.ratio;
    std::vector<std::pair<double, std::int64_t>> failing; // (ratio, slice)
    for (std::size_t s = 0; s < sb.size(); ++s) {
      if (pass.slices[s].judged == 0) continue;
      r.ratio = std::max(r.ratio, sb[s].ratio);
      if (!sb[s].pass) failing.emplace_back(sb[s].ratio, static_cast<std::int64_t>(s));
    }
    if (!failing.empty()) r.pass = false;
    std::stable_sort(failing.begin(), failing.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    f.failed_slice_count = static_cast<std::int64_t>(failing.size());
    for (std::size_t j = 0; j < failing.size() && j < kReportMax; ++j) {
      const RelBound& b = sb[static_cast<std::size_t>(failing[j].second)];
      f.failed_slices.push_back({failing[j].second, b.max_e, b.max_bound, b.rms_e, b.rms_bound});
    }

    // Each element is held to its slice's max bound (never looser than the whole output's).
    if (sliced)
      for (const RelBound& b : sb)
        r.bounds.push_back(b.max_bound);
    else
      r.bounds.push_back(wb.max_bound);
    const std::vector<const cmp_stats*> groups = [&] {
      std::vector<const cmp_stats*> g;
      if (sliced)
        for (const cmp_stats& s : pass.slices)
          g.push_back(&s);
      else
        g.push_back(&w);
      return g;
    }();
    bool any_bad = false;
    for (std::size_t s = 0; s < groups.size(); ++s)
      if (groups[s]->judged > 0 && !(groups[s]->max_e <= r.bounds[s])) any_bad = true;
    if (any_bad) {
      // The second pass: elements judged against their bounds (counts, first, worst).
      compare_params with_bounds = p;
      with_bounds.with_bounds = 1;
      const PassSummary second = source.run(with_bounds, &r.bounds, false);
      w.bad = second.whole.bad;
      w.first_count = second.whole.first_count;
      std::copy(std::begin(second.whole.first), std::end(second.whole.first), std::begin(w.first));
      worst = second.whole.worst;
      worst_bad = second.whole.worst_bad;
    } else {
      // No element beyond its bound: the worst is a failing non-finite element, else the
      // largest error relative to its slice's bound (within a slice, the largest error).
      worst = detail::no_severity();
      const long long first_fail = std::min(w.first_nonfinite, w.first_mismatch);
      if (first_fail != detail::cmp_none) worst = {first_fail, 1, kInf, kInf};
      for (std::size_t s = 0; s < groups.size(); ++s) {
        const cmp_stats& g = *groups[s];
        if (g.judged == 0) continue;
        worst = detail::worse_of(
            worst, {g.worst.index, 0, safe_ratio(g.max_e, r.bounds[s]), g.worst.error});
      }
      worst_bad = detail::no_severity();
    }

    f.bound.policy = fmt::format("relative({})", k);
    f.bound.expected = "golden";
    const std::string given = kGiven ? "given" : dt + " default";
    if (w.judged > 0)
      f.bound.source = fmt::format(
          "k={} ({}) x max(max|ref-golden|={:.3g}, {}); rms: k x max(rms|ref-golden|={:.3g}, {})",
          k, given, wb.max_r, relative_floor_text(dt, "max|golden|", wb.max_g, wb.floor), wb.rms_r,
          relative_floor_text(dt, "rms(golden)", wb.rms_g, wb.floor_rms));
    else // the golden's magnitude over no element is no magnitude: the bound had nothing to hold
      f.bound.source = fmt::format(
          "k={} ({}) x max(|ref-golden|, floor 1 ulp {} at |golden|) over the finite elements: "
          "none of the {} was judged (non-finite, or excused by the NaN rule)",
          k, given, dt, plural(n, "element", "elements"));
    if (sliced)
      f.bound.source += fmt::format(
          "; the same per slice along axis {} ({} slices), each floored also at its golden's "
          "scale times the whole output's rms|ref-golden|/rms(golden)={:.3g}",
          l.axis, l.extent, typical);
    if (w.ref_nonfinite > 0)
      f.bound.source += fmt::format(
          "; {} non-finite where the golden is finite, left out of the reference's error",
          plural(w.ref_nonfinite, "reference value", "reference values"));
    f.bound.max_bound = wb.max_bound;
    f.bound.rms_bound = wb.rms_bound;
    f.bound.max_error = wb.max_e;
    f.bound.rms_error = wb.rms_e;

    std::vector<std::string> parts;
    if (!wb.pass && wb.max_e <= wb.max_bound)
      parts.push_back(fmt::format("rms error {:.3g} beyond the bound {:.3g} (max error {:.3g} "
                                  "within {:.3g})",
                                  wb.rms_e, wb.rms_bound, wb.max_e, wb.max_bound));
    if (!failing.empty()) {
      const SliceFailure& s = f.failed_slices.front();
      parts.push_back(fmt::format(
          "{} of {} along axis {} fail{}; worst slice {}: max error {:.3g} vs bound {:.3g}, "
          "rms {:.3g} vs {:.3g}",
          failing.size(), plural(l.extent, "slice", "slices"), l.axis,
          failing.size() == 1 ? "s" : "", s.slice, s.max_error, s.max_bound, s.rms_error,
          s.rms_bound));
    }
    for (const auto& part : parts)
      r.fail_detail += (r.fail_detail.empty() ? "" : "; ") + part;
    r.pass_detail = fmt::format(
        "{} within relative({}): max error {:.3g} of {:.3g}, rms {:.3g} of {:.3g}{}",
        plural(n, "element", "elements"), k, wb.max_e, wb.max_bound, wb.rms_e, wb.rms_bound,
        sliced ? fmt::format(", and in each of {} along axis {}",
                             plural(l.extent, "slice", "slices"), l.axis)
               : std::string{});
  } else {
    r.pass = w.bad == 0;
    r.ratio = w.max_ratio;
    const double max_e = w.max_e;
    const double rms_e = detail::scaled_rms(w.sum_e, w.exp_e, w.err_count);
    const std::string expected = policy.expected == Expected::golden ? "golden"
                                                                      : in.reference_name;
    f.bound.expected = expected;
    f.bound.max_error = max_e;
    f.bound.rms_error = rms_e;
    if (p.policy == detail::cmp_allclose) {
      const bool fp8 = t == DType::fp8e4m3 || t == DType::fp8e5m2;
      const std::string defaults =
          fp8 ? fmt::format("kjudge's {} default (one ulp of the format; torch has none)", dt)
              : fmt::format("torch.testing default for {}", dt);
      f.bound.policy = fmt::format("allclose(rtol={}, atol={})", p.rtol, p.atol);
      if (policy.rtol && policy.atol)
        f.bound.source = "rtol and atol as given";
      else if (!policy.rtol && !policy.atol)
        f.bound.source = "rtol and atol: " + defaults;
      else
        f.bound.source = fmt::format("{} as given, {}: {}", policy.rtol ? "rtol" : "atol",
                                     policy.rtol ? "atol" : "rtol", defaults);
      f.bound.source += "; |c - e| <= atol + rtol*|e| elementwise";
      f.bound.max_bound = kNaN;
      f.bound.rms_bound = kNaN;
      r.pass_detail = fmt::format("{} within {}", plural(n, "element", "elements"), f.bound.policy);
    } else if (p.policy == detail::cmp_ulp) {
      const bool golden = policy.expected == Expected::golden;
      f.bound.policy = fmt::format("ulp({})", p.max_ulps);
      f.bound.source = fmt::format("at most {} representable {} values between candidate and {}{}",
                                   p.max_ulps, dt, golden ? "golden" : in.reference_name,
                                   golden ? " (rounded to " + dt + ")" : "");
      f.bound.max_bound = p.max_ulps;
      f.bound.rms_bound = kNaN;
      r.pass_detail = fmt::format("{} within {} (max {} ulp)", plural(n, "element", "elements"),
                                  f.bound.policy, max_e);
    } else {
      const bool strict = p.strict_zero != 0;
      const bool golden = policy.expected == Expected::golden;
      r.ratio = r.pass ? 0 : kInf;
      f.bound.policy = strict ? "exact(signed_zero = \"strict\")" : "exact";
      f.bound.source = fmt::format(
          "bit-identical to the {} (NaN payloads canonicalised; {})",
          golden ? "golden rounded to the output dtype" : in.reference_name,
          strict ? "+0 and -0 differ" : "+0 equals -0");
      f.bound.max_bound = 0;
      f.bound.rms_bound = 0;
      r.pass_detail =
          fmt::format("{} bit-identical to the {}", plural(n, "element", "elements"), expected);
    }
  }

  // Elements named in the finding, read back from where the tensors are.
  auto bound_at = [&](std::int64_t flat) {
    if (r.bounds.empty()) return kNaN;
    if (r.bounds.size() == 1) return r.bounds[0];
    return r.bounds[static_cast<std::size_t>((flat / l.inner) % l.extent)];
  };
  auto report = [&](std::int64_t flat) {
    const ElementValues v = source.at(flat);
    compare_params q = p;
    q.with_bounds = r.bounds.empty() ? 0 : 1;
    const cmp_element el = detail::judge_element_hd(q, v.c, v.g, v.r, bound_at(flat));
    ElementReport e;
    e.flat = flat;
    e.index = unravel(shape, flat);
    e.value = v.c;
    if (el.status == detail::st_judged) {
      e.expected = el.x;
      e.error = el.err;
      e.allowed = el.allowed;
    } else {
      e.expected = p.has_golden != 0 ? detail::round_to_hd(p.dtype, v.g) : v.r;
      e.error = std::fabs(v.c - e.expected);
      e.allowed = kNaN;
    }
    return e;
  };
  auto at = [&](std::int64_t flat) {
    const ElementReport e = report(flat);
    return fmt::format("{}: {} vs {}", show_index(shape, flat), show(e.value), show(e.expected));
  };
  for (long long k = 0; k < w.first_count; ++k)
    f.first.push_back(report(w.first[k]));
  if (worst.index != detail::cmp_none) f.worst = report(worst.index);

  const bool fails = w.nonfinite > 0 || w.mismatch > 0 || !r.pass;
  if (!statistics_wanted(in, fails)) {
    f.stats.made = false;
  } else if (in.exact_percentiles) {
    f.stats = source.exact_statistics(p);
  } else {
    // The statistics from a pass that counted the bins (the verdict pass may keep no maxima
    // of them either).
    const PassSummary counted = histograms_now ? pass : source.run(p, nullptr, true);
    f.stats.binned = true;
    const double* b = counted.binned.value;
    const cmp_stats& s = counted.whole;
    f.stats.abs = {b[0], b[1], b[2], s.max_abs};
    f.stats.rel = {b[3], b[4], b[5], s.max_rel};
    f.stats.ulp = {b[6], b[7], b[8], s.max_ulp};
  }

  f.nonfinite = w.nonfinite;
  f.excused = w.excused;
  f.overflows_excused = w.overflows;
  f.mismatches = w.nonfinite + w.mismatch + w.bad;
  f.mismatch_fraction = n > 0 ? static_cast<double>(f.mismatches) / static_cast<double>(n) : 0.0;
  const bool policy_fails = !r.pass;
  if (w.nonfinite > 0)
    f.reason = Reason::nonfinite;
  else if (w.mismatch > 0 || policy_fails)
    f.reason = Reason::mismatch;
  else
    f.reason = Reason::none;
  f.log_error_ratio =
      log_error_ratio(r.ratio, w.nonfinite > 0 || w.mismatch > 0, f.pass());

  std::vector<std::string> parts;
  if (w.nonfinite > 0) {
    const ElementReport e = report(w.first_nonfinite);
    parts.push_back(nonfinite_part(w.nonfinite, show_index(shape, w.first_nonfinite), e.value,
                                   e.expected, p.has_golden != 0, t, in.reference_name));
  }
  if (w.mismatch > 0) parts.push_back(finite_where_not_part(w.mismatch, at(w.first_mismatch)));
  if (policy_fails) {
    if (w.bad > 0 && worst_bad.index != detail::cmp_none)
      parts.push_back(fmt::format("{} of {} elements ({}) beyond the bound; worst at {}", w.bad, n,
                                  show_percent(w.bad, n), at(worst_bad.index)));
    if (!r.fail_detail.empty()) parts.push_back(r.fail_detail);
  }
  if (parts.empty()) {
    f.message = r.pass_detail;
    if (w.excused > 0)
      f.message +=
          fmt::format(" ({} excused by the NaN rule)", plural(w.excused, "element", "elements"));
    if (w.overflows > 0)
      f.message += fmt::format(" ({} non-finite where the precision overflows on the extreme "
                               "inputs, not judged)",
                               plural(w.overflows, "element", "elements"));
  } else {
    for (const auto& part : parts)
      f.message += (f.message.empty() ? "" : "; ") + part;
  }
  return f;
}

} // namespace kj
