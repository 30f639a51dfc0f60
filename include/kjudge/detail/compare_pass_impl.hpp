// The comparator's one pass over an output, as code the host and the device compile alike: the
// non-finite rules and the elementwise policies (relative, allclose, ulp, exact) per element,
// the statistics of a chunk of elements, and how two chunks' statistics combine. The GPU
// comparator (compare_kernels.cuh) runs it on the device; the host comparator (compare.cpp)
// runs the same functions in the same order, so the two give the same verdict bit for bit.
//
// Determinism: an output is cut into chunks of cmp_chunk elements (never straddling a slice of
// relative's slice axis); thread t of a chunk takes the elements t, t + cmp_threads, ... in that
// order. Counts, maxima, minima and the worst element are order-free; the sums of squares are
// not, so they follow one fixed tree: each thread's running sum in element order, then a
// stride-halving tree within each warp of 32 threads, then the same tree over the warps' sums,
// then a stride-doubling tree over the chunks of a slice (or of the whole output). For f64
// outputs each sum is scaled by a power of two from its chunk's maximum (BLAS nrm2's idea), so
// squares of f64 errors neither overflow nor underflow. Every product goes through mul() (never
// fused into an fma).
//
// Compiled by the host compiler and NVRTC: builtin types only, no std:: call under NVRTC.
#pragma once

#include "kjudge/detail/dtype_bits_impl.hpp"

