// kjudge's builtin kernels. On the host (no GPU needed), the device code's own functions
// (dtype_bits_impl.hpp, builtin_kernels.cuh) against the host implementations they twin: rounding and
// storing every dtype against HostTensor::set, widening against HostTensor::get over every bit
// pattern of the narrow formats, and the per-element generator against generate_input; and the
// kernels compile under NVRTC. On the GPU: generate is bit-identical to generate_input for every
// distribution x dtype with transforms and special values, widening and rounding match the
// host, and pattern fills and byte counts are exact at any alignment and length.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "judge/defences.hpp"
#include "judge/findings.hpp"
#include "kjudge/builtin_kernels.hpp"
#include "kjudge/detail/builtin_kernels.cuh"
#include "kjudge/error.hpp"
#include "kjudge/inputs.hpp"
#include "kjudge/tensor.hpp"

namespace kj {
namespace {

const std::vector<DType> all_dtypes = {DType::f64,     DType::f32,     DType::f16, DType::bf16,
                                       DType::fp8e4m3, DType::fp8e5m2, DType::i64, DType::i32,
                                       DType::i16,     DType::i8,      DType::u8,  DType::boolean};

const std::vector<SpecialKind> all_specials = {SpecialKind::nan,      SpecialKind::pos_inf,
                                               SpecialKind::neg_inf,  SpecialKind::neg_zero,
                                               SpecialKind::subnormal, SpecialKind::dtype_max};

Distribution dist(Distribution::Kind kind, double a, double b, std::string text) {
  Distribution d;
  d.kind = kind;
  d.a = a;
  d.b = b;
  d.text = std::move(text);
  return d;
}

// Every distribution, with parameters that reach saturation, subnormals after the x0.01
// transform, integers beyond 2^53 and negative values.
std::vector<Distribution> test_distributions() {
  using K = Distribution::Kind;
  return {dist(K::normal, 0.5, 2.0, "normal(0.5, 2)"),
          dist(K::normal, 0.0, 1e6, "normal(0, 1e6)"),
          dist(K::uniform, -3.0, 5.0, "uniform(-3, 5)"),
          dist(K::integer, -300.0, 300.0, "int(-300, 300)"),
          dist(K::integer, -0x1p62, 0x1p62, "int(-2^62, 2^62)"),
          dist(K::bernoulli, 0.3, 0.0, "bernoulli(0.3)"),
          dist(K::pareto, 1.5, 0.0, "pareto(1.5)"),
          dist(K::pareto, 0.02, 0.0, "pareto(0.02)"),
          dist(K::constant, -2.7, 0.0, "const(-2.7)"),
          dist(K::arange, 0.0, 0.0, "arange")};
}

InputSpec input(DType dtype, const Distribution& d) {
  InputSpec s;
  s.name = "x";
  s.dtype = dtype;
  s.dist = d;
  s.domain = Domain::any;
  s.where = Location{"problem.toml", "input[0].dist", 0, 0};
  return s;
}

std::string bytes_at(const unsigned char* p, std::size_t size) {
  std::string out;
  for (std::size_t i = size; i-- > 0;) out += fmt::format("{:02x}", p[i]);
  return out;
}

// Empty when equal, else the first differing element with both byte patterns (little-endian
// printed as a number) and the host's value.
std::string first_difference(const HostTensor& want, const std::vector<unsigned char>& got) {
  const std::size_t size = dtype_size(want.dtype());
  if (got.size() != want.nbytes())
    return fmt::format("size {} != {}", got.size(), want.nbytes());
  const auto* w = reinterpret_cast<const unsigned char*>(want.bytes().data());
  if (std::memcmp(w, got.data(), got.size()) == 0) return "";
  std::int64_t diffs = 0, first = -1;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    if (std::memcmp(w + i * size, got.data() + i * size, size) != 0) {
      if (first < 0) first = i;
      ++diffs;
    }
  }
  return fmt::format("{} of {} elements differ; first at {}: want 0x{} ({}), got 0x{}", diffs,
                     want.numel(), first, bytes_at(w + first * size, size), want.get(first),
                     bytes_at(got.data() + first * size, size));
}

// generate_input's bytes computed by the kernel's per-element code, on the host.
std::vector<unsigned char> emulate_generate(const InputSpec& spec, std::int64_t numel,
                                            StreamId stream, const Transform& transform,
                                            const SpecialValues* special) {
  const detail::generate_params g =
      detail::make_generate_params(spec, numel, stream, transform, special);
  std::vector<unsigned char> out(static_cast<std::size_t>(numel) * dtype_size(spec.dtype));
  for (std::int64_t i = 0; i < numel; ++i)
    detail::store_rounded(out.data(), static_cast<unsigned long long>(i), g.dtype,
                          detail::generate_value(g, static_cast<unsigned long long>(i)));
  return out;
}

// The cases' scalings and the mutation pool's offsets (a multiply, then an add: never fused).
const Transform transforms[] = {{"", 1.0},  {"x", 3.0},         {"x", 0.01},
                                {"x", -1.0}, {"x", 1.0, 100.0}, {"x", 3.0, -8.5}};

// ---- host: the device code against the host implementations ---------------------------------

// Doubles that probe every rounding path: signed zeros, infinities, NaNs with payloads, each
// format's max, max + half an ulp (the Inf threshold), subnormal ties, integer ties, and random
// values over the whole exponent range.
std::vector<double> rounding_corpus() {
  std::vector<double> v = {0.0,   -0.0, 1.0,  -1.0, 0.5, 1.5, 2.5, -2.5, 3.5,
                           1e300, -1e300, std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(),
                           detail::double_of(0xfff8000000000000ull),  // x86's default NaN
                           detail::double_of(0x7ff0000000000001ull),  // signalling, payload 1
                           detail::double_of(0x7ffabcdef0123456ull),  // payload
                           std::numeric_limits<double>::denorm_min(),
                           std::numeric_limits<double>::min(), std::numeric_limits<double>::max(),
                           0x1p63, -0x1p63, 0x1p63 - 1024.0, 2147483647.5, -2147483648.5,
                           127.5, -128.5, 255.5, 32767.5, -32768.5, 0x1p53 + 1.0};
  for (const DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2}) {
    const FloatFormat f = float_format(t);
    const double ulp_max = std::ldexp(1.0, std::ilogb(f.max_finite) - f.mantissa_bits);
    for (const double x : {f.max_finite, f.max_finite + ulp_max / 2, f.max_finite + ulp_max / 4,
                           f.max_finite + ulp_max, f.min_normal, f.min_subnormal,
                           f.min_subnormal / 2, f.min_subnormal * 1.5, f.min_subnormal * 2.5,
                           f.min_subnormal * 0.75, f.min_normal - f.min_subnormal / 2,
                           f.min_subnormal / 4}) {
      v.push_back(x);
      v.push_back(-x);
      v.push_back(std::nextafter(x, 0.0));
      v.push_back(std::nextafter(x, 1e308));
    }
  }
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> exponent(-160, 140);
  std::uniform_real_distribution<double> mantissa(1.0, 2.0);
  for (int i = 0; i < 400000; ++i) {
    double x = std::ldexp(mantissa(rng), exponent(rng));
    if (rng() & 1u) x = -x;
    v.push_back(x);
  }
  for (int i = 0; i < 100000; ++i) {  // integer ties and near-ties for the integer dtypes
    const double base = static_cast<double>(static_cast<std::int64_t>(rng() >> 40)) - 8388608.0;
    v.push_back(base + 0.5);
    v.push_back(base + 0.25);
  }
  for (int i = 0; i < 100000; ++i) v.push_back(detail::double_of(rng()));  // any bits at all
  return v;
}

