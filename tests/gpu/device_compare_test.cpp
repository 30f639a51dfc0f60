// The GPU comparator against the host comparator: for every scenario the finding from device
// tensors must equal compare_output's on the same host tensors bit for bit (every count, every
// double by its bits, every message), and the scenario must really run on the device. The
// scenarios sit where a comparator slips: errors at the bound and one ulp past it, NaN, ±Inf and
// -0 in every role, the NaN rules, f64 extremes (the scaled sums), narrow dtypes, slices longer
// than a chunk, outputs that are not a whole number of chunks, a large output whose binned
// percentiles come from the device's histograms, f32 outputs whose chunks the lean pass keeps or
// hands back, and an f32 golden read in place.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/device_compare.hpp"
#include "unit/compare/helpers.hpp"

namespace kj {
namespace {

using test::kInf;
using test::kNaN;
constexpr float kInfF = std::numeric_limits<float>::infinity();

std::uint64_t bits(double v) {
  return std::bit_cast<std::uint64_t>(v);
}

// Doubles compared by their bits (NaN equals NaN of the same payload, 0 differs from -0).
#define EXPECT_SAME_DOUBLE(a, b, what)                                                             \
  EXPECT_EQ(bits(a), bits(b)) << (what) << ": " << (a) << " vs " << (b)

void expect_same_report(const ElementReport& a, const ElementReport& b, const std::string& what) {
  EXPECT_EQ(a.flat, b.flat) << what;
  EXPECT_EQ(a.index, b.index) << what;
  EXPECT_SAME_DOUBLE(a.value, b.value, what + " value");
  EXPECT_SAME_DOUBLE(a.expected, b.expected, what + " expected");
  EXPECT_SAME_DOUBLE(a.error, b.error, what + " error");
  EXPECT_SAME_DOUBLE(a.allowed, b.allowed, what + " allowed");
}

void expect_same_percentiles(const Percentiles& a, const Percentiles& b, const std::string& what) {
  EXPECT_SAME_DOUBLE(a.p50, b.p50, what + " p50");
  EXPECT_SAME_DOUBLE(a.p99, b.p99, what + " p99");
  EXPECT_SAME_DOUBLE(a.p999, b.p999, what + " p99.9");
  EXPECT_SAME_DOUBLE(a.max, b.max, what + " max");
}

void expect_same_finding(const OutputFinding& d, const OutputFinding& h) {
  EXPECT_EQ(d.reason, h.reason);
  EXPECT_EQ(d.message, h.message);
  EXPECT_EQ(d.count, h.count);
  EXPECT_EQ(d.mismatches, h.mismatches);
  EXPECT_SAME_DOUBLE(d.mismatch_fraction, h.mismatch_fraction, "mismatch_fraction");
  EXPECT_EQ(d.nonfinite, h.nonfinite);
  EXPECT_EQ(d.excused, h.excused);
  EXPECT_EQ(d.overflows_excused, h.overflows_excused);
  ASSERT_EQ(d.first.size(), h.first.size());
  for (std::size_t i = 0; i < d.first.size(); ++i)
    expect_same_report(d.first[i], h.first[i], "first[" + std::to_string(i) + "]");
  ASSERT_EQ(d.worst.has_value(), h.worst.has_value());
  if (d.worst) expect_same_report(*d.worst, *h.worst, "worst");
  EXPECT_EQ(d.stats.made, h.stats.made);
  EXPECT_EQ(d.stats.binned, h.stats.binned);
  expect_same_percentiles(d.stats.abs, h.stats.abs, "abs");
  expect_same_percentiles(d.stats.rel, h.stats.rel, "rel");
  expect_same_percentiles(d.stats.ulp, h.stats.ulp, "ulp");
  EXPECT_EQ(d.bound.policy, h.bound.policy);
  EXPECT_EQ(d.bound.source, h.bound.source);
  EXPECT_SAME_DOUBLE(d.bound.max_bound, h.bound.max_bound, "max_bound");
  EXPECT_SAME_DOUBLE(d.bound.rms_bound, h.bound.rms_bound, "rms_bound");
  EXPECT_SAME_DOUBLE(d.bound.max_error, h.bound.max_error, "max_error");
  EXPECT_SAME_DOUBLE(d.bound.rms_error, h.bound.rms_error, "rms_error");
  EXPECT_EQ(d.failed_slice_count, h.failed_slice_count);
  ASSERT_EQ(d.failed_slices.size(), h.failed_slices.size());
  for (std::size_t i = 0; i < d.failed_slices.size(); ++i) {
    EXPECT_EQ(d.failed_slices[i].slice, h.failed_slices[i].slice);
    EXPECT_SAME_DOUBLE(d.failed_slices[i].max_error, h.failed_slices[i].max_error, "slice max");
    EXPECT_SAME_DOUBLE(d.failed_slices[i].rms_error, h.failed_slices[i].rms_error, "slice rms");
  }
  EXPECT_SAME_DOUBLE(d.log_error_ratio, h.log_error_ratio, "log_error_ratio");
}

DeviceBuffer upload(const HostTensor& h) {
  DeviceBuffer b(std::max<std::size_t>(h.nbytes(), 1));
  if (h.nbytes() > 0) copy_to_device(b.ptr(), h.bytes().data(), h.nbytes(), test::gpu().stream());
  return b;
}

struct Scenario {
  std::string name;
  OutputSpec spec;
  HostTensor actual, golden, reference;
  bool with_golden = true, with_reference = true;
  bool one_array = false; // the golden is the reference too, one device array (kjudge.compare's)
  CompareRules rules{}; // all but the spec, which is `spec`
};

PolicySpec policy(PolicySpec::Kind kind, Expected e = Expected::golden) {
  PolicySpec p;
  p.kind = kind;
  p.expected = e;
  return p;
}

class DeviceCompare : public test::GpuTest {
protected:
  static DeviceComparator& comparator() {
    static DeviceComparator* const c =
        new DeviceComparator(test::gpu().info(), test::compile_options());
    return *c;
  }

