// The small languages inside problem.toml strings: distributions, policies, the enumerated words,
// and kernel names.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kjudge/spec.hpp"

namespace kj {
namespace {

const Location kWhere{"p/problem.toml", "input[0].dist", 7, 8};

std::string error_text(auto&& f) {
  try {
    f();
  } catch (const SpecError& e) {
    EXPECT_EQ(e.where().line, 7);
    return e.what();
  }
  ADD_FAILURE() << "no SpecError";
  return {};
}

TEST(Distribution, Forms) {
  using K = Distribution::Kind;
  Distribution d = parse_distribution("normal(0, 1)", kWhere);
  EXPECT_EQ(d.kind, K::normal);
  EXPECT_EQ(d.a, 0);
  EXPECT_EQ(d.b, 1);
  EXPECT_EQ(d.text, "normal(0, 1)");
  d = parse_distribution(" normal ( -1.5 , 2e-1 ) ", kWhere);
  EXPECT_EQ(d.a, -1.5);
  EXPECT_EQ(d.b, 0.2);
  d = parse_distribution("normal", kWhere);
  EXPECT_EQ(d.kind, K::normal);
  EXPECT_EQ(d.b, 1);
  d = parse_distribution("uniform(-1, 1)", kWhere);
  EXPECT_EQ(d.kind, K::uniform);
  EXPECT_EQ(d.a, -1);
  d = parse_distribution("int(0, 9)", kWhere);
  EXPECT_EQ(d.kind, K::integer);
  EXPECT_EQ(d.b, 9);
  d = parse_distribution("bernoulli(0.25)", kWhere);
  EXPECT_EQ(d.kind, K::bernoulli);
  EXPECT_EQ(d.a, 0.25);
  d = parse_distribution("pareto(3)", kWhere);
  EXPECT_EQ(d.kind, K::pareto);
  EXPECT_EQ(d.a, 3);
  d = parse_distribution("const(2.5)", kWhere);
  EXPECT_EQ(d.kind, K::constant);
  EXPECT_EQ(d.a, 2.5);
  d = parse_distribution("const(nan)", kWhere);
  EXPECT_TRUE(std::isnan(d.a));
  d = parse_distribution("arange", kWhere);
  EXPECT_EQ(d.kind, K::arange);
  d = parse_distribution("arange()", kWhere);
  EXPECT_EQ(d.kind, K::arange);
  d = parse_distribution("file(\"data/x.npy\")", kWhere);
  EXPECT_EQ(d.kind, K::file);
  EXPECT_EQ(d.file, "data/x.npy");
  EXPECT_EQ(distribution_kind_name(K::integer), "int");
  EXPECT_EQ(distribution_kind_name(K::constant), "const");
}

TEST(Distribution, Errors) {
  const std::pair<const char*, const char*> cases[] = {
      {"gauss(0, 1)", "unknown distribution 'gauss'"},
      {"normal(0, 0)", "standard deviation must be positive"},
      {"normal(0)", "normal takes 2 arguments, got 1"},
      {"normal(0, x)", "'x' is not a number"},
      {"normal(0, inf)", "arguments must be finite"},
      {"uniform(1, 1)", "lo must be below hi"},
      {"int(0.5, 3)", "the bounds must be integers"},
      {"int(5, 3)", "lo must not be above hi"},
      {"bernoulli(1.5)", "p must be in [0, 1]"},
      {"pareto(0)", "alpha must be positive"},
      {"const()", "const takes 1 argument, got 0"},
      {"arange(3)", "arange takes 0 arguments, got 1"},
      {"file(x.npy)", "file takes one quoted file name"},
      {"file(\"\")", "file takes one quoted file name"},
      {"normal(0, 1", "expected name(arguments)"},
      {"", "expected name(arguments)"},
      {"normal(0,,1)", "expected name(arguments)"},
  };
  for (const auto& [text, want] : cases) {
    const std::string msg = error_text([&] { parse_distribution(text, kWhere); });
    EXPECT_NE(msg.find(want), std::string::npos) << text << " -> " << msg;
    EXPECT_NE(msg.find("p/problem.toml:7:8: input[0].dist: bad distribution"), std::string::npos)
        << msg;
  }
}

TEST(Policy, Forms) {
  using K = PolicySpec::Kind;
  PolicySpec p = parse_policy("relative", kWhere);
  EXPECT_EQ(p.kind, K::relative);
  EXPECT_FALSE(p.k);
  EXPECT_EQ(p.expected, Expected::golden);
  p = parse_policy("relative(8)", kWhere);
  EXPECT_EQ(*p.k, 8);
  p = parse_policy("allclose", kWhere);
  EXPECT_EQ(p.kind, K::allclose);
  EXPECT_FALSE(p.rtol);
  EXPECT_EQ(p.expected, Expected::reference);
  p = parse_policy("allclose(1e-3, 1e-5)", kWhere);
  EXPECT_EQ(*p.rtol, 1e-3);
  EXPECT_EQ(*p.atol, 1e-5);
  p = parse_policy("ulp(2)", kWhere);
  EXPECT_EQ(p.kind, K::ulp);
  EXPECT_EQ(p.ulps, 2);
  p = parse_policy("exact", kWhere);
  EXPECT_EQ(p.kind, K::exact);
  EXPECT_EQ(p.expected, Expected::reference);
  p = parse_policy("ratio(1e-3, 0.001)", kWhere);
  EXPECT_EQ(p.kind, K::ratio);
  EXPECT_EQ(p.threshold, 1e-3);
  EXPECT_EQ(p.max_fraction, 0.001);
  p = parse_policy("regions", kWhere);
  EXPECT_EQ(p.kind, K::regions);
  p = parse_policy("rel_l2(1e-3)", kWhere);
  EXPECT_EQ(p.kind, K::metric);
  EXPECT_EQ(p.metric, "rel_l2");
  EXPECT_EQ(p.metric_threshold, 1e-3);
  p = parse_policy("cosine(0.999)", kWhere);
  EXPECT_EQ(p.metric, "cosine");
  p = parse_policy("topk(5, 0.99)", kWhere);
  EXPECT_EQ(p.metric, "topk");
  EXPECT_EQ(p.topk, 5);
  EXPECT_EQ(p.metric_threshold, 0.99);
  EXPECT_EQ(p.text, "topk(5, 0.99)");
  EXPECT_EQ(policy_kind_name(K::regions), "regions");
}

TEST(Policy, Errors) {
  const std::pair<const char*, const char*> cases[] = {
      {"relativ", "unknown policy 'relativ'"},
      {"relative(0)", "k must be a positive number"},
      {"relative(1, 2)", "relative takes 1 argument, got 2"},
      {"allclose(1e-3)", "allclose takes 2 arguments, got 1"},
      {"allclose(-1, 0)", "rtol must be >= 0"},
      {"ulp", "ulp takes 1 argument, got 0"},
      {"ulp(-1)", "the ulp count must be >= 0"},
      {"exact(1)", "exact takes 0 arguments, got 1"},
      {"ratio(0, 0.1)", "the threshold must be positive"},
      {"ratio(1e-3, 2)", "max_fraction must be in [0, 1]"},
      {"cosine(2)", "the cosine bound must be in [-1, 1]"},
      {"topk(0.5, 0.9)", "k of topk must be a positive integer"},
      {"topk(5, 1.5)", "the topk agreement must be in [0, 1]"},
      {"rel_l2(-1)", "the rel_l2 bound must be >= 0"},
      {"relative(nan)", "k must be a positive number"},
  };
  for (const auto& [text, want] : cases) {
    const std::string msg = error_text([&] { parse_policy(text, kWhere); });
    EXPECT_NE(msg.find(want), std::string::npos) << text << " -> " << msg;
  }
}

TEST(Words, RoundTrip) {
  for (Tier t : {Tier::exact, Tier::tolerance, Tier::approximate})
    EXPECT_EQ(parse_tier(tier_name(t)), t);
  for (NanRule r : {NanRule::propagate, NanRule::ignore, NanRule::exempt})
    EXPECT_EQ(parse_nan_rule(nan_rule_name(r)), r);
  for (Expected e : {Expected::golden, Expected::reference})
    EXPECT_EQ(parse_expected(expected_name(e)), e);
  for (Domain d : {Domain::any, Domain::positive, Domain::nonnegative, Domain::unit})
    EXPECT_EQ(parse_domain(domain_name(d)), d);
  for (InitRule r : {InitRule::poison, InitRule::zero})
    EXPECT_EQ(parse_init_rule(init_rule_name(r)), r);
  // A drawn output's init is its distribution, parsed by that rule, never the word "drawn".
  EXPECT_EQ(init_rule_name(InitRule::drawn), "drawn");
  EXPECT_FALSE(parse_init_rule("drawn"));
  EXPECT_FALSE(parse_tier("Exact"));
  EXPECT_FALSE(parse_domain(""));
}

TEST(Launch, KernelBaseName) {
  LaunchSpec l;
  l.kernel = "softmax_rows<4>";
  EXPECT_EQ(l.kernel_base_name(), "softmax_rows");
  l.kernel = "ns::k <T, 2>";
  EXPECT_EQ(l.kernel_base_name(), "ns::k");
  l.kernel = "plain";
  EXPECT_EQ(l.kernel_base_name(), "plain");
}

} // namespace
} // namespace kj