TEST(BuiltinHost, StoreMatchesHostTensorSetForEveryDtype) {
  const std::vector<double> corpus = rounding_corpus();
  for (const DType t : all_dtypes) {
    HostTensor want(t, {static_cast<std::int64_t>(corpus.size())});
    std::vector<unsigned char> got(want.nbytes());
    for (std::size_t i = 0; i < corpus.size(); ++i) {
      want.set(static_cast<std::int64_t>(i), corpus[i]);
      detail::store_rounded(got.data(), i, static_cast<int>(t), corpus[i]);
    }
    const std::string diff = first_difference(want, got);
    EXPECT_TRUE(diff.empty()) << dtype_name(t) << ": " << diff;
  }
}

TEST(BuiltinHost, RoundToMatchesForEveryDtypeAndTf32Formats) {
  const std::vector<double> corpus = rounding_corpus();
  for (const DType t : all_dtypes) {
    std::int64_t bad = 0;
    for (const double x : corpus) {
      const double want = round_to(t, x);
      const double got = detail::round_to_hd(static_cast<int>(t), x);
      const bool same = std::isnan(want) ? std::isnan(got)
                                         : detail::bits_of(want) == detail::bits_of(got);
      if (!same && bad++ < 3)
        ADD_FAILURE() << dtype_name(t) << ": round_to(" << x << ") = " << want << ", device code "
                      << got;
    }
    EXPECT_EQ(bad, 0) << dtype_name(t);
  }
}

