// Accuracy of kjudge's own log, exp and sincos against the C library over the ranges the
// generator uses (and some beyond), plus their special cases. The generator's bits are pinned
// elsewhere; here the point is that the home-made functions are good approximations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kjudge/inputs.hpp"

namespace kj {
namespace {

// Distance in representable doubles (same sign assumed; across zero counts both sides).
std::int64_t ulp_diff(double a, double b) {
  const auto ordered = [](double x) {
    std::int64_t i;
    std::memcpy(&i, &x, sizeof i);
    return i < 0 ? std::numeric_limits<std::int64_t>::min() - i : i;
  };
  const std::int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// A cheap deterministic source of test points, independent of the code under test.
struct SplitMix {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
};

struct Worst {
  std::int64_t ulps = 0;
  double at = 0;
  void see(double x, double got, double want) {
    const std::int64_t d = ulp_diff(got, want);
    if (d > ulps) {
      ulps = d;
      at = x;
    }
  }
};

TEST(KjLog, WithinTwoUlpOnTheUnitInterval) {
  SplitMix rng{1};
  Worst w;
  for (int i = 0; i < 3'000'000; ++i) {
    // Log-uniform over [2^-64, 1): every binade the generator can meet, and more.
    const double x = std::ldexp(1.0 + rng.unit(), -1 - static_cast<int>(rng.next() % 64));
    w.see(x, kj_log(x), std::log(x));
  }
  for (int i = 0; i < 1'000'000; ++i) {
    const double x = uniform_open01(static_cast<std::uint32_t>(rng.next()),
                                    static_cast<std::uint32_t>(rng.next()));
    w.see(x, kj_log(x), std::log(x));
  }
  for (int i = 1; i < 100'000; ++i) {  // just below 1, where log is tiny
    const double x = 1.0 - i * 0x1p-53;
    w.see(x, kj_log(x), std::log(x));
  }
  EXPECT_LE(w.ulps, 2) << "worst at " << w.at;
}

TEST(KjLog, WithinTwoUlpOnSubnormalsAndLargeValues) {
  SplitMix rng{2};
  Worst w;
  for (int i = 0; i < 500'000; ++i) {
    std::uint64_t bits = rng.next() & 0x000fffffffffffffull;
    if (bits == 0) bits = 1;
    double x;
    std::memcpy(&x, &bits, sizeof x);
    w.see(x, kj_log(x), std::log(x));
  }
  for (int i = 0; i < 500'000; ++i) {
    const double x = std::ldexp(1.0 + rng.unit(), static_cast<int>(rng.next() % 1023));
    w.see(x, kj_log(x), std::log(x));
  }
  EXPECT_LE(w.ulps, 2) << "worst at " << w.at;
}

TEST(KjLog, SpecialCases) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(kj_log(1.0), 0.0);
  EXPECT_FALSE(std::signbit(kj_log(1.0)));
  EXPECT_EQ(kj_log(0.0), -inf);
  EXPECT_EQ(kj_log(-0.0), -inf);
  EXPECT_EQ(kj_log(inf), inf);
  EXPECT_TRUE(std::isnan(kj_log(std::nan(""))));
  EXPECT_TRUE(std::isnan(kj_log(-1.0)));
  EXPECT_TRUE(std::isnan(kj_log(-inf)));
  EXPECT_LE(ulp_diff(kj_log(0x1p-64), -64 * std::log(2.0)), 1);
  EXPECT_LE(ulp_diff(kj_log(0x1p-1074), std::log(0x1p-1074)), 1);
  EXPECT_LE(ulp_diff(kj_log(0x1p-53), std::log(0x1p-53)), 1);
}

TEST(KjSincos, WithinTwoUlpOnPlusMinusTwoPi) {
  SplitMix rng{3};
  const double two_pi = 6.283185307179586;
  Worst ws, wc;
  double s = 0, c = 0;
  const auto check = [&](double x) {
    kj_sincos(x, &s, &c);
    ws.see(x, s, std::sin(x));
    wc.see(x, c, std::cos(x));
  };
  for (int i = 0; i < 3'000'000; ++i) check((2 * rng.unit() - 1) * two_pi);
  // Near the multiples of pi/2, where reduction cancels and one of the two is tiny.
  for (int k = -4; k <= 4; ++k) {
    const double m = k * 1.5707963267948966;
    double x = m;
    for (int i = 0; i < 2000; ++i) {
      check(x);
      check(-x);
      x = std::nextafter(x, 10.0);
    }
  }
  // Tiny and moderate magnitudes.
  for (int i = 0; i < 200'000; ++i)
    check(std::ldexp(1.0 + rng.unit(), -static_cast<int>(rng.next() % 60)));
  EXPECT_LE(ws.ulps, 2) << "sin worst at " << ws.at;
  EXPECT_LE(wc.ulps, 2) << "cos worst at " << wc.at;
}

TEST(KjSincos, WithinTwoUlpUpToTwoToTheTwenty) {
  SplitMix rng{4};
  Worst ws, wc;
  double s = 0, c = 0;
  for (int i = 0; i < 500'000; ++i) {
    const double x = std::ldexp(2 * rng.unit() - 1, static_cast<int>(rng.next() % 21));
    kj_sincos(x, &s, &c);
    ws.see(x, s, std::sin(x));
    wc.see(x, c, std::cos(x));
  }
  EXPECT_LE(ws.ulps, 2) << "sin worst at " << ws.at;
  EXPECT_LE(wc.ulps, 2) << "cos worst at " << wc.at;
}

TEST(KjSincos, SpecialCases) {
  double s = 1, c = 1;
  kj_sincos(0.0, &s, &c);
  EXPECT_EQ(s, 0.0);
  EXPECT_FALSE(std::signbit(s));
  EXPECT_EQ(c, 1.0);
  kj_sincos(-0.0, &s, &c);
  EXPECT_EQ(s, 0.0);
  EXPECT_TRUE(std::signbit(s));
  EXPECT_EQ(c, 1.0);
  kj_sincos(std::numeric_limits<double>::infinity(), &s, &c);
  EXPECT_TRUE(std::isnan(s));
  EXPECT_TRUE(std::isnan(c));
  kj_sincos(std::nan(""), &s, &c);
  EXPECT_TRUE(std::isnan(s));
  EXPECT_TRUE(std::isnan(c));
  kj_sincos(1e-300, &s, &c);
  EXPECT_EQ(s, 1e-300);
  EXPECT_EQ(c, 1.0);
}

TEST(KjExp, WithinTwoUlpOverTheNormalRange) {
  SplitMix rng{5};
  Worst w;
  for (int i = 0; i < 2'000'000; ++i) {
    const double x = -708.0 + rng.unit() * (709.7 + 708.0);
    w.see(x, kj_exp(x), std::exp(x));
  }
  for (int i = 0; i < 500'000; ++i) {  // the Pareto range: exponents of modest size
    const double x = rng.unit() * 50.0;
    w.see(x, kj_exp(x), std::exp(x));
  }
  for (int i = 0; i < 200'000; ++i) {  // tiny arguments
    const double x = std::ldexp(2 * rng.unit() - 1, -static_cast<int>(rng.next() % 60));
    w.see(x, kj_exp(x), std::exp(x));
  }
  EXPECT_LE(w.ulps, 2) << "worst at " << w.at;
}

TEST(KjExp, SubnormalResultsAndSpecialCases) {
  SplitMix rng{6};
  Worst w;
  for (int i = 0; i < 200'000; ++i) {
    const double x = -745.0 + rng.unit() * 37.0;
    w.see(x, kj_exp(x), std::exp(x));
  }
  EXPECT_LE(w.ulps, 2) << "worst at " << w.at;
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(kj_exp(0.0), 1.0);
  EXPECT_EQ(kj_exp(710.0), inf);
  EXPECT_EQ(kj_exp(inf), inf);
  EXPECT_EQ(kj_exp(-inf), 0.0);
  EXPECT_EQ(kj_exp(-746.0), 0.0);
  EXPECT_TRUE(std::isnan(kj_exp(std::nan(""))));
  EXPECT_EQ(kj_exp(709.78), std::exp(709.78));
}

}  // namespace
}  // namespace kj