namespace kj::detail {

// The geometry of the pass. A chunk is cmp_per_thread rounds of cmp_threads elements.
constexpr int cmp_threads = 512;
constexpr int cmp_per_thread = 32;
constexpr int cmp_warps = cmp_threads / 32;
constexpr long long cmp_chunk = static_cast<long long>(cmp_threads) * cmp_per_thread;
// The first failing elements kept, in flat order.
constexpr int cmp_first_max = 10;
// Histograms of the error statistics: the key of a non-negative double is its top 16 bits
// (11 exponent bits and 4 mantissa bits; the sign bit is 0), 2^15 bins used of 2^16.
constexpr int cmp_hist_bins = 32768;
constexpr int cmp_histograms = 3; // |c - e|, relative, ulp
// The device keeps two 16-bit counts per 32-bit shared word.
constexpr int cmp_hist_words = cmp_hist_bins / 2;
// The device's lean pass (f32 outputs) keeps 32-bit shared counts for the keys from 2^-160 up
// to 2^136 (f32 errors, their ratios to f32 values, their ulps), then one for bin 0.
constexpr unsigned int cmp_lean_first_key = (1023u - 160u) << 4;
constexpr unsigned int cmp_lean_window = (160u + 136u) << 4;
constexpr unsigned int cmp_lean_bins = cmp_lean_window + 1u;
constexpr unsigned int cmp_lean_shared_bytes = cmp_histograms * cmp_lean_bins * 4u;
// Set on a chunk the lean pass hands back unjudged: its bins are still to count.
constexpr unsigned int cmp_redo_bins = 0x80000000u;
// Statistics per block in the device's tree kernel (any power of two gives the same trees).
constexpr int cmp_tree_group = 64;
// "No element": larger than every flat index, so a minimum ignores it.
constexpr long long cmp_none = 0x7fffffffffffffffll;
// The exponent of an empty scaled sum: below every real one.
constexpr long long cmp_empty_exponent = -100000;

// Policy codes (the elementwise policies the pass judges).
constexpr int cmp_relative = 0, cmp_allclose = 1, cmp_ulp = 2, cmp_exact = 3;
// NaN rule codes in the order of kj::NanRule (spec.hpp).
constexpr int cmp_nan_propagate = 0, cmp_nan_ignore = 1, cmp_nan_exempt = 2;
// What the non-finite rules made of an element (compare_internal.hpp's Status, same order).
constexpr int st_judged = 0, st_settled = 1, st_excused = 2, st_overflow = 3,
              st_fail_nonfinite = 4, st_fail_mismatch = 5;

// Everything the pass needs about one output, passed by value to the kernel. One layout for the
// host compiler and NVRTC (natural alignment, 64-bit); the size is checked on both sides.
struct compare_params {
  long long n;                // elements
  long long slice_len;        // elements per slice (n when the output is not sliced)
  long long chunks_per_slice; // ceil(slice_len / cmp_chunk)
  long long chunks;           // chunks_per_slice * slices
  double rtol, atol;          // allclose
  double max_ulps;            // ulp(n)
  int policy;                 // cmp_* code
  int dtype;                  // the output's dt_* code (actual and reference)
  int nan_rule;               // cmp_nan_* code
  int nan_anywhere;           // NaN planted in the inputs under nan = "ignore"
  int beside_golden;          // precision overflows are judged (extreme inputs, golden and reference)
  int expected_golden;        // elementwise policies: compare against the rounded golden (else the reference)
  int has_golden;             // the golden is given (else the reference is the basis)
  int strict_zero;            // exact: +0 and -0 differ
  int with_bounds;            // relative's second pass: slice bounds given, elements judged
  int golden_dtype;           // the device golden's dt_* code: dt_f64 (0), or dt_f32 read in place
};
static_assert(sizeof(compare_params) == 96, "compare_params has one layout on both sides");

// The worst element so far: failing before passing, then by error / allowed, then by the error;
// the lowest flat index among equals.
struct cmp_severity {
  long long index;
  long long failing;
  double ratio, error;
};

// What one chunk (and, combined, a slice or the whole output) leaves for the verdict.
struct cmp_stats {
  long long judged, settled, excused, overflows, nonfinite, mismatch, bad;
  long long err_count;     // judged elements with a finite error (elementwise policies' rms)
  long long ref_count;     // relative: judged elements with a finite |reference - golden|
  long long ref_nonfinite; // relative: judged elements whose reference is not finite
  long long stat_count;    // judged elements with a finite expected value (the statistics)
  long long first_nonfinite, first_mismatch; // flat indices, cmp_none when none
  long long first_count;   // entries of `first`
  long long first[cmp_first_max]; // the first failing elements, flat order
  // The worst element: relative's first pass ranks judged elements by error alone (its bounds
  // come after the pass); otherwise by severity, failing non-finite rules included.
  cmp_severity worst;
  cmp_severity worst_bad;  // the worst element beyond the policy's bound
  double max_e, max_r, max_g, max_ratio;
  double max_abs, max_rel, max_ulp;
  // Sums of squares: sum = s * 2^(2 * exp); exp = cmp_empty_exponent when empty.
  double sum_e, sum_r, sum_g;
  long long exp_e, exp_r, exp_g;
};
static_assert(sizeof(cmp_stats) == 360, "cmp_stats has one layout on both sides");

// The nine binned percentiles (p50, p99, p99.9 of |c - e|, relative, ulp), in that order.
struct cmp_percentiles {
  double value[9];
};

KJ_HD double max_hd(double a, double b) { return a > b ? a : b; }
KJ_HD double min_hd(double a, double b) { return a < b ? a : b; }
KJ_HD bool is_finite_hd(double x) { return (bits_of(x) & 0x7ff0000000000000ull) != 0x7ff0000000000000ull; }
KJ_HD bool is_inf_hd(double x) { return (bits_of(x) & 0x7fffffffffffffffull) == 0x7ff0000000000000ull; }

// x * 2^k, for any k: at most three products by normal powers of two (exact but where the result
// is subnormal, then rounded the same way on both sides).
KJ_HD double scale2(double x, long long k) {
  while (k > 1000) {
    x = mul(x, pow2i(1000));
    k -= 1000;
    if (is_inf_hd(x) || x == 0.0) return x;
  }
  while (k < -1000) {
    x = mul(x, pow2i(-1000));
    k += 1000;
    if (x == 0.0) return x;
  }
  return mul(x, pow2i(static_cast<int>(k)));
}

// floor(log2 m) for a finite m > 0 (subnormals included); a sum's scale.
KJ_HD long long exponent_of(double m) {
  const unsigned long long b = bits_of(m);
  const long long e = static_cast<long long>((b >> 52) & 0x7ffu);
  if (e != 0) return e - 1023;
  unsigned long long f = b & 0x000fffffffffffffull;
  long long k = -1075;
  while (f != 0) {
    f >>= 1;
    ++k;
  }
  return k;
}

// The scale of a chunk's sum from the chunk's largest term: 0 for an infinite maximum (the sum
// is then infinite), empty for none.
KJ_HD long long sum_exponent(double max_term) {
  if (!(max_term > 0)) return cmp_empty_exponent;
  if (is_inf_hd(max_term)) return 0;
  return exponent_of(max_term);
}

// The scale of a chunk's sums. Only f64 outputs need one: every other dtype's errors and values,
// squared in double, stay far inside its range (a square below 2^-1074 is lost, but then the
// bound it is compared with, at least one ulp of the dtype, is larger by hundreds of orders of
// magnitude). Unscaled sums skip the device's second look at the chunk.
KJ_HD bool scaled_sums(const compare_params& p) { return p.dtype == dt_f64; }
KJ_HD long long chunk_exponent(const compare_params& p, double max_term) {
  return scaled_sums(p) ? sum_exponent(max_term) : 0;
}

// One term (v * 2^-exp)^2 of a scaled sum.
KJ_HD double scaled_square(double v, long long exp) {
  const double s = scale2(v, -exp);
  return mul(s, s);
}

// Two scaled sums added at the larger scale.
KJ_HD void add_scaled(double& s, long long& e, double s2, long long e2) {
  if (e2 == cmp_empty_exponent) return;
  if (e == cmp_empty_exponent) {
    s = s2;
    e = e2;
    return;
  }
  const long long top = e > e2 ? e : e2;
  s = scale2(s, 2 * (e - top)) + scale2(s2, 2 * (e2 - top));
  e = top;
}

// sqrt(sum / count) of a scaled sum; 0 when empty.
KJ_HD double scaled_rms(double s, long long e, long long count) {
  if (count <= 0 || e == cmp_empty_exponent) return 0.0;
  return scale2(sqrt_hd(s / static_cast<double>(count)), e);
}

// Element i of a tensor in device (or HostTensor) storage as a double: f32 and f64 by a plain
// conversion (a NaN's payload may differ from HostTensor::get's; the pass only asks whether a
// value is NaN), every other dtype as HostTensor::get reads it.
KJ_HD double load_value(const void* in, unsigned long long i, int dtype) {
  if (dtype == dt_f32) return static_cast<double>(static_cast<const float*>(in)[i]);
  if (dtype == dt_f64) return static_cast<const double*>(in)[i];
  return load_widened(in, i, dtype);
}

// Element i of the device golden as a double: an f32 golden (an f32 expected judged in place
// rather than widened into an f64 copy) holds each value exactly.
KJ_HD double load_golden(const void* golden, unsigned long long i, const compare_params& p) {
  if (p.golden_dtype == dt_f32) return static_cast<double>(static_cast<const float*>(golden)[i]);
  return static_cast<const double*>(golden)[i];
}

// The golden rounded to the output dtype (kj::round_to): for f32 the conversion instruction,
// which rounds to nearest even with overflow to Inf and gradual underflow, exactly as round_to.
KJ_HD double round_basis(int dtype, double g) {
  if (dtype == dt_f32) return is_nan(g) ? g : static_cast<double>(static_cast<float>(g));
  return round_to_hd(dtype, g);
}

// One ulp of a float dtype at x (kj::ulp_of): beyond the largest finite value (and for Inf and
// NaN) the ulp at it; below the smallest normal the smallest subnormal.
KJ_HD double ulp_at_hd(int dtype, double x) {
  if (dtype == dt_f32) {
    double a = abs_of(x);
    if (!(a <= 0x1.fffffep127)) a = 0x1.fffffep127;
    if (a < 0x1p-126) return 0x1p-149;
    return mul(double_of(bits_of(a) & 0x7ff0000000000000ull), 0x1p-23);
  }
  const float_format_hd f = format_of(dtype);
  double a = abs_of(x);
  if (!(a <= f.max_finite)) a = f.max_finite;
  const int emin = min_exponent_of(f);
  if (a < pow2i(emin)) return mul(pow2i(emin), pow2i(-f.p));
  const int e = static_cast<int>((bits_of(a) >> 52) & 0x7ffu) - 1023;
  return mul(pow2i(e), pow2i(-f.p));
}

// The place of a magnitude in a float format's order of non-negative values (Inf just above the
// largest finite value).
KJ_HD unsigned long long magnitude_rank(int dtype, double m) {
  if (dtype == dt_f64) return bits_of(m); // +Inf's bits follow the largest finite's
  if (is_inf_hd(m)) return encode_bits_hd(dtype, format_of(dtype).max_finite) + 1ull;
  return encode_bits_hd(dtype, m);
}

// kj::ulp_distance of two values of the dtype's value set (NaN for a NaN).
KJ_HD double ulp_distance_hd(int dtype, double a, double b) {
  if (is_nan(a) || is_nan(b)) return quiet_nan();
  const unsigned long long ma = magnitude_rank(dtype, abs_of(a));
  const unsigned long long mb = magnitude_rank(dtype, abs_of(b));
  const bool na = a < 0.0, nb = b < 0.0;
  unsigned long long d;
  if (na == nb)
    d = ma >= mb ? ma - mb : mb - ma;
  else
    d = ma + mb; // across zero; below 2^64 for every format
  return static_cast<double>(d);
}

// error / allowed: 0 for no error, Inf where nothing (or NaN) is allowed, Inf for a NaN error.
KJ_HD double safe_ratio_hd(double error, double allowed) {
  if (is_nan(error)) return infinity();
  if (error == 0.0) return 0.0;
  if (!(allowed > 0.0)) return infinity();
  return error / allowed;
}

// docs/design.md "Comparison" for one element: b is the basis (the golden rounded to the
// dtype, or the reference), v the candidate, g and r the golden and reference where the
// precision-overflow rule needs them.
KJ_HD int classify_hd(const compare_params& p, double b, double v, double g, double r) {
  if (is_nan(b)) {
    if (p.nan_rule != cmp_nan_propagate) return st_excused;
    if (is_nan(v)) return st_settled;
    if (is_inf_hd(v)) return st_fail_nonfinite;
    return st_fail_mismatch;
  }
  if (is_inf_hd(b)) {
    if (v == b) return st_settled;
    if (is_nan(v) && p.nan_anywhere != 0) return st_excused;
    if (is_finite_hd(v)) return st_fail_mismatch;
    if (p.beside_golden != 0 && is_finite_hd(g)) return st_overflow;
    return st_fail_nonfinite;
  }
  if (is_finite_hd(v)) return st_judged;
  if (is_nan(v) && p.nan_anywhere != 0) return st_excused;
  if (p.beside_golden != 0 && !is_finite_hd(r)) return st_overflow;
  return st_fail_nonfinite;
}

// One element as the rules and the policy saw it.
struct cmp_element {
  int status;
  bool bad;
  double x;       // the value compared against (judged)
  double err;     // the error in the policy's unit (judged)
  double allowed; // the element's bound (judged; relative: only in the second pass)
  double er;      // relative: |reference - golden|
};

// An elementwise policy (allclose, ulp, exact) on a judged element: c against the expected x.
KJ_HD void elementwise_error(const compare_params& p, double c, double x, cmp_element& e) {
  e.x = x;
  if (p.policy == cmp_allclose) {
    e.err = abs_of(c - x);
    e.allowed = p.atol + mul(p.rtol, abs_of(x));
    e.bad = !(e.err <= e.allowed);
  } else if (p.policy == cmp_ulp) {
    e.err = is_finite_hd(x) ? ulp_distance_hd(p.dtype, c, x) : infinity();
    e.allowed = p.max_ulps;
    e.bad = !(e.err <= e.allowed);
  } else { // exact
    const bool same = c == x && (p.strict_zero == 0 || sign_of(c) == sign_of(x));
    e.err = abs_of(c - x);
    e.allowed = 0.0;
    e.bad = !same;
  }
}

// The rules and the policy for element i: c the candidate, g the golden (f64; NaN when there is
// none), r the reference (NaN when there is none), `bound` relative's bound for i's slice in the
// second pass.
KJ_HD cmp_element judge_element_hd(const compare_params& p, double c, double g, double r,
                                   double bound) {
  cmp_element e;
  e.bad = false;
  e.x = quiet_nan();
  e.err = quiet_nan();
  e.allowed = quiet_nan();
  e.er = quiet_nan();
  const double basis = p.has_golden != 0 ? round_basis(p.dtype, g) : r;
  e.status = classify_hd(p, basis, c, g, r);
  if (e.status != st_judged) return e;
  if (p.policy == cmp_relative) {
    e.x = g;
    e.err = abs_of(c - g);
    e.er = abs_of(r - g);
    if (p.with_bounds != 0) {
      e.allowed = bound;
      e.bad = !(e.err <= bound);
    }
    return e;
  }
  elementwise_error(p, c, p.expected_golden != 0 ? basis : r, e);
  return e;
}

KJ_HD cmp_severity no_severity() {
  cmp_severity s;
  s.index = cmp_none;
  s.failing = -1;
  s.ratio = -1.0;
  s.error = -1.0;
  return s;
}

// The element's severity for "worst" (compare.cpp's finish). Relative's first pass, without its
// bounds, ranks judged elements by error alone and leaves the rest out.
KJ_HD cmp_severity severity_hd(const compare_params& p, const cmp_element& e, long long index) {
  cmp_severity s;
  s.index = index;
  const bool first_pass = p.policy == cmp_relative && p.with_bounds == 0;
  if (e.status == st_fail_nonfinite || e.status == st_fail_mismatch) {
    if (first_pass) return no_severity();
    s.failing = 1;
    s.ratio = infinity();
    s.error = infinity();
    return s;
  }
  if (e.status != st_judged) return no_severity();
  const double err = is_nan(e.err) ? infinity() : e.err;
  s.failing = e.bad ? 1 : 0;
  s.ratio = first_pass ? err : safe_ratio_hd(e.err, e.allowed);
  s.error = err;
  return s;
}

// The worse of two severities (the lower index among equals). By value: with reference
// parameters, g++ 12 at -O3 built `x = worse_of(x, y)` by writing the result into x while still
// reading it, and the host's worst element came out wrong.
KJ_HD cmp_severity worse_of(cmp_severity a, cmp_severity b) {
  if (a.failing != b.failing) return a.failing > b.failing ? a : b;
  if (a.ratio != b.ratio) return a.ratio > b.ratio ? a : b;
  if (a.error != b.error) return a.error > b.error ? a : b;
  return a.index <= b.index ? a : b;
}

// ulp_at_hd(dt_f32, x) for a finite x of f32's value set, from the exponent field of x as an
// f32 (the device pass's common case: a few integer operations instead of double ones).
KJ_HD double ulp_of_f32_value(double x) {
  const unsigned int field = (static_cast<unsigned int>(bits_of(x) >> 52) & 0x7ffu);
  // f32's exponent field is the double's less 896 (1023 - 127); 0 (subnormal, zero) acts as 1.
  const int f32_field = field > 896u ? static_cast<int>(field) - 896 : 1;
  return pow2i(f32_field - 150);
}

// Whether error_statistics' expected value is a value of the output dtype: the rounded golden
// or the reference under an elementwise policy; relative's golden is any double.
KJ_HD bool expected_in_dtype(const compare_params& p) { return p.policy != cmp_relative; }

// The statistics' values of a judged element with a finite expected value: |c - x|, relative
// (0 where c == x, never Inf) and ulp error (never Inf), as compare.cpp's finish defines them,
// except that the relative error of an output narrower than f64 is divided in f32 (a double
// division per element was most of the device pass's time): within 2^-22 of the exact quotient,
// far inside a percentile bin, and 0 below f32's range.
KJ_HD void error_statistics(int dtype, double c, double x, bool x_in_dtype, double* abs_e,
                            double* rel_e, double* ulp_e) {
  const double big = double_of(0x7fefffffffffffffull);
  const double a = abs_of(c - x);
  const double unit = x_in_dtype && dtype == dt_f32 ? ulp_of_f32_value(x) : ulp_at_hd(dtype, x);
  *abs_e = a;
  if (c == x)
    *rel_e = 0.0;
  else if (dtype == dt_f64)
    *rel_e = min_hd(a / max_hd(abs_of(x), unit), big);
  else { // an f32 quotient past f32's range is Inf, and stands for `big`
    const float q = static_cast<float>(a) / static_cast<float>(max_hd(abs_of(x), unit));
    *rel_e = q <= 0x1.fffffep127f ? static_cast<double>(q) : big;
  }
  // a / unit by a product with 2^-e (unit = 2^e, a normal double for every dtype but f64): the
  // same correctly rounded quotient, without a division.
  // (Below f64 the quotient cannot reach `big`: f32's is at most 2^129 / 2^-149.)
  if (dtype == dt_f64) {
    *ulp_e = min_hd(a / unit, big);
  } else {
    const int e = static_cast<int>((bits_of(unit) >> 52) & 0x7ffu) - 1023;
    *ulp_e = mul(a, pow2i(-e));
  }
}

// The histogram bin of a non-negative statistic.
KJ_HD unsigned int hist_key(double v) { return static_cast<unsigned int>(bits_of(v) >> 48) & 0x7fffu; }

// The value a binned percentile reports: the lower edge of its bin.
KJ_HD double hist_edge(unsigned int key) { return double_of(static_cast<unsigned long long>(key) << 48); }

// Rank ceil(q*n) - 1 for q = num/den (percentiles.cpp's rank_of).
KJ_HD unsigned long long percentile_rank(unsigned long long n, unsigned long long num,
                                         unsigned long long den) {
  const unsigned long long r = (n * num + den - 1) / den;
  return r == 0 ? 0 : r - 1;
}

KJ_HD void empty_stats(cmp_stats& s) {
  s.judged = s.settled = s.excused = s.overflows = s.nonfinite = s.mismatch = s.bad = 0;
  s.err_count = s.ref_count = s.ref_nonfinite = s.stat_count = 0;
  s.first_nonfinite = s.first_mismatch = cmp_none;
  s.first_count = 0;
  for (int k = 0; k < cmp_first_max; ++k)
    s.first[k] = cmp_none;
  s.worst = no_severity();
  s.worst_bad = no_severity();
  s.max_e = s.max_r = s.max_g = s.max_ratio = 0.0;
  s.max_abs = s.max_rel = s.max_ulp = 0.0;
  s.sum_e = s.sum_r = s.sum_g = 0.0;
  s.exp_e = s.exp_r = s.exp_g = cmp_empty_exponent;
}

// a then b (b's elements all after a's, as in the chunk order): the node of the chunk tree.
KJ_HD void combine_stats(cmp_stats& a, const cmp_stats& b) {
  a.judged += b.judged;
  a.settled += b.settled;
  a.excused += b.excused;
  a.overflows += b.overflows;
  a.nonfinite += b.nonfinite;
  a.mismatch += b.mismatch;
  a.bad += b.bad;
  a.err_count += b.err_count;
  a.ref_count += b.ref_count;
  a.ref_nonfinite += b.ref_nonfinite;
  a.stat_count += b.stat_count;
  if (b.first_nonfinite < a.first_nonfinite) a.first_nonfinite = b.first_nonfinite;
  if (b.first_mismatch < a.first_mismatch) a.first_mismatch = b.first_mismatch;
  for (long long k = 0; k < b.first_count && a.first_count < cmp_first_max; ++k)
    a.first[a.first_count++] = b.first[k];
  a.worst = worse_of(a.worst, b.worst);
  a.worst_bad = worse_of(a.worst_bad, b.worst_bad);
  a.max_e = max_hd(a.max_e, b.max_e);
  a.max_r = max_hd(a.max_r, b.max_r);
  a.max_g = max_hd(a.max_g, b.max_g);
  a.max_ratio = max_hd(a.max_ratio, b.max_ratio);
  a.max_abs = max_hd(a.max_abs, b.max_abs);
  a.max_rel = max_hd(a.max_rel, b.max_rel);
  a.max_ulp = max_hd(a.max_ulp, b.max_ulp);
  add_scaled(a.sum_e, a.exp_e, b.sum_e, b.exp_e);
  add_scaled(a.sum_r, a.exp_r, b.sum_r, b.exp_r);
  add_scaled(a.sum_g, a.exp_g, b.sum_g, b.exp_g);
}

// The sum terms of one element: the error (relative: every judged element; elementwise
// policies: finite errors), the reference's error (finite ones) and the golden's magnitude.
struct cmp_terms {
  double e, r, g; // 0 where the element adds nothing
  bool has_e, has_r, has_g;
};

KJ_HD cmp_terms sum_terms(const compare_params& p, const cmp_element& el) {
  cmp_terms t;
  t.e = t.r = t.g = 0.0;
  t.has_e = t.has_r = t.has_g = false;
  if (el.status != st_judged) return t;
  if (p.policy == cmp_relative) {
    t.e = el.err;
    t.has_e = true;
    t.g = abs_of(el.x);
    t.has_g = true;
    if (is_finite_hd(el.er)) {
      t.r = el.er;
      t.has_r = true;
    }
  } else if (is_finite_hd(el.err)) {
    t.e = el.err;
    t.has_e = true;
  }
  return t;
}

// The stride-halving tree over 32 lanes' values (lane 0 ends with the sum), as the device's
// shuffles add them; `v` holds 32 values and is overwritten.
KJ_HD double warp_tree_sum(double* v, int lanes) {
  for (int s = lanes / 2; s > 0; s >>= 1)
    for (int t = 0; t < s; ++t)
      v[t] = v[t] + v[t + s];
  return v[0];
}

// ---- one thread's elements -------------------------------------------------------------------

// Counts a chunk keeps, in this order.
enum cmp_count_slot {
  c_judged, c_settled, c_excused, c_overflows, c_nonfinite, c_mismatch, c_bad,
  c_err, c_ref, c_ref_nonfinite, c_stat, c_slots
};
constexpr unsigned int cmp_no_offset = 0xffffffffu;

// What one thread keeps over its elements of a chunk (the host keeps one per simulated thread).
struct cmp_lane {
  unsigned int count[c_slots];
  unsigned int first_nonfinite, first_mismatch; // offsets in the chunk
  unsigned int failing_mask;                    // bit j: the thread's element j fails
  double max_e, max_r, max_g, max_ratio, max_abs, max_rel, max_ulp;
  double sum_e, sum_r, sum_g;                   // unscaled sums (exponent 0)
  cmp_severity worst, worst_bad;
};

KJ_HD void empty_lane(cmp_lane& l) {
  for (int k = 0; k < c_slots; ++k) l.count[k] = 0u;
  l.first_nonfinite = l.first_mismatch = cmp_no_offset;
  l.failing_mask = 0u;
  l.max_e = l.max_r = l.max_g = l.max_ratio = l.max_abs = l.max_rel = l.max_ulp = 0.0;
  l.sum_e = l.sum_r = l.sum_g = 0.0;
  l.worst = no_severity();
  l.worst_bad = no_severity();
}

// error / allowed for a passing judged element, computed exactly only where it may reach
// `above`: where err < above * allowed by more than the product's rounding, the quotient stays
// below `above` and the element is left out (-1). Maxima and the worst element come out the same
// as with every quotient exact, without a division per element.
KJ_HD double ratio_reaching(double err, double allowed, double above) {
  if (is_nan(err)) return infinity();
  if (err == 0.0) return 0.0;
  if (!(allowed > 0.0)) return infinity();
  if (err < mul(mul(above, allowed), 1.0 - 0x1p-50)) return -1.0;
  return err / allowed;
}

// "No histogram key": the element adds nothing to the histograms.
constexpr unsigned int cmp_no_key = 0xffffffffu;

// Element j of the thread (chunk offset k, flat index `flat`, candidate c) into its lane: the
// counts, the first failures, the worst element, the maxima, the unscaled sums (or, for scaled
// ones, the terms in `terms`, added after the chunk's maxima are known). `keys`, when given,
// receives the element's bin in each statistic's histogram (cmp_no_key for none); the caller
// counts them (the device thread in runs of equal bins, the host one by one).
KJ_HD void lane_add(const compare_params& p, cmp_lane& l, const cmp_element& el, double c,
                    unsigned int k, long long flat, int j, bool scaled, double* terms,
                    unsigned int* keys) {
  terms[0] = terms[1] = terms[2] = 0.0;
  if (keys != nullptr) keys[0] = keys[1] = keys[2] = cmp_no_key;
  if (el.status != st_judged) {
    switch (el.status) {
      case st_settled: ++l.count[c_settled]; return;
      case st_excused: ++l.count[c_excused]; return;
      case st_overflow: ++l.count[c_overflows]; return;
      case st_fail_nonfinite:
        ++l.count[c_nonfinite];
        if (l.first_nonfinite == cmp_no_offset) l.first_nonfinite = k;
        break;
      default:
        ++l.count[c_mismatch];
        if (l.first_mismatch == cmp_no_offset) l.first_mismatch = k;
        break;
    }
    l.failing_mask |= 1u << j;
    l.worst = worse_of(l.worst, severity_hd(p, el, flat));
    return;
  }
  ++l.count[c_judged];
  const bool relative = p.policy == cmp_relative;
  if (el.bad) {
    ++l.count[c_bad];
    l.failing_mask |= 1u << j;
    const cmp_severity s = severity_hd(p, el, flat);
    l.worst = worse_of(l.worst, s);
    l.worst_bad = worse_of(l.worst_bad, s);
    if (!relative) l.max_ratio = max_hd(l.max_ratio, s.ratio);
  } else if (relative && p.with_bounds == 0) {
    // The first pass ranks by error; a thread's elements come in flat order, so a tie keeps the
    // earlier one.
    if (l.worst.failing <= 0 && el.err > l.worst.error) {
      l.worst.index = flat;
      l.worst.failing = 0;
      l.worst.ratio = el.err;
      l.worst.error = el.err;
    }
  } else if (l.worst.failing <= 0 || !relative) {
    // A passing element: its ratio matters only where it may reach the largest so far (and a
    // failing worst element outranks it).
    const double r = ratio_reaching(el.err, el.allowed, l.max_ratio);
    if (r >= 0.0) {
      if (!relative) l.max_ratio = max_hd(l.max_ratio, r);
      if (l.worst.failing <= 0) {
        cmp_severity s;
        s.index = flat;
        s.failing = 0;
        s.ratio = r;
        s.error = el.err;
        l.worst = worse_of(l.worst, s);
      }
    }
  }
  const cmp_terms t = sum_terms(p, el);
  if (t.has_e) {
    ++l.count[c_err];
    l.max_e = max_hd(l.max_e, t.e);
  }
  if (t.has_r) {
    ++l.count[c_ref];
    l.max_r = max_hd(l.max_r, t.r);
  } else if (relative) {
    ++l.count[c_ref_nonfinite];
  }
  if (t.has_g) l.max_g = max_hd(l.max_g, t.g);
  if (scaled) {
    terms[0] = t.e;
    terms[1] = t.r;
    terms[2] = t.g;
  } else {
    // A zero term adds nothing (s + 0 is s); unscaled, a term's square is scaled_square(v, 0).
    if (t.e > 0.0) l.sum_e = l.sum_e + mul(t.e, t.e);
    if (t.r > 0.0) l.sum_r = l.sum_r + mul(t.r, t.r);
    if (t.g > 0.0) l.sum_g = l.sum_g + mul(t.g, t.g);
  }
  if (is_finite_hd(el.x)) {
    double a, rel, u;
    error_statistics(p.dtype, c, el.x, expected_in_dtype(p), &a, &rel, &u);
    ++l.count[c_stat];
    l.max_abs = max_hd(l.max_abs, a);
    l.max_rel = max_hd(l.max_rel, rel);
    l.max_ulp = max_hd(l.max_ulp, u);
    if (keys != nullptr) {
      keys[0] = hist_key(a);
      keys[1] = hist_key(rel);
      keys[2] = hist_key(u);
    }
  }
}

}  // namespace kj::detail