TEST(BuiltinHost, WidenMatchesHostTensorGetOnEveryNarrowPattern) {
  for (const DType t : {DType::f16, DType::bf16, DType::fp8e4m3, DType::fp8e5m2, DType::u8,
                        DType::i8, DType::i16, DType::boolean}) {
    const std::size_t size = dtype_size(t);
    const std::int64_t n = std::int64_t{1} << (8 * size);
    HostTensor src(t, {n});
    for (std::int64_t i = 0; i < n; ++i)
      std::memcpy(src.bytes().data() + i * static_cast<std::int64_t>(size), &i, size);
    if (t == DType::boolean)  // bool storage holds 0/1 only
      for (std::int64_t i = 0; i < n; ++i)
        src.bytes()[static_cast<std::size_t>(i)] = static_cast<std::byte>(i & 1);
    for (std::int64_t i = 0; i < n; ++i) {
      const double want = src.get(i);
      const double got = detail::load_widened(
          src.bytes().data(), static_cast<unsigned long long>(i), static_cast<int>(t));
      ASSERT_EQ(detail::bits_of(got), detail::bits_of(want))
          << dtype_name(t) << " pattern " << i << ": want " << want << ", got " << got;
    }
  }
}

TEST(BuiltinHost, WidenMatchesHostTensorGetOnWideDtypes) {
  std::mt19937_64 rng(5);
  for (const DType t : {DType::f32, DType::f64, DType::i32, DType::i64}) {
    const std::int64_t n = 1 << 20;
    HostTensor src(t, {n});
    for (auto& b : src.bytes()) b = std::byte(rng() & 0xffu);
    // Some of f32's special patterns: zeros, infinities, NaNs with payloads, subnormals.
    if (t == DType::f32) {
      const std::uint32_t special[] = {0x0u,        0x80000000u, 0x7f800000u, 0xff800000u,
                                       0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x00000001u,
                                       0x807fffffu, 0x7f7fffffu};
      std::memcpy(src.bytes().data(), special, sizeof special);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      const double want = src.get(i);
      const double got = detail::load_widened(
          src.bytes().data(), static_cast<unsigned long long>(i), static_cast<int>(t));
      ASSERT_EQ(detail::bits_of(got), detail::bits_of(want)) << dtype_name(t) << " element " << i;
    }
  }
}

