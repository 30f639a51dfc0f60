// The f32 inputs of the intrinsics sweep, generated rather than stored: tools/intrinsics-sweep
// evaluates each function on the H200 over these inputs and writes the result bits, and the host
// test (tests/unit/host/host_intrinsics_test.cpp) regenerates the same inputs to compare the
// emulation with those bits. Integer arithmetic wherever possible, so both sides agree bit for
// bit; the manifest carries a hash of the inputs, which the test checks, in case they do not.
//
// Per function, kCount inputs: specials (zeros, subnormals, infinities, NaNs, FLT_MAX...), bit
// patterns stepped evenly over all finite floats of both signs, and dense ranges where the
// function's documented error applies. Binary functions pair specials with specials, random
// finite patterns with each other, and dense ranges with ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace kj::test::intrinsics {

inline constexpr std::size_t kCount = 32768;

inline float from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline std::uint32_t to_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// splitmix-style mixer: a pseudo-random but fixed pairing of inputs.
inline std::uint32_t mix(std::uint32_t x) {
  x += 0x9e3779b9u;
  x = (x ^ (x >> 16)) * 0x85ebca6bu;
  x = (x ^ (x >> 13)) * 0xc2b2ae35u;
  return x ^ (x >> 16);
}

// A finite float of either sign from a random word (the exponent field 255 is folded away).
inline float random_finite(std::uint32_t seed) {
  std::uint32_t b = mix(seed);
  if (((b >> 23) & 0xffu) == 0xffu) b ^= 0x00800000u;
  return from_bits(b);
}

inline std::vector<float> specials() {
  const std::uint32_t bits[] = {
      0x00000000u, 0x80000000u,                           // +-0
      0x00000001u, 0x80000001u, 0x00000123u, 0x00400000u, // subnormals
      0x807fffffu, 0x007fffffu, 0x80400000u, 0x00012345u, //
      0x00800000u, 0x80800000u,                           // +-FLT_MIN
      0x7f7fffffu, 0xff7fffffu,                           // +-FLT_MAX
      0x7f800000u, 0xff800000u,                           // +-inf
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fffffffu, // NaNs (quiet, negative, signalling)
      0x3f800000u, 0xbf800000u, 0x3f000000u, 0x40000000u, // 1, -1, 0.5, 2
      0x40490fdbu, 0xc0490fdbu, 0x3fc90fdbu, 0x40c90fdbu, // pi, -pi, pi/2, 2pi
      0x7e800000u, 0x7f000000u, 0xfe800000u, 0xff000000u, // +-2^126, +-2^127
      0x7e7fffffu, 0x7e800001u, 0x0c800000u, 0x32000000u, // near 2^126, 2^-102, 2^-27
      0x42b17218u, 0x42b17217u, 0xc2aeac50u, 0xc2cff1b5u, // exp overflow/underflow edges
      0x3f7fffffu, 0x3f800001u, 0x4b800000u, 0x4cbebc20u, // 1 -+ ulp, 2^24, 1e8
  };
  std::vector<float> v;
  for (const std::uint32_t b : bits)
    v.push_back(from_bits(b));
  return v;
}

// n patterns stepped evenly over [0, FLT_MAX] in bit space, then the same negated.
inline void all_finite(std::vector<float>& out, std::size_t n) {
  const std::size_t half = n / 2;
  for (std::size_t s = 0; s < 2; ++s)
    for (std::size_t i = 0; i < half; ++i) {
      const std::uint64_t b = static_cast<std::uint64_t>(i) * 0x7f7fffffu / (half - 1);
      out.push_back(from_bits(static_cast<std::uint32_t>(b) | (s ? 0x80000000u : 0u)));
    }
}

struct Range {
  enum Kind { linear, bits } kind; // evenly spaced values, or bit patterns (log-spaced)
  double lo, hi;                   // bits: both positive; the sign is taken from negative
  bool negative = false;
};

inline float range_value(const Range& r, std::size_t i, std::size_t n) {
  if (r.kind == Range::linear) {
    // Plain double arithmetic; were a compiler to contract it into an FMA, the manifest's hash
    // would tell.
    const double t = static_cast<double>(i) / static_cast<double>(n - 1);
    const double v = r.lo + t * (r.hi - r.lo);
    return static_cast<float>(v);
  }
  const std::uint32_t a = to_bits(static_cast<float>(r.lo)), b = to_bits(static_cast<float>(r.hi));
  const std::uint64_t d = static_cast<std::uint64_t>(b - a) * i / (n - 1);
  return from_bits(static_cast<std::uint32_t>(a + d) | (r.negative ? 0x80000000u : 0u));
}

inline void ranges(std::vector<float>& out, const std::vector<Range>& rs, std::size_t n) {
  for (std::size_t k = 0; k < rs.size(); ++k) {
    const std::size_t m = n / rs.size() + (k < n % rs.size() ? 1 : 0);
    for (std::size_t i = 0; i < m; ++i)
      out.push_back(range_value(rs[k], i, m));
  }
}

struct Function {
  const char* name;
  int arity;
};

