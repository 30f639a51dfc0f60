// Small builders shared by the compare tests: tensors from value lists, output specs with a
// given policy, and one call that runs compare_output with the optional tensors left out.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kjudge/compare.hpp"

namespace kj::test {

inline double p2(int e) {
  return std::ldexp(1.0, e);
}
inline const double kInf = std::numeric_limits<double>::infinity();
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();

inline HostTensor tensor(DType t, Shape shape, const std::vector<double>& values) {
  HostTensor h(t, std::move(shape));
  for (std::size_t i = 0; i < values.size(); ++i)
    h.set(static_cast<std::int64_t>(i), values[i]);
  return h;
}
inline HostTensor tensor(DType t, const std::vector<double>& values) {
  return tensor(t, Shape{static_cast<std::int64_t>(values.size())}, values);
}
inline HostTensor filled(DType t, Shape shape, double v) {
  HostTensor h(t, std::move(shape));
  for (std::int64_t i = 0; i < h.numel(); ++i)
    h.set(i, v);
  return h;
}
inline void set_f32_bits(HostTensor& h, std::int64_t i, std::uint32_t bits) {
  std::memcpy(h.data<float>() + i, &bits, sizeof bits);
}

inline PolicySpec relative(std::optional<double> k = std::nullopt) {
  PolicySpec p;
  p.kind = PolicySpec::Kind::relative;
  p.expected = Expected::golden;
  p.k = k;
  return p;
}
inline PolicySpec allclose(std::optional<double> rtol, std::optional<double> atol,
                           Expected e = Expected::reference) {
  PolicySpec p;
  p.kind = PolicySpec::Kind::allclose;
  p.expected = e;
  p.rtol = rtol;
  p.atol = atol;
  return p;
}
inline PolicySpec ulp(double n, Expected e = Expected::golden) {
  PolicySpec p;
  p.kind = PolicySpec::Kind::ulp;
  p.expected = e;
  p.ulps = n;
  return p;
}
inline PolicySpec exact(Expected e = Expected::reference) {
  PolicySpec p;
  p.kind = PolicySpec::Kind::exact;
  p.expected = e;
  return p;
}
inline PolicySpec ratio(double threshold, double max_fraction, Expected e = Expected::golden) {
  PolicySpec p;
  p.kind = PolicySpec::Kind::ratio;
  p.expected = e;
  p.threshold = threshold;
  p.max_fraction = max_fraction;
  return p;
}
inline PolicySpec regions() {
  PolicySpec p;
  p.kind = PolicySpec::Kind::regions;
  p.expected = Expected::golden;
  return p;
}
inline PolicySpec metric(const std::string& name, double threshold, std::int64_t k = 0) {
  PolicySpec p;
  p.kind = PolicySpec::Kind::metric;
  p.expected = Expected::golden;
  p.metric = name;
  p.metric_threshold = threshold;
  p.topk = k;
  return p;
}

inline OutputSpec output(DType t, PolicySpec policy, std::optional<int> slice = std::nullopt) {
  OutputSpec o;
  o.name = "y";
  o.dtype = t;
  o.policy = std::move(policy);
  o.slice = slice;
  return o;
}

struct Options {
  NanRule nan = NanRule::exempt;
  bool signed_zero_strict = false;
  Tier tier = Tier::tolerance;
  bool nan_in_inputs = false;
};

inline OutputFinding judge(const OutputSpec& spec, const HostTensor& actual,
                           const HostTensor* golden, const HostTensor* reference, Options o = {}) {
  CompareInputs in;
  in.spec = &spec;
  in.actual = &actual;
  in.golden = golden;
  in.reference = reference;
  in.nan = o.nan;
  in.signed_zero_strict = o.signed_zero_strict;
  in.tier = o.tier;
  in.nan_in_inputs = o.nan_in_inputs;
  return compare_output(in);
}

} // namespace kj::test