TEST(BuiltinHost, PerElementGeneratorMatchesGenerateInput) {
  // Every distribution x dtype, transforms and special kinds in turn, on a size with a partial
  // last stride of special positions.
  const std::int64_t numel = 1000 + 3;
  int round = 0;
  for (const Distribution& d : test_distributions()) {
    for (const DType t : all_dtypes) {
      const InputSpec spec = input(t, d);
      const Transform& tr = transforms[round % std::size(transforms)];
      const SpecialValues special{"x", all_specials[static_cast<std::size_t>(round) % 6]};
      const StreamId stream{0x1234567890abcdefull + static_cast<std::uint64_t>(round), 3, 1};
      ++round;
      const HostTensor want = generate_input(spec, {numel}, stream, tr, &special);
      const std::string diff =
          first_difference(want, emulate_generate(spec, numel, stream, tr, &special));
      EXPECT_TRUE(diff.empty()) << d.text << " " << dtype_name(t) << " " << tr.label() << " "
                                << special_kind_name(special.kind) << ": " << diff;
    }
  }
}

TEST(BuiltinHost, GenerateParamsValidateLikeTheHost) {
  using K = Distribution::Kind;
  EXPECT_THROW(detail::make_generate_params(input(DType::i32, dist(K::integer, 5, 1, "int(5, 1)")),
                                            10, {}, {}, nullptr),
               SpecError);
  EXPECT_THROW(detail::make_generate_params(input(DType::f32, dist(K::pareto, 0, 0, "pareto(0)")),
                                            10, {}, {}, nullptr),
               SpecError);
  Distribution file = dist(K::file, 0, 0, "file(\"x.npy\")");
  file.file = "x.npy";
  EXPECT_THROW(detail::make_generate_params(input(DType::f32, file), 10, {}, {}, nullptr),
               InternalError);
  // Special values go only to the named input, where domain and dtype admit them.
  InputSpec positive = input(DType::f32, dist(K::uniform, 1, 2, "uniform(1, 2)"));
  positive.domain = Domain::positive;
  const SpecialValues nan{"x", SpecialKind::nan};
  EXPECT_EQ(detail::make_generate_params(positive, 10, {}, {}, &nan).plant_special, 0);
  const SpecialValues other{"y", SpecialKind::pos_inf};
  EXPECT_EQ(detail::make_generate_params(positive, 10, {}, {}, &other).plant_special, 0);
  const SpecialValues inf{"x", SpecialKind::pos_inf};
  EXPECT_EQ(detail::make_generate_params(positive, 10, {}, {}, &inf).plant_special, 1);
  EXPECT_EQ(detail::make_generate_params(input(DType::fp8e4m3, positive.dist), 10, {}, {}, &inf)
                .plant_special,
            0);  // e4m3 has no Inf
  EXPECT_EQ(detail::make_generate_params(positive, 0, {}, {}, &inf).plant_special, 0);
}

TEST(BuiltinHost, PatternHelpers) {
  EXPECT_EQ(detail::pattern_byte(0x44332211u, 0), 0x11);
  EXPECT_EQ(detail::pattern_byte(0x44332211u, 5), 0x22);
  EXPECT_EQ(detail::pattern_byte(0x44332211u, 7), 0x44);
  EXPECT_EQ(detail::pattern_word_at(0x44332211u, 0), 0x44332211u);
  EXPECT_EQ(detail::pattern_word_at(0x44332211u, 1), 0x11443322u);
  EXPECT_EQ(detail::pattern_word_at(0x44332211u, 3), 0x33221144u);
  EXPECT_EQ(detail::nonzero_bytes(0), 0u);
  EXPECT_EQ(detail::nonzero_bytes(0x80000001u), 2u);
  EXPECT_EQ(detail::nonzero_bytes(0x01010101u), 4u);
  EXPECT_EQ(detail::nonzero_bytes(0x00ff0000u), 1u);
  EXPECT_EQ(detail::nonzero_bytes(0x7f7f7f7fu), 4u);
}

