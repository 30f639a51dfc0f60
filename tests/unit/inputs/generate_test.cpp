// generate_input and its vocabulary: pinned bits of a few generated tensors (the values the
// device generator must reproduce), statistics of every distribution, transforms, saturation,
// special values at their documented positions, and file() inputs.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kjudge/inputs.hpp"

namespace kj {
namespace {

InputSpec make_input(std::string name, DType dtype, Distribution::Kind kind, double a = 0,
                     double b = 1, Domain domain = Domain::any) {
  InputSpec s;
  s.name = std::move(name);
  s.dtype = dtype;
  s.dist.kind = kind;
  s.dist.a = a;
  s.dist.b = b;
  s.dist.text = "test distribution";
  s.domain = domain;
  s.where = Location{"problem.toml", "input[0].dist", 0, 0};
  return s;
}

template <class Bits>
std::vector<Bits> first_bits(const HostTensor& t, std::size_t n) {
  const Bits* p = t.data<Bits>();
  return std::vector<Bits>(p, p + n);
}

// ---- pinned values: the device generator must produce exactly these bits -----------------

// The values were computed once with this implementation and agree with an independent
// reimplementation of the documented layout in Python (Philox, math.log, math.cos).
TEST(Pinned, NormalF32) {
  const auto in = make_input("x", DType::f32, Distribution::Kind::normal, 0, 1);
  const HostTensor t = generate_input(in, {4, 8}, {1234, 0, 0});
  const std::vector<std::uint32_t> want = {0xbe4c2241, 0x3f7764dc, 0x3ef993e6, 0xbf4839da,
                                             0x4009b737, 0xbe6de6a1, 0x3d3a93ca, 0xbf42d395};
  EXPECT_EQ(first_bits<std::uint32_t>(t, 8), want);
}

TEST(Pinned, NormalDoubleDraws) {
  // The unrounded draws, before the f32 rounding above: pins kj_log/kj_sincos bit for bit.
  Distribution d;
  d.kind = Distribution::Kind::normal;
  d.a = 0.5;
  d.b = 2.0;
  const std::vector<std::uint64_t> want = {
      0xbfc91795fb0b5288, 0x3fea45383d79a104, 0xbfc571a26beda944, 0xbff816020336f932,
      0xc007850e43b7e0f8, 0x4003602929012e53, 0xbfcb7cde23f7687c, 0xbf9b3c2e9180cde0};
  std::vector<std::uint64_t> got;
  for (std::int64_t e = 0; e < 8; ++e) {
    const double v = draw_element(d, {99, 3, 1}, e);
    std::uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    got.push_back(bits);
  }
  EXPECT_EQ(got, want);
}

TEST(Pinned, UniformBf16) {
  const auto in = make_input("w", DType::bf16, Distribution::Kind::uniform, -1, 1);
  const HostTensor t = generate_input(in, {16}, {7, 1, 0});
  const std::vector<std::uint16_t> want = {0xbc23, 0x3f46, 0xbed7, 0xbefd,
                                             0xbf37, 0x3dc2, 0x3d1d, 0xbeb6};
  EXPECT_EQ(first_bits<std::uint16_t>(t, 8), want);
}

TEST(Pinned, IntI32) {
  const auto in = make_input("idx", DType::i32, Distribution::Kind::integer, -1000, 1000);
  const HostTensor t = generate_input(in, {3, 3}, {99, 2, 0});
  const std::vector<std::int32_t> want = {-535, 249, 742, -263, -576, 432, 302, -266};
  EXPECT_EQ(first_bits<std::int32_t>(t, 8), want);
}

TEST(Pinned, ParetoF64) {
  const auto in = make_input("p", DType::f64, Distribution::Kind::pareto, 3);
  const HostTensor t = generate_input(in, {8}, {2024, 3, 0});
  const std::vector<std::uint64_t> want = {
      0x3ff1b29a4dfc5543, 0x3ff025716ef6bf20, 0x3ffaa4c6b6ffd30a, 0x3ff01775da93596e,
      0x3ffb491fc4ffeeb6, 0x3ff228f01006353b, 0x3ff100385bf7ee83, 0x3ff3aba317ba5e20};
  EXPECT_EQ(first_bits<std::uint64_t>(t, 8), want);
}

TEST(Pinned, SameBitsWhateverTheShapeOrTheElementAskedFor) {
  // Each element owns its block: the values depend on the flat index only.
  const auto in = make_input("x", DType::f64, Distribution::Kind::normal, 0, 1);
  const HostTensor a = generate_input(in, {4, 8}, {1234, 0, 0});
  const HostTensor b = generate_input(in, {32}, {1234, 0, 0});
  for (std::int64_t i = 0; i < 32; ++i) {
    EXPECT_EQ(a.get(i), b.get(i));
    EXPECT_EQ(a.get(i), draw_element(in.dist, {1234, 0, 0}, i));
  }
}

// ---- statistics ---------------------------------------------------------------------------

constexpr std::int64_t big = 1'000'000;

TEST(Statistics, NormalMeanAndStd) {
  const auto in = make_input("x", DType::f64, Distribution::Kind::normal, 0, 1);
  const HostTensor t = generate_input(in, {big}, {42, 0, 0});
  double sum = 0, sum2 = 0;
  std::int64_t beyond3 = 0;
  for (std::int64_t i = 0; i < big; ++i) {
    const double v = t.get(i);
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sum2 += v * v;
    beyond3 += std::fabs(v) > 3 ? 1 : 0;
  }
  const double mean = sum / big;
  const double sd = std::sqrt(sum2 / big - mean * mean);
  // Five standard errors: 5/sqrt(n) for the mean, 5/sqrt(2n) for the std.
  EXPECT_NEAR(mean, 0.0, 0.005);
  EXPECT_NEAR(sd, 1.0, 0.0036);
  // P(|z| > 3) = 0.0027; its standard error over 1e6 samples is 5.2e-5.
  EXPECT_NEAR(static_cast<double>(beyond3) / big, 0.0027, 0.0003);
}

TEST(Statistics, NormalMeanAndStdParameters) {
  const auto in = make_input("x", DType::f64, Distribution::Kind::normal, 10, 0.5);
  const HostTensor t = generate_input(in, {100'000}, {43, 0, 0});
  double sum = 0, sum2 = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    sum += t.get(i);
    sum2 += t.get(i) * t.get(i);
  }
  const double mean = sum / 100'000;
  EXPECT_NEAR(mean, 10.0, 0.01);
  EXPECT_NEAR(std::sqrt(sum2 / 100'000 - mean * mean), 0.5, 0.006);
}

TEST(Statistics, UniformStaysInItsRange) {
  const auto in = make_input("x", DType::f64, Distribution::Kind::uniform, -2, 3);
  const HostTensor t = generate_input(in, {big}, {44, 0, 0});
  double lo = 1e9, hi = -1e9, sum = 0;
  for (std::int64_t i = 0; i < big; ++i) {
    const double v = t.get(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  EXPECT_GT(lo, -2.0);
  EXPECT_LT(hi, 3.0);
  EXPECT_LT(lo, -2.0 + 1e-4);
  EXPECT_GT(hi, 3.0 - 1e-4);
  EXPECT_NEAR(sum / big, 0.5, 0.01);
}

TEST(Statistics, IntHitsBothEndsInclusive) {
  const auto in = make_input("x", DType::i32, Distribution::Kind::integer, -3, 4);
  const HostTensor t = generate_input(in, {100'000}, {45, 0, 0});
  std::vector<std::int64_t> counts(8, 0);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.get(i);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 4);
    ++counts[static_cast<std::size_t>(v + 3)];
  }
  for (const std::int64_t c : counts) EXPECT_NEAR(static_cast<double>(c), 12'500.0, 600.0);
}

TEST(Statistics, IntSingleValueAndEveryByte) {
  const auto one = make_input("x", DType::i64, Distribution::Kind::integer, 7, 7);
  const HostTensor t = generate_input(one, {100}, {46, 0, 0});
  for (std::int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.get(i), 7.0);
  const auto u8 = make_input("x", DType::u8, Distribution::Kind::integer, 0, 255);
  const HostTensor b = generate_input(u8, {100'000}, {46, 0, 0});
  std::set<double> seen;
  for (std::int64_t i = 0; i < b.numel(); ++i) seen.insert(b.get(i));
  EXPECT_EQ(seen.size(), 256u);
}

TEST(Statistics, BernoulliFrequencyAndExtremes) {
  const auto in = make_input("m", DType::boolean, Distribution::Kind::bernoulli, 0.25);
  const HostTensor t = generate_input(in, {big}, {47, 0, 0});
  std::int64_t ones = 0;
  for (std::int64_t i = 0; i < big; ++i) ones += t.get(i) != 0 ? 1 : 0;
  EXPECT_NEAR(static_cast<double>(ones) / big, 0.25, 0.003);
  for (const double p : {0.0, 1.0}) {
    const auto e = make_input("m", DType::u8, Distribution::Kind::bernoulli, p);
    const HostTensor x = generate_input(e, {10'000}, {48, 0, 0});
    for (std::int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(x.get(i), p);
  }
}

TEST(Statistics, ParetoSupportAndMedian) {
  const auto in = make_input("p", DType::f64, Distribution::Kind::pareto, 3);
  const HostTensor t = generate_input(in, {big}, {49, 0, 0});
  std::int64_t below_median = 0;
  const double median = std::cbrt(2.0);
  for (std::int64_t i = 0; i < big; ++i) {
    const double v = t.get(i);
    ASSERT_GE(v, 1.0);  // u < 1, but exp of a tiny power can round to 1
    ASSERT_TRUE(std::isfinite(v));
    below_median += v < median ? 1 : 0;
  }
  EXPECT_NEAR(static_cast<double>(below_median) / big, 0.5, 0.003);
}

TEST(Statistics, ConstAndArange) {
  const auto c = make_input("c", DType::f16, Distribution::Kind::constant, 2.5);
  const HostTensor t = generate_input(c, {3, 5}, {1, 0, 0});
  for (std::int64_t i = 0; i < t.numel(); ++i) EXPECT_EQ(t.get(i), 2.5);
  const auto a = make_input("a", DType::bf16, Distribution::Kind::arange);
  const HostTensor r = generate_input(a, {300}, {1, 0, 0});
  EXPECT_EQ(r.get(0), 0.0);
  EXPECT_EQ(r.get(255), 255.0);
  EXPECT_EQ(r.get(257), 256.0);  // rounded to bf16, ties to even
  EXPECT_EQ(r.get(259), 260.0);
  const auto a8 = make_input("a", DType::i8, Distribution::Kind::arange);
  const HostTensor s = generate_input(a8, {200}, {1, 0, 0});
  EXPECT_EQ(s.get(127), 127.0);
  EXPECT_EQ(s.get(199), 127.0);  // saturated
}

TEST(Statistics, BadParametersAreSpecErrors) {
  const auto bad_int = make_input("x", DType::i32, Distribution::Kind::integer, 5, 4);
  EXPECT_THROW(generate_input(bad_int, {4}, {}), SpecError);
  const auto frac_int = make_input("x", DType::i32, Distribution::Kind::integer, 0.5, 4);
  EXPECT_THROW(generate_input(frac_int, {4}, {}), SpecError);
  const auto bad_pareto = make_input("x", DType::f32, Distribution::Kind::pareto, 0);
  try {
    generate_input(bad_pareto, {4}, {});
    FAIL() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.where().file, "problem.toml");
    EXPECT_EQ(e.where().field, "input[0].dist");
  }
  const auto normal = make_input("x", DType::f32, Distribution::Kind::normal);
  EXPECT_THROW(generate_input(normal, {-1, 4}, {}), SpecError);
}

TEST(Statistics, StreamsAreIndependentPerSeedInputAndVisit) {
  const auto in = make_input("x", DType::f32, Distribution::Kind::uniform, 0, 1);
  const HostTensor base = generate_input(in, {64}, {5, 0, 0});
  for (const StreamId other : {StreamId{6, 0, 0}, StreamId{5, 1, 0}, StreamId{5, 0, 1}}) {
    const HostTensor t = generate_input(in, {64}, other);
    int same = 0;
    for (std::int64_t i = 0; i < 64; ++i) same += t.get(i) == base.get(i) ? 1 : 0;
    EXPECT_LT(same, 2);
  }
}

// ---- transforms and saturation --------------------------------------------------------------

TEST(Transform, Labels) {
  EXPECT_EQ(Transform{}.label(), "id");
  EXPECT_EQ((Transform{"x", 3}).label(), "x*3");
  EXPECT_EQ((Transform{"x", 0.01}).label(), "x*0.01");
  EXPECT_EQ((Transform{"x", -1}).label(), "x*-1");
  EXPECT_EQ((Transform{"weight", 0.5}).label(), "weight*0.5");
  EXPECT_EQ((Transform{"x", 1, 100}).label(), "x+100");
  EXPECT_EQ((Transform{"x", 1, -8.5}).label(), "x-8.5");
  EXPECT_EQ((Transform{"x", 3, 1}).label(), "x*3+1");
}

TEST(Transform, OffsetsAfterScalingInTwoRoundings) {
  const auto in = make_input("x", DType::f64, Distribution::Kind::normal);
  const HostTensor base = generate_input(in, {100}, {8, 0, 0});
  const HostTensor moved = generate_input(in, {100}, {8, 0, 0}, {"x", 3, -8.5});
  for (std::int64_t i = 0; i < 100; ++i) {
    volatile double scaled = base.get(i) * 3; // rounded before the add, as the device does
    EXPECT_EQ(moved.get(i), scaled + -8.5);
  }
}

TEST(Transform, ScalesTheNamedFloatInputOnly) {
  const auto in = make_input("x", DType::f64, Distribution::Kind::normal);
  const HostTensor base = generate_input(in, {100}, {8, 0, 0});
  const HostTensor tripled = generate_input(in, {100}, {8, 0, 0}, {"x", 3});
  const HostTensor other = generate_input(in, {100}, {8, 0, 0}, {"y", 3});
  for (std::int64_t i = 0; i < 100; ++i) {
    EXPECT_EQ(tripled.get(i), base.get(i) * 3);
    EXPECT_EQ(other.get(i), base.get(i));
  }
  const auto idx = make_input("x", DType::i32, Distribution::Kind::integer, 0, 100);
  const HostTensor ints = generate_input(idx, {100}, {8, 0, 0});
  const HostTensor ints_t = generate_input(idx, {100}, {8, 0, 0}, {"x", -1});
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_EQ(ints_t.get(i), ints.get(i));
}

TEST(Transform, RoundsAfterScaling) {
  const auto in = make_input("x", DType::bf16, Distribution::Kind::normal);
  const auto wide = make_input("x", DType::f64, Distribution::Kind::normal);
  const HostTensor t = generate_input(in, {100}, {9, 0, 0}, {"x", 0.01});
  const HostTensor w = generate_input(wide, {100}, {9, 0, 0});
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_EQ(t.get(i), round_to(DType::bf16, w.get(i) * 0.01));
}

TEST(Saturation, F16TripledNearMaxSaturatesInsteadOfOverflowing) {
  const auto in = make_input("x", DType::f16, Distribution::Kind::uniform, 60000, 65504);
  const HostTensor up = generate_input(in, {1000}, {10, 0, 0}, {"x", 3});
  const HostTensor down = generate_input(in, {1000}, {10, 0, 0}, {"x", -3});
  for (std::int64_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(up.get(i), 65504.0);
    ASSERT_EQ(down.get(i), -65504.0);
  }
}

TEST(Saturation, OverflowingDrawsClampToTheDtypeRange) {
  const auto f8 = make_input("x", DType::fp8e5m2, Distribution::Kind::constant, 1e6);
  EXPECT_EQ(generate_input(f8, {2}, {}).get(1), 57344.0);
  const auto e4 = make_input("x", DType::fp8e4m3, Distribution::Kind::constant, -1e6);
  EXPECT_EQ(generate_input(e4, {2}, {}).get(1), -448.0);
  const auto f32 = make_input("x", DType::f32, Distribution::Kind::constant, 1e300);
  EXPECT_EQ(generate_input(f32, {2}, {}).get(0), static_cast<double>(std::numeric_limits<float>::max()));
  const auto i8 = make_input("x", DType::i8, Distribution::Kind::normal, 0, 1000);
  const HostTensor t = generate_input(i8, {10'000}, {11, 0, 0});
  bool hit_lo = false, hit_hi = false;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    ASSERT_GE(t.get(i), -128);
    ASSERT_LE(t.get(i), 127);
    hit_lo = hit_lo || t.get(i) == -128;
    hit_hi = hit_hi || t.get(i) == 127;
  }
  EXPECT_TRUE(hit_lo && hit_hi);
  const auto pareto = make_input("x", DType::f16, Distribution::Kind::pareto, 0.05);
  const HostTensor p = generate_input(pareto, {10'000}, {12, 0, 0});
  for (std::int64_t i = 0; i < p.numel(); ++i) ASSERT_TRUE(std::isfinite(p.get(i)));
}

// ---- special values -----------------------------------------------------------------------

TEST(Special, NamesAndDomainTable) {
  EXPECT_EQ(special_kind_name(SpecialKind::nan), "nan");
  EXPECT_EQ(special_kind_name(SpecialKind::pos_inf), "pos_inf");
  EXPECT_EQ(special_kind_name(SpecialKind::neg_inf), "neg_inf");
  EXPECT_EQ(special_kind_name(SpecialKind::neg_zero), "neg_zero");
  EXPECT_EQ(special_kind_name(SpecialKind::subnormal), "subnormal");
  EXPECT_EQ(special_kind_name(SpecialKind::dtype_max), "dtype_max");
  using D = Domain;
  using K = SpecialKind;
  const auto admits = [](K k) {
    std::string s;
    for (const D d : {D::any, D::positive, D::nonnegative, D::unit}) s += domain_admits(d, k) ? '1' : '0';
    return s;
  };  // any, positive, nonnegative, unit
  EXPECT_EQ(admits(K::nan), "1000");
  EXPECT_EQ(admits(K::neg_inf), "1000");
  EXPECT_EQ(admits(K::pos_inf), "1110");
  EXPECT_EQ(admits(K::neg_zero), "1010");
  EXPECT_EQ(admits(K::subnormal), "1111");
  EXPECT_EQ(admits(K::dtype_max), "1110");
}

TEST(Special, DtypeAdmitsAndValues) {
  EXPECT_FALSE(dtype_admits(DType::i32, SpecialKind::nan));
  EXPECT_FALSE(dtype_admits(DType::fp8e4m3, SpecialKind::pos_inf));
  EXPECT_FALSE(dtype_admits(DType::fp8e4m3, SpecialKind::neg_inf));
  EXPECT_TRUE(dtype_admits(DType::fp8e4m3, SpecialKind::nan));
  EXPECT_TRUE(dtype_admits(DType::fp8e5m2, SpecialKind::pos_inf));
  EXPECT_EQ(special_value(DType::f16, SpecialKind::subnormal), 0x1p-24);
  EXPECT_EQ(special_value(DType::bf16, SpecialKind::subnormal), 0x1p-133);
  EXPECT_EQ(special_value(DType::f32, SpecialKind::subnormal), 0x1p-149);
  EXPECT_EQ(special_value(DType::bf16, SpecialKind::dtype_max), 0x1.fep127);
  EXPECT_EQ(special_value(DType::fp8e4m3, SpecialKind::dtype_max), 448.0);
  EXPECT_TRUE(std::signbit(special_value(DType::f32, SpecialKind::neg_zero)));
}

TEST(Special, PositionsAreFirstLastAndEveryStride) {
  EXPECT_EQ(special_stride, 61);
  std::vector<std::int64_t> at;
  for (std::int64_t i = 0; i < 200; ++i)
    if (is_special_position(i, 200)) at.push_back(i);
  EXPECT_EQ(at, (std::vector<std::int64_t>{0, 61, 122, 183, 199}));
  EXPECT_TRUE(is_special_position(0, 1));
  EXPECT_FALSE(is_special_position(1, 1));
  EXPECT_FALSE(is_special_position(-1, 10));
}

TEST(Special, PlantedExactlyAtThePositions) {
  const auto in = make_input("x", DType::f32, Distribution::Kind::normal);
  const HostTensor base = generate_input(in, {10, 20}, {13, 0, 0});
  for (const SpecialKind k : {SpecialKind::nan, SpecialKind::pos_inf, SpecialKind::neg_inf,
                              SpecialKind::neg_zero, SpecialKind::subnormal, SpecialKind::dtype_max}) {
    const SpecialValues sv{"x", k};
    const HostTensor t = generate_input(in, {10, 20}, {13, 0, 0}, {}, &sv);
    const double want = special_value(DType::f32, k);
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      const double v = t.get(i);
      if (is_special_position(i, t.numel())) {
        if (k == SpecialKind::nan) {
          EXPECT_TRUE(std::isnan(v)) << i;
        } else {
          EXPECT_EQ(v, want) << i;
          EXPECT_EQ(std::signbit(v), std::signbit(want)) << i;
        }
      } else {
        EXPECT_EQ(v, base.get(i)) << i;
      }
    }
  }
}

TEST(Special, NotPlantedWhereTheDomainOrDtypeRefuses) {
  const auto pos = make_input("x", DType::f32, Distribution::Kind::uniform, 0.5, 1, Domain::positive);
  const HostTensor base = generate_input(pos, {100}, {14, 0, 0});
  const SpecialValues nan{"x", SpecialKind::nan};
  const HostTensor t = generate_input(pos, {100}, {14, 0, 0}, {}, &nan);
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_EQ(t.get(i), base.get(i));
  const SpecialValues sub{"x", SpecialKind::subnormal};
  EXPECT_EQ(generate_input(pos, {100}, {14, 0, 0}, {}, &sub).get(99), 0x1p-149);

  const auto e4 = make_input("x", DType::fp8e4m3, Distribution::Kind::normal);
  const SpecialValues inf{"x", SpecialKind::pos_inf};
  const HostTensor e = generate_input(e4, {100}, {14, 0, 0}, {}, &inf);
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_TRUE(std::isfinite(e.get(i)));

  const auto ints = make_input("x", DType::i32, Distribution::Kind::integer, 0, 9);
  const HostTensor n = generate_input(ints, {100}, {14, 0, 0}, {}, &nan);
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_TRUE(n.get(i) >= 0 && n.get(i) <= 9);

  const HostTensor other = generate_input(make_input("y", DType::f32, Distribution::Kind::normal),
                                          {100}, {14, 0, 0}, {}, &nan);
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_FALSE(std::isnan(other.get(i)));
}

TEST(Special, ZeroDimAndEmptyTensors) {
  const auto in = make_input("x", DType::f32, Distribution::Kind::normal);
  const SpecialValues sv{"x", SpecialKind::pos_inf};
  const HostTensor scalar = generate_input(in, {}, {15, 0, 0}, {}, &sv);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.get(0), std::numeric_limits<double>::infinity());
  const HostTensor empty = generate_input(in, {0, 5}, {15, 0, 0}, {}, &sv);
  EXPECT_EQ(empty.numel(), 0);
}

// ---- file() inputs ------------------------------------------------------------------------

class FileInput : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kj_inputs_file_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  InputSpec file_input(DType dtype) {
    InputSpec s = make_input("x", dtype, Distribution::Kind::file);
    s.dist.file = "x.npy";
    return s;
  }
  std::filesystem::path dir_;
};

TEST_F(FileInput, ValuesComeFromTheFileThenTransformAndSaturate) {
  HostTensor src(DType::f16, {2, 3});
  const double values[] = {1, -2, 0.5, 30000, std::numeric_limits<double>::infinity(), std::nan("")};
  for (int i = 0; i < 6; ++i) src.set(i, values[i]);
  write_npy(dir_ / "x.npy", src);
  const InputSpec in = file_input(DType::f16);
  const HostTensor t = generate_input(in, {2, 3}, {}, {}, nullptr, dir_);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t.get(i), values[i]);
  EXPECT_TRUE(std::isnan(t.get(5)));
  const HostTensor x3 = generate_input(in, {2, 3}, {}, {"x", 3}, nullptr, dir_);
  EXPECT_EQ(x3.get(0), 3.0);
  EXPECT_EQ(x3.get(3), 65504.0);                                    // saturated
  EXPECT_EQ(x3.get(4), std::numeric_limits<double>::infinity());    // the file's own Inf stays
}

TEST_F(FileInput, ShapeAndDtypeMustMatch) {
  HostTensor src(DType::f32, {2, 3});
  write_npy(dir_ / "x.npy", src);
  try {
    generate_input(file_input(DType::f32), {3, 2}, {}, {}, nullptr, dir_);
    FAIL() << "no SpecError";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.where().field, "input[0].dist");
    EXPECT_NE(std::string(e.what()).find("x.npy"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
  }
  EXPECT_THROW(generate_input(file_input(DType::f64), {2, 3}, {}, {}, nullptr, dir_), SpecError);
  EXPECT_THROW(generate_input(file_input(DType::f32), {2, 3}, {}, {}, nullptr, dir_ / "nowhere"),
               SpecError);
}

TEST_F(FileInput, F32FileServesNarrowFloatsWhenExact) {
  HostTensor b(DType::bf16, {4});
  for (int i = 0; i < 4; ++i) b.set(i, 1.0 + i / 128.0);
  write_npy(dir_ / "x.npy", b);  // written as <f4
  const HostTensor t = generate_input(file_input(DType::bf16), {4}, {}, {}, nullptr, dir_);
  EXPECT_EQ(t.dtype(), DType::bf16);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.get(i), b.get(i));
  HostTensor f(DType::f32, {4});
  f.set(2, 1.0 + 1.0 / 1024);  // not a bf16 value
  write_npy(dir_ / "x.npy", f);
  EXPECT_THROW(generate_input(file_input(DType::bf16), {4}, {}, {}, nullptr, dir_), SpecError);
}

}  // namespace
}  // namespace kj