  // The scenario judged on both sides; they must agree bit for bit, with the statistics of a
  // passing output and without (the judge's verdict pass, whose lean kernels skip them).
  OutputFinding both(const Scenario& s) {
    Scenario lean = s;
    lean.rules.statistics = false;
    lean.name += " (no statistics)";
    const OutputFinding without = both_sides(lean);
    const OutputFinding with = both_sides(s);
    EXPECT_EQ(without.stats.made, !with.pass() || s.rules.exact_percentiles) << s.name;
    EXPECT_EQ(without.message, with.message) << s.name;
    return with;
  }
  OutputFinding both_sides(const Scenario& s) {
    CompareInputs host;
    static_cast<CompareRules&>(host) = s.rules;
    host.spec = &s.spec;
    host.actual = &s.actual;
    host.golden = s.with_golden ? &s.golden : nullptr;
    host.reference = s.one_array ? &s.golden : s.with_reference ? &s.reference : nullptr;
    const OutputFinding h = compare_output(host);

    const DeviceBuffer a = upload(s.actual), g = upload(s.golden), r = upload(s.reference);
    DeviceCompareInputs dev;
    static_cast<CompareRules&>(dev) = s.rules;
    dev.spec = &s.spec;
    dev.shape = s.actual.shape();
    dev.actual = {a.ptr(), s.actual.dtype()};
    if (s.with_golden) dev.golden = DeviceTensor{g.ptr(), s.golden.dtype()};
    if (s.with_reference) dev.reference = DeviceTensor{r.ptr(), s.reference.dtype()};
    if (s.one_array) dev.reference = dev.golden;
    EXPECT_TRUE(DeviceComparator::on_device(dev)) << s.name << ": judged on the host, not the GPU";
    const OutputFinding d = comparator().compare(dev, stream());
    SCOPED_TRACE(s.name + ": " + h.message);
    expect_same_finding(d, h);
    return h;
  }
};

std::vector<double> normal_values(std::size_t n, unsigned seed, double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<double> v(n);
  for (double& x : v)
    x = dist(rng);
  return v;
}

// A candidate and reference near a golden: f32 roundings of it, moved by a few ulps at random.
void near(const std::vector<double>& golden, unsigned seed, int max_ulps,
          std::vector<double>& out) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> step(-max_ulps, max_ulps);
  out.resize(golden.size());
  for (std::size_t i = 0; i < golden.size(); ++i) {
    float f = static_cast<float>(golden[i]);
    for (int k = step(rng); k != 0; k += k > 0 ? -1 : 1)
      f = std::nextafter(f, k > 0 ? kInfF : -kInfF);
    out[i] = f;
  }
}

TEST_F(DeviceCompare, RelativeOverSlicesLongerThanAChunkAndRaggedShapes) {
  for (const Shape& shape : {Shape{7, 10000}, Shape{129, 1000}, Shape{3, 4097}, Shape{1, 1}}) {
    const std::size_t n = static_cast<std::size_t>(shape[0] * shape[1]);
    const std::vector<double> g = normal_values(n, 1);
    std::vector<double> c, r;
    near(g, 2, 3, c);
    near(g, 3, 2, r);
    PolicySpec p = policy(PolicySpec::Kind::relative);
    Scenario s{"relative " + shape_string(shape), test::output(DType::f32, p, 0),
               test::tensor(DType::f32, shape, c), test::tensor(DType::f64, shape, g),
               test::tensor(DType::f32, shape, r)};
    both(s);
    // One element far out: the second pass finds it, its slice fails.
    c[n / 2] += 1.0;
    s.actual = test::tensor(DType::f32, shape, c);
    s.name += " with one wrong element";
    EXPECT_FALSE(both(s).pass());
    // Unsliced.
    s.spec = test::output(DType::f32, p);
    s.name += ", unsliced";
    EXPECT_FALSE(both(s).pass());
  }
}

TEST_F(DeviceCompare, AllcloseAtTheBoundAndOneUlpPast) {
  const std::size_t n = 5000;
  const std::vector<double> x = normal_values(n, 4);
  std::vector<double> expected(n), at_bound(n), past(n);
  const double rtol = 0x1p-10;
  for (std::size_t i = 0; i < n; ++i) {
    const float e = static_cast<float>(x[i]);
    expected[i] = e;
    // The largest float within |c - e| <= rtol*|e| and the next one past it.
    float c = e;
    while (std::fabs(static_cast<double>(std::nextafter(c, kInfF)) - e) <= rtol * std::fabs(e))
      c = std::nextafter(c, kInfF);
    at_bound[i] = c;
    past[i] = i % 97 == 0 ? std::nextafter(c, kInfF) : c;
  }
  PolicySpec p = policy(PolicySpec::Kind::allclose, Expected::reference);
  p.rtol = rtol;
  p.atol = 0.0;
  Scenario s{"allclose at the bound", test::output(DType::f32, p),
             test::tensor(DType::f32, {5000}, at_bound), test::tensor(DType::f64, {5000}, x),
             test::tensor(DType::f32, {5000}, expected)};
  EXPECT_TRUE(both(s).pass());
  s.actual = test::tensor(DType::f32, {5000}, past);
  s.name = "allclose one ulp past the bound";
  const OutputFinding f = both(s);
  EXPECT_FALSE(f.pass());
  EXPECT_EQ(f.mismatches, static_cast<std::int64_t>((n + 96) / 97));
}

TEST_F(DeviceCompare, NanInfAndNegativeZeroInEveryRole) {
  // Every pair of special and ordinary values as (golden, candidate), the reference the
  // rounded golden, under each NaN rule and the exact policy's signed-zero rule.
  const std::vector<double> specials = {
      kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.5, 0x1p-149, 3.4028234663852886e38};
  std::vector<double> g, c;
  for (double a : specials)
    for (double b : specials) {
      g.push_back(a);
      c.push_back(b);
    }
  const Shape shape{static_cast<std::int64_t>(g.size())};
  for (const NanRule rule : {NanRule::propagate, NanRule::ignore, NanRule::exempt}) {
    for (const PolicySpec::Kind kind : {PolicySpec::Kind::allclose, PolicySpec::Kind::ulp,
                                        PolicySpec::Kind::exact, PolicySpec::Kind::relative}) {
      for (const bool strict : {false, true}) {
        PolicySpec p = policy(kind, kind == PolicySpec::Kind::relative ? Expected::golden
                                                                       : Expected::reference);
        p.ulps = 2;
        Scenario s{"specials", test::output(DType::f32, p), test::tensor(DType::f32, shape, c),
                   test::tensor(DType::f64, shape, g), test::tensor(DType::f32, shape, g)};
        s.rules.nan = rule;
        s.rules.signed_zero_strict = strict;
        s.rules.nan_in_inputs = rule == NanRule::ignore;
        s.rules.extreme_in_inputs = strict; // the precision-overflow rule, half the time
        s.name = fmt::format("specials, {} policy {}, strict zero {}", static_cast<int>(rule),
                             static_cast<int>(kind), strict);
        both(s);
      }
    }
  }
}

TEST_F(DeviceCompare, F64ExtremesNarrowDtypesAndTheExactTier) {
  // f64 errors whose squares leave double's range: the scaled sums.
  const std::vector<double> g = {1e300, -1e300, 1e-300, 2.5e-310, 1.0, 0.0, 1e200, 7.0};
  std::vector<double> c = g, r = g;
  c[0] = 1.5e300;
  c[2] = 3e-300;
  c[6] = -1e200;
  r[3] = 2.6e-310;
  const Shape shape{8};
  Scenario rel{"f64 relative", test::output(DType::f64, policy(PolicySpec::Kind::relative)),
               test::tensor(DType::f64, shape, c), test::tensor(DType::f64, shape, g),
               test::tensor(DType::f64, shape, r)};
  both(rel);
  PolicySpec close = policy(PolicySpec::Kind::allclose, Expected::golden);
  Scenario f64_close{"f64 allclose", test::output(DType::f64, close),
                     test::tensor(DType::f64, shape, c), test::tensor(DType::f64, shape, g),
                     test::tensor(DType::f64, shape, r)};
  both(f64_close);

  for (const DType t : {DType::f16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
    const std::vector<double> x = normal_values(3000, 5);
    std::vector<double> y = x;
    for (std::size_t i = 0; i < y.size(); i += 7)
      y[i] *= 1.01;
    const Shape s{3000};
    for (const PolicySpec::Kind kind :
         {PolicySpec::Kind::allclose, PolicySpec::Kind::ulp, PolicySpec::Kind::relative}) {
      PolicySpec p = policy(kind);
      p.ulps = 1;
      Scenario sc{fmt::format("{} policy {}", dtype_name(t), static_cast<int>(kind)),
                  test::output(t, p), test::tensor(t, s, y), test::tensor(DType::f64, s, x),
                  test::tensor(t, s, x)};
      both(sc);
    }
  }
  Scenario tier{"exact tier", test::output(DType::f32, policy(PolicySpec::Kind::relative)),
                test::tensor(DType::f32, {4}, {1.0, -0.0, 2.0, 3.0}),
                test::tensor(DType::f64, {4}, {1, 0, 2, 3}),
                test::tensor(DType::f32, {4}, {1.0, 0.0, 2.0, 3.0})};
  tier.rules.tier = Tier::exact;
  tier.rules.signed_zero_strict = true;
  EXPECT_FALSE(both(tier).pass());
  Scenario no_golden{"reference only",
                     test::output(DType::f32, policy(PolicySpec::Kind::ulp, Expected::reference)),
                     test::tensor(DType::f32, {3}, {1.0, 2.0, kInf}),
                     test::tensor(DType::f64, {3}, {0, 0, 0}),
                     test::tensor(DType::f32, {3}, {1.0, 2.0, kInf})};
  no_golden.with_golden = false;
  EXPECT_TRUE(both(no_golden).pass());
}

TEST_F(DeviceCompare, ALargeOutputsBinnedPercentilesComeFromTheDevice) {
  const std::size_t n = std::size_t{1} << 22;
  const std::vector<double> g = normal_values(n, 6);
  std::vector<double> c, r;
  near(g, 7, 4, c);
  near(g, 8, 1, r);
  const Shape shape{1024, static_cast<std::int64_t>(n / 1024)};
  Scenario s{"2^22 relative", test::output(DType::f32, policy(PolicySpec::Kind::relative), 0),
             test::tensor(DType::f32, shape, c), test::tensor(DType::f64, shape, g),
             test::tensor(DType::f32, shape, r)};
  const OutputFinding f = both(s);
  EXPECT_TRUE(f.stats.binned);
  EXPECT_GT(f.stats.ulp.p50, 0.0);
  EXPECT_LE(f.stats.ulp.p999, f.stats.ulp.max);
}

TEST_F(DeviceCompare, TheLeanF32PassAndTheChunksItHandsBackAgreeWithTheHost) {
  // f32 outputs under the elementwise policies take the lean pass, which hands every chunk
  // holding anything but finite values within the bound back to judge_chunks. A ragged length
  // over 65 chunks; the plants sit in a few chunks (the last, ragged one among them), so the
  // output's statistics mix lean and redone chunks, and some of its bins come from each.
  const std::int64_t chunk = 16384;
  const std::size_t n = (std::size_t{1} << 20) + 4321;
  std::vector<double> g = normal_values(n, 9);
  g[5] = 0.0;
  std::vector<double> r, c_near;
  near(g, 10, 1, r);
  near(g, 11, 2, c_near);
  // Within allclose's absolute tolerance of 0, the relative error's f32 quotient overflows: the
  // statistic is then the largest double.
  c_near[5] = 1e-6;
  const Shape shape{static_cast<std::int64_t>(n)};
  for (const PolicySpec::Kind kind :
       {PolicySpec::Kind::allclose, PolicySpec::Kind::ulp, PolicySpec::Kind::exact}) {
    for (const bool against_golden : {true, false}) {
      for (const bool with_golden : {true, false}) {
        if (against_golden && !with_golden) continue;
        PolicySpec p = policy(kind, against_golden ? Expected::golden : Expected::reference);
        p.ulps = 4;
        std::vector<double> x(n), golden = g, reference = r;
        for (std::size_t i = 0; i < n; ++i)
          x[i] = against_golden ? static_cast<float>(g[i]) : r[i];
        std::vector<double> c = kind == PolicySpec::Kind::allclose ? c_near : x;
        if (kind == PolicySpec::Kind::ulp) // within 4 ulps of x
          for (std::size_t i = 0; i < n; i += 5)
            c[i] = std::nextafter(std::nextafter(static_cast<float>(x[i]), kInfF), kInfF);
        Scenario s{"", test::output(DType::f32, p), test::tensor(DType::f32, shape, c),
                   test::tensor(DType::f64, shape, golden),
                   test::tensor(DType::f32, shape, reference)};
        s.with_golden = with_golden;
        s.name = fmt::format("lean, policy {}, against the {}, golden {}", static_cast<int>(kind),
                             against_golden ? "golden" : "reference", with_golden);
        EXPECT_TRUE(both(s).pass()) << s.name;

        c[3 * chunk + 5] = kNaN;
        c[7 * chunk + 100] = kInf;
        c[11 * chunk + 7] += 1.0;
        c[n - 1] = -3.0 * c[n - 1] - 1.0;
        (against_golden ? golden : reference)[20 * chunk + 9] = against_golden ? 1e39 : kInf;
        s.actual = test::tensor(DType::f32, shape, c);
        s.golden = test::tensor(DType::f64, shape, golden);
        s.reference = test::tensor(DType::f32, shape, reference);
        s.name += ", planted";
        const OutputFinding f = both(s);
        EXPECT_FALSE(f.pass()) << s.name;
        EXPECT_GE(f.mismatches, 3) << s.name;
      }
    }
  }
}

TEST_F(DeviceCompare, AnF32GoldenIsReadInPlaceWithItsWidenedCopysFinding) {
  // kjudge.compare judges a CUDA f32 expected as the golden where it lies (no f64 copy), and
  // without a golden passes that one array as the reference too: the lean pass (against either
  // only when they are one array), the chunks it hands back and relative's generic pass read it
  // as f32. Each finding must be the one an f64 widening in its own array gives, on both sides,
  // right and planted, against the golden, against a reference of its own, and against the one
  // array.
  const std::int64_t chunk = 16384;
  const std::size_t n = (std::size_t{1} << 20) + 4321;
  std::vector<double> g = normal_values(n, 15);
  for (double& v : g)
    v = static_cast<float>(v);
  std::vector<double> r, c_near;
  near(g, 16, 1, r);
  near(g, 17, 2, c_near);
  const Shape shape{static_cast<std::int64_t>(n)};
  enum class Basis { golden, reference, one_array };
  for (const PolicySpec::Kind kind : {PolicySpec::Kind::allclose, PolicySpec::Kind::ulp,
                                      PolicySpec::Kind::exact, PolicySpec::Kind::relative}) {
    for (const Basis basis : {Basis::golden, Basis::reference, Basis::one_array}) {
      const bool relative = kind == PolicySpec::Kind::relative;
      if (relative && basis != Basis::golden) continue; // (relative compares against the golden)
      PolicySpec p = policy(kind, basis == Basis::golden ? Expected::golden : Expected::reference);
      p.ulps = 4;
      std::vector<double> golden = g;
      std::vector<double> c = kind != PolicySpec::Kind::exact ? c_near
                              : basis == Basis::reference     ? r
                                                              : g;
      for (const bool planted : {false, true}) {
        if (planted) {
          c[3 * chunk + 5] = kNaN;
          c[7 * chunk + 100] = kInf;
          c[11 * chunk + 7] += 1.0;
          c[n - 1] = -3.0 * c[n - 1] - 1.0;
          golden[20 * chunk + 9] = kInf;
          golden[30 * chunk + 1] = kNaN;
        }
        Scenario s{fmt::format("f32 golden, policy {}, basis {}{}", static_cast<int>(kind),
                               static_cast<int>(basis), planted ? ", planted" : ""),
                   test::output(DType::f32, p), test::tensor(DType::f32, shape, c),
                   test::tensor(DType::f32, shape, golden), test::tensor(DType::f32, shape, r)};
        s.one_array = basis == Basis::one_array;
        const OutputFinding in_place = both(s);
        if (planted || !relative) { // (relative's k may not cover 2 ulps)
          EXPECT_EQ(in_place.pass(), !planted) << s.name;
        }
        if (s.one_array) s.reference = s.golden;
        s.golden = s.golden.converted(DType::f64);
        s.one_array = false;
        s.name += ", widened";
        SCOPED_TRACE(s.name);
        expect_same_finding(in_place, both(s));
      }
    }
  }
}

TEST_F(DeviceCompare, TheLeanPassGivesUpOnAnOutputWrongThroughout) {
  // Past a sixteenth of the chunks handed back, each block of the lean pass hands back the rest
  // of its chunks unjudged, bins uncounted: 513 chunks over at most 2 blocks an SM, so blocks
  // still hold chunks when they give up (unless the GPU has 257 SMs or more).
  const std::size_t n = (std::size_t{1} << 23) + 77;
  const std::vector<double> g = normal_values(n, 12);
  std::vector<double> x, c;
  near(g, 13, 1, x);
  near(g, 14, 2, c);
  std::int64_t wrong = 0;
  for (std::size_t i = 0; i < n; i += 3, ++wrong)
    c[i] += 1.0;
  const Shape shape{static_cast<std::int64_t>(n)};
  Scenario s{"lean, wrong throughout",
             test::output(DType::f32, policy(PolicySpec::Kind::allclose, Expected::reference)),
             test::tensor(DType::f32, shape, c), test::tensor(DType::f64, shape, g),
             test::tensor(DType::f32, shape, x)};
  s.with_golden = false;
  const OutputFinding f = both(s);
  EXPECT_FALSE(f.pass());
  EXPECT_EQ(f.mismatches, wrong);
}

TEST(ComparatorHost, KernelsCompileUnderNvrtc) {
  // The kernels compile without a GPU (NVRTC only), so CI proves they build.
  CompileOptions o;
  o.arch = 90;
  o.kjudge_include = test::kjudge_include();
  const CompiledModule m = compile_trusted_module(
      "#include \"kjudge/detail/compare_kernels.cuh\"\n", "kjudge_compare_kernels.cu",
      {"kj::cmp::judge_chunks<false, -1, -1>", "kj::cmp::combine_groups", "kj::cmp::percentiles",
       "kj::cmp::judge_chunks_lean<kj::detail::cmp_allclose>"},
      o);
  EXPECT_FALSE(m.cubin.empty());
  ASSERT_EQ(m.kernels.size(), 4u);
  for (const KernelSymbol& k : m.kernels)
    EXPECT_EQ(k.lowered.rfind("_ZN2kj3cmp", 0), 0u) << k.lowered;
}

} // namespace
} // namespace kj