TEST(BuiltinHost, KernelsCompileUnderNvrtc) {
  CompileOptions o;
  o.arch = 90;
  o.kjudge_include = test::kjudge_include();
  const CompiledModule m = compile_builtin_kernels(o);
  EXPECT_FALSE(m.cubin.empty());
  ASSERT_EQ(m.kernels.size(), builtin_kernel_names().size());
  for (std::size_t i = 0; i < m.kernels.size(); ++i) {
    EXPECT_EQ(m.kernels[i].expression, builtin_kernel_names()[i]);
    EXPECT_EQ(m.kernels[i].lowered.rfind("_ZN2kj7builtin", 0), 0u) << m.kernels[i].lowered;
  }
  // Through the cache: the second compile is a hit with the same CUBIN.
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / fmt::format("kj-builtin-cache-{}", getpid());
  o.cache_dir = cache;
  const CompiledModule first = compile_builtin_kernels(o);
  const CompiledModule second = compile_builtin_kernels(o);
  EXPECT_FALSE(first.from_cache);
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.kernels[0].lowered, first.kernels[0].lowered);
  std::filesystem::remove_all(cache);
}

// ---- GPU --------------------------------------------------------------------------------------

class Builtin : public test::GpuTest {
protected:
  const BuiltinKernels& k() const { return test::builtins(); }

  std::vector<unsigned char> generate_on_device(const InputSpec& spec, std::int64_t numel,
                                                StreamId stream, const Transform& tr,
                                                const SpecialValues* special) {
    const std::size_t bytes = static_cast<std::size_t>(numel) * dtype_size(spec.dtype);
    DeviceBuffer out(bytes + 16);
    fill_bytes(out.ptr(), 0xee, bytes + 16, this->stream());
    k().generate(out.ptr(), spec, numel, stream, tr, special, this->stream());
    std::vector<unsigned char> got(bytes + 16);
    copy_to_host(got.data(), out.ptr(), got.size(), this->stream());
    // Nothing past the tensor is touched.
    for (std::size_t i = bytes; i < bytes + 16; ++i) EXPECT_EQ(got[i], 0xee) << "byte " << i;
    got.resize(bytes);
    return got;
  }
};

TEST_F(Builtin, GenerateIsBitIdenticalForEveryDistributionAndDtype) {
  const std::int64_t numel = 100003;  // > 1e5, not a multiple of 4, partial special stride
  int round = 0;
  for (const Distribution& d : test_distributions()) {
    for (const DType t : all_dtypes) {
      const InputSpec spec = input(t, d);
      const Transform& tr = transforms[(round + 1) % std::size(transforms)];
      const SpecialValues special{"x", all_specials[static_cast<std::size_t>(round) % 6]};
      const StreamId stream{0xfeedfacecafebeefull ^ static_cast<std::uint64_t>(round), 2, 0};
      ++round;
      const HostTensor want = generate_input(spec, {numel}, stream, tr, &special);
      const std::string diff =
          first_difference(want, generate_on_device(spec, numel, stream, tr, &special));
      EXPECT_TRUE(diff.empty()) << d.text << " " << dtype_name(t) << " " << tr.label() << " "
                                << special_kind_name(special.kind) << ": " << diff;
    }
  }
}

TEST_F(Builtin, GenerateEverySpecialKindAndSmallSizes) {
  const Distribution d = dist(Distribution::Kind::normal, 0.0, 1.0, "normal(0, 1)");
  for (const DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::fp8e4m3,
                        DType::fp8e5m2, DType::i32}) {
    for (const SpecialKind kind : all_specials) {
      for (const std::int64_t numel : {1, 2, 3, 61, 62, 63, 122, 123, 4099}) {
        const InputSpec spec = input(t, d);
        const SpecialValues special{"x", kind};
        const StreamId stream{99, 0, static_cast<std::uint32_t>(numel)};
        const HostTensor want = generate_input(spec, {numel}, stream, transforms[1], &special);
        const std::string diff = first_difference(
            want, generate_on_device(spec, numel, stream, transforms[1], &special));
        EXPECT_TRUE(diff.empty()) << dtype_name(t) << " " << special_kind_name(kind) << " numel "
                                  << numel << ": " << diff;
      }
    }
  }
  // Nothing to do for an empty tensor, and no launch.
  k().generate(0, input(DType::f32, d), 0, {}, {}, nullptr, stream());
  test::gpu().synchronize();
}