// The swept functions, in manifest order. The precise expf/logf/sinf are a control.
inline const std::vector<Function>& functions() {
  static const std::vector<Function> fs = {
      {"__expf", 1},      {"__exp10f", 1},  {"__logf", 1}, {"__log2f", 1},    {"__log10f", 1},
      {"__sinf", 1},      {"__cosf", 1},    {"__tanf", 1}, {"rsqrtf", 1},     {"__frsqrt_rn", 1},
      {"__saturatef", 1}, {"__frcp_rn", 1}, {"sqrtf", 1},  {"__fsqrt_rn", 1}, {"__fdividef", 2},
      {"__powf", 2},      {"expf", 1},      {"logf", 1},   {"sinf", 1},
  };
  return fs;
}

inline constexpr double kPi = 3.14159265358979323846;

inline std::vector<Range> unary_ranges(std::string_view fn) {
  using R = Range;
  if (fn == "__expf" || fn == "expf") return {{R::linear, -10, 10}, {R::linear, -100, 100}};
  if (fn == "__exp10f") return {{R::linear, -5, 5}, {R::linear, -40, 40}};
  if (fn == "__logf" || fn == "__log2f" || fn == "__log10f" || fn == "logf")
    return {{R::linear, 0x1p-12, 4}, {R::linear, 0.5, 2}, {R::bits, 1e-38, 3e38}};
  if (fn == "__sinf" || fn == "__cosf" || fn == "sinf")
    return {{R::linear, -kPi, kPi}, {R::linear, -1000, 1000}};
  if (fn == "__tanf") return {{R::linear, -kPi, kPi}, {R::linear, -100, 100}};
  if (fn == "rsqrtf" || fn == "__frsqrt_rn" || fn == "sqrtf" || fn == "__fsqrt_rn")
    return {{R::linear, 0x1p-12, 4}, {R::bits, 1e-45, 3e38}};
  if (fn == "__frcp_rn")
    return {{R::linear, -4, 4}, {R::bits, 1e-45, 3e38}, {R::bits, 1e-45, 3e38, true}};
  if (fn == "__saturatef") return {{R::linear, -0.5, 1.5}, {R::linear, -4, 4}};
  return {};
}

inline std::vector<float> unary_inputs(std::string_view fn) {
  std::vector<float> v = specials();
  all_finite(v, 8192);
  ranges(v, unary_ranges(fn), kCount - v.size());
  return v;
}

struct Pairs {
  std::vector<float> x, y;
};

inline Pairs binary_inputs(std::string_view fn) {
  Pairs p;
  const std::vector<float> s = specials();
  // Every special against a subset of specials: zeros, subnormal, FLT_MIN, FLT_MAX, inf, NaN,
  // 1, -1, 0.5, 2, 2^126, 2^127 and their neighbours.
  const std::size_t ys[] = {0, 1, 2, 10, 12, 13, 14, 15, 16, 20, 21, 22, 23, 28, 29, 32, 33};
  for (const float a : s)
    for (const std::size_t j : ys) {
      p.x.push_back(a);
      p.y.push_back(s[j]);
    }
  for (std::uint32_t i = 0; i < 8192; ++i) {
    p.x.push_back(random_finite(2 * i));
    p.y.push_back(random_finite(2 * i + 1));
  }
  const std::size_t rest = kCount - p.x.size(), a = rest / 2, b = rest - a;
  // The second operand of a dense range runs through its range in a scrambled order, so every
  // x meets many y: index (i * 7919) mod n, 7919 prime to n.
  auto add = [&](Range rx, Range ry, std::size_t n, bool random_x) {
    for (std::size_t i = 0; i < n; ++i) {
      p.x.push_back(random_x ? random_finite(0x10000u + static_cast<std::uint32_t>(i))
                             : range_value(rx, i, n));
      p.y.push_back(range_value(ry, (i * 7919) % n, n));
    }
  };
  using R = Range;
  if (fn == "__fdividef") {
    add({R::linear, -10, 10}, {R::linear, -10, 10}, a, false);
    // |y| in [2^125, FLT_MAX], where the large-divisor rule applies, half of them negative.
    add({}, {R::bits, 0x1p125, 3.4028234663852886e38}, b / 2, true);
    add({}, {R::bits, 0x1p125, 3.4028234663852886e38, true}, b - b / 2, true);
  } else { // __powf
    add({R::linear, 0x1p-12, 4}, {R::linear, -10, 10}, a, false);
    add({R::bits, 1e-30, 1e30}, {R::linear, -3, 3}, b, false);
  }
  return p;
}

// FNV-1a over the input bits, as recorded in the manifest.
inline std::uint64_t hash_inputs(const std::vector<float>& x, const std::vector<float>& y = {}) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  auto feed = [&](const std::vector<float>& v) {
    for (const float f : v) {
      const std::uint32_t b = to_bits(f);
      for (int k = 0; k < 4; ++k) {
        h ^= (b >> (8 * k)) & 0xffu;
        h *= 0x100000001b3ull;
      }
    }
  };
  feed(x);
  feed(y);
  return h;
}

} // namespace kj::test::intrinsics