TEST_F(Builtin, GenerateRefusesWhatTheHostRefuses) {
  using K = Distribution::Kind;
  DeviceBuffer out(64);
  EXPECT_THROW(k().generate(out.ptr(), input(DType::i32, dist(K::integer, 5, 1, "int(5, 1)")), 4,
                            {}, {}, nullptr, stream()),
               SpecError);
  Distribution file = dist(K::file, 0, 0, "file(\"x.npy\")");
  file.file = "x.npy";
  EXPECT_THROW(k().generate(out.ptr(), input(DType::f32, file), 4, {}, {}, nullptr, stream()),
               InternalError);
}

TEST_F(Builtin, WidenToF64IsExact) {
  std::mt19937_64 rng(17);
  for (const DType t : all_dtypes) {
    // Every bit pattern for the 1- and 2-byte dtypes, random bytes for the rest.
    const std::size_t size = dtype_size(t);
    const std::int64_t n = size <= 2 ? (std::int64_t{1} << (8 * size)) : 300007;
    HostTensor src(t, {n});
    if (size <= 2) {
      for (std::int64_t i = 0; i < n; ++i)
        std::memcpy(src.bytes().data() + i * static_cast<std::int64_t>(size), &i, size);
    } else {
      for (auto& b : src.bytes()) b = std::byte(rng() & 0xffu);
    }
    if (t == DType::boolean)
      for (std::int64_t i = 0; i < n; ++i)
        src.bytes()[static_cast<std::size_t>(i)] = static_cast<std::byte>(i & 1);
    DeviceBuffer in(src.nbytes()), out(static_cast<std::size_t>(n) * 8);
    copy_to_device(in.ptr(), src.bytes().data(), src.nbytes(), stream());
    k().widen_to_f64(out.ptr(), in.ptr(), t, n, stream());
    std::vector<std::uint64_t> got(static_cast<std::size_t>(n));
    copy_to_host(got.data(), out.ptr(), out.bytes(), stream());
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint64_t want = detail::bits_of(src.get(i));
      if (got[static_cast<std::size_t>(i)] != want && bad++ < 3)
        ADD_FAILURE() << dtype_name(t) << " element " << i << ": want " << src.get(i) << " ("
                      << std::hex << want << "), got " << got[static_cast<std::size_t>(i)];
    }
    EXPECT_EQ(bad, 0) << dtype_name(t);
  }
}

TEST_F(Builtin, RoundFromF64MatchesHostTensorSet) {
  const std::vector<double> corpus = rounding_corpus();
  const auto n = static_cast<std::int64_t>(corpus.size());
  DeviceBuffer src(corpus.size() * 8);
  copy_to_device(src.ptr(), corpus.data(), src.bytes(), stream());
  for (const DType t : all_dtypes) {
    HostTensor want(t, {n});
    for (std::int64_t i = 0; i < n; ++i) want.set(i, corpus[static_cast<std::size_t>(i)]);
    DeviceBuffer out(want.nbytes());
    k().round_from_f64(out.ptr(), t, src.ptr(), n, stream());
    std::vector<unsigned char> got(want.nbytes());
    copy_to_host(got.data(), out.ptr(), got.size(), stream());
    const std::string diff = first_difference(want, got);
    EXPECT_TRUE(diff.empty()) << dtype_name(t) << ": " << diff;
  }
}

TEST_F(Builtin, PatternFillAndCountsAtAnyAlignment) {
  const std::uint32_t pattern = 0xdeadbeefu;
  const std::size_t total = 8192;
  DeviceBuffer buf(total), other(total);
  for (const std::size_t offset : {0, 1, 2, 3, 4, 5, 7, 8, 13, 15, 16, 17}) {
    for (const std::size_t len : {0, 1, 2, 3, 4, 5, 15, 16, 17, 31, 33, 100, 1000, 4093}) {
      fill_bytes(buf.ptr(), 0, total, stream());
      k().fill_pattern(buf.ptr() + offset, len, pattern, stream());
      std::vector<unsigned char> got(total);
      copy_to_host(got.data(), buf.ptr(), total, stream());
      for (std::size_t i = 0; i < total; ++i) {
        const unsigned char want =
            i >= offset && i < offset + len ? detail::pattern_byte(pattern, i - offset) : 0;
        ASSERT_EQ(got[i], want) << "offset " << offset << " len " << len << " byte " << i;
      }
      EXPECT_EQ(k().count_not_pattern(buf.ptr() + offset, len, pattern, stream()), 0u);
      // Damage some bytes of the pattern: each is counted once.
      std::size_t damaged = 0;
      for (std::size_t i = 0; i < len; i += 7) {
        fill_bytes(buf.ptr() + offset + i, static_cast<std::uint8_t>(~got[offset + i]), 1,
                   stream());
        ++damaged;
      }
      EXPECT_EQ(k().count_not_pattern(buf.ptr() + offset, len, pattern, stream()), damaged)
          << "offset " << offset << " len " << len;
    }
  }
  // Byte comparisons between buffers of equal and of different alignment.
  std::vector<unsigned char> host(total);
  std::mt19937 rng(3);
  for (auto& b : host) b = static_cast<unsigned char>(rng());
  copy_to_device(buf.ptr(), host.data(), total, stream());
  for (const std::size_t a_off : {0, 3, 16}) {
    for (const std::size_t b_off : {0, 3, 5, 16}) {
      const std::size_t len = 5000 + a_off;
      copy_to_device(other.ptr() + b_off, host.data() + a_off, len, stream());
      EXPECT_EQ(k().count_mismatched_bytes(buf.ptr() + a_off, other.ptr() + b_off, len, stream()),
                0u);
      std::size_t changed = 0;
      for (std::size_t i = 1; i < len; i += 97) {
        fill_bytes(other.ptr() + b_off + i, static_cast<std::uint8_t>(host[a_off + i] ^ 0x40u), 1,
                   stream());
        ++changed;
      }
      EXPECT_EQ(k().count_mismatched_bytes(buf.ptr() + a_off, other.ptr() + b_off, len, stream()),
                changed)
          << a_off << " " << b_off;
    }
  }
  EXPECT_EQ(k().count_mismatched_bytes(buf.ptr(), other.ptr(), 0, stream()), 0u);
}

// count_all: many counts of both kinds in one call (more than one batch of accumulators),
// each with the result the single call gives; an empty count is 0.
TEST_F(Builtin, CountAllGivesEachCountsOwnResult) {
  const std::size_t total = 1 << 18; // 150 windows of 1000 bytes, none overlapping
  DeviceBuffer a(total), b(total);
  k().fill_pattern(a.ptr(), total, 0xA5A5A5A5u, stream());
  k().fill_pattern(b.ptr(), total, 0xA5A5A5A5u, stream());
  std::vector<BuiltinKernels::ByteCount> counts;
  std::vector<std::uint64_t> want;
  for (std::size_t k_ = 0; k_ < 150; ++k_) {
    const std::size_t offset = 1000 * k_ + k_ % 5, len = 300 + k_;
    // k_ % 9 damaged bytes in a, inside the window this count reads.
    const std::size_t damaged = std::min(k_ % 9, len);
    for (std::size_t i = 0; i < damaged; ++i)
      fill_bytes(a.ptr() + offset + 3 * i, 0, 1, stream());
    counts.push_back(k_ % 2 == 0 ? BuiltinKernels::not_pattern(a.ptr() + offset, len, 0xA5A5A5A5u)
                                 : BuiltinKernels::mismatched_bytes(a.ptr() + offset,
                                                                    b.ptr() + offset, len));
    want.push_back(damaged);
  }
  counts.push_back({});
  want.push_back(0);
  const std::vector<std::uint64_t> got = k().count_all(counts, stream());
  EXPECT_EQ(got, want);
  for (std::size_t k_ = 0; k_ < 150; k_ += 37)
    EXPECT_EQ(counts[k_].b == 0 ? k().count_not_pattern(counts[k_].a, counts[k_].bytes,
                                                        counts[k_].pattern, stream())
                                : k().count_mismatched_bytes(counts[k_].a, counts[k_].b,
                                                             counts[k_].bytes, stream()),
              want[k_]);
}

// pattern_elements: the elements of each width that still hold the poison fill_pattern wrote,
// as find_unwritten counts them on the host; an element with one byte changed, or one that
// holds the other run's poison, is written.
TEST_F(Builtin, PatternElementsCountsUnwrittenElementsOfEveryWidth) {
  for (const DType dtype : {DType::f64, DType::f32, DType::bf16, DType::fp8e4m3}) {
    const std::int64_t n = 10007;
    const std::size_t width = dtype_size(dtype), bytes = static_cast<std::size_t>(n) * width;
    const std::uint32_t poison = judge::poison_pattern(0, dtype);
    DeviceBuffer buf(bytes);
    k().fill_pattern(buf.ptr(), bytes, poison, stream());
    std::int64_t written = 0;
    for (std::int64_t i = 0; i < n; i += 13, ++written) // one byte of every 13th element
      fill_bytes(buf.ptr() + static_cast<std::size_t>(i) * width + (i % 2 == 0 ? 0 : width - 1),
                 0x12, 1, stream());
    const auto count = [&](std::uint32_t pattern) {
      return k().count_all({BuiltinKernels::pattern_elements(buf.ptr(), n, dtype, pattern)},
                           stream())
          .front();
    };
    EXPECT_EQ(count(poison), static_cast<std::uint64_t>(n - written)) << dtype_name(dtype);
    EXPECT_EQ(count(judge::poison_pattern(1, dtype)), 0u) << dtype_name(dtype);
    HostTensor host(dtype, {n});
    copy_to_host(host.bytes().data(), buf.ptr(), bytes, stream());
    EXPECT_EQ(judge::find_unwritten(host, poison, nullptr, 0).count, n - written) << dtype_name(dtype);
  }
}

TEST_F(Builtin, PatternsOnALargeBuffer) {
  const std::size_t bytes = (std::size_t{256} << 20) + 5;  // the vector path, many blocks
  DeviceBuffer a(bytes + 3), b(bytes + 3);
  k().fill_pattern(a.ptr() + 3, bytes, 0x01020304u, stream());
  k().fill_pattern(b.ptr() + 3, bytes, 0x01020304u, stream());
  EXPECT_EQ(k().count_not_pattern(a.ptr() + 3, bytes, 0x01020304u, stream()), 0u);
  EXPECT_EQ(k().count_not_pattern(a.ptr() + 3, bytes, 0x04030201u, stream()), bytes);
  EXPECT_EQ(k().count_mismatched_bytes(a.ptr() + 3, b.ptr() + 3, bytes, stream()), 0u);
  fill_bytes(b.ptr() + 3 + bytes / 2, 0, 1000, stream());
  // 1000 zeroed bytes, none of which was zero in the pattern.
  EXPECT_EQ(k().count_mismatched_bytes(a.ptr() + 3, b.ptr() + 3, bytes, stream()), 1000u);
}

}  // namespace
// The bench's clock probe: cycles against the global timer give the SM clock, within reach of
// the device's rating (a clock probe that read launch latency as time would be far under it,
// one that lost time far over it), and the same on a longer spin.
TEST_F(Builtin, TheClockProbeReadsTheSmClock) {
  const CUstream s = test::gpu().stream();
  const double rated = test::gpu().info().clock_khz / 1e3;
  const double mhz = test::builtins().sm_clock_mhz(200000, s);
  const double longer = test::builtins().sm_clock_mhz(2000000, s);
  EXPECT_GT(mhz, 300);
  EXPECT_GT(longer, 300);
  if (rated > 0) {
    EXPECT_LT(mhz, 1.05 * rated) << "rated " << rated << " MHz";
    EXPECT_LT(longer, 1.05 * rated) << "rated " << rated << " MHz";
  }
  EXPECT_NEAR(mhz / longer, 1, 0.1) << mhz << " MHz against " << longer << " MHz";
}

}  // namespace kj
