// The small languages inside problem.toml strings other than expressions: distributions
// ("normal(0, 1)", "file(\"x.npy\")"), policies ("relative(8)", "allclose(1e-3, 1e-5)") and the
// enumerated words (tiers, NaN rules, domains...). Each parser checks the ranges of its numbers
// here, so a nonsensical tolerance is a SpecError at load rather than a surprise in a verdict.
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kjudge/spec.hpp"
#include "spec/internal.hpp"

namespace kj {

std::string_view tier_name(Tier t) {
  switch (t) {
  case Tier::exact:
    return "exact";
  case Tier::tolerance:
    return "tolerance";
  case Tier::approximate:
    return "approximate";
  }
  return "?";
}
std::string_view nan_rule_name(NanRule r) {
  switch (r) {
  case NanRule::propagate:
    return "propagate";
  case NanRule::ignore:
    return "ignore";
  case NanRule::exempt:
    return "exempt";
  }
  return "?";
}
std::string_view expected_name(Expected e) {
  return e == Expected::golden ? "golden" : "reference";
}
std::string_view domain_name(Domain d) {
  switch (d) {
  case Domain::any:
    return "any";
  case Domain::positive:
    return "positive";
  case Domain::nonnegative:
    return "nonnegative";
  case Domain::unit:
    return "unit";
  }
  return "?";
}
std::string_view init_rule_name(InitRule r) {
  return r == InitRule::zero ? "zero" : r == InitRule::drawn ? "drawn" : "poison";
}

std::optional<Tier> parse_tier(std::string_view s) {
  for (Tier t : {Tier::exact, Tier::tolerance, Tier::approximate})
    if (tier_name(t) == s) return t;
  return std::nullopt;
}
std::optional<NanRule> parse_nan_rule(std::string_view s) {
  for (NanRule r : {NanRule::propagate, NanRule::ignore, NanRule::exempt})
    if (nan_rule_name(r) == s) return r;
  return std::nullopt;
}
std::optional<Expected> parse_expected(std::string_view s) {
  for (Expected e : {Expected::golden, Expected::reference})
    if (expected_name(e) == s) return e;
  return std::nullopt;
}
std::optional<Domain> parse_domain(std::string_view s) {
  for (Domain d : {Domain::any, Domain::positive, Domain::nonnegative, Domain::unit})
    if (domain_name(d) == s) return d;
  return std::nullopt;
}
std::optional<InitRule> parse_init_rule(std::string_view s) {
  for (InitRule r : {InitRule::poison, InitRule::zero})
    if (init_rule_name(r) == s) return r;
  return std::nullopt;
}

std::string_view distribution_kind_name(Distribution::Kind k) {
  using K = Distribution::Kind;
  switch (k) {
  case K::normal:
    return "normal";
  case K::uniform:
    return "uniform";
  case K::integer:
    return "int";
  case K::bernoulli:
    return "bernoulli";
  case K::pareto:
    return "pareto";
  case K::constant:
    return "const";
  case K::arange:
    return "arange";
  case K::file:
    return "file";
  }
  return "?";
}

std::string_view policy_kind_name(PolicySpec::Kind k) {
  using K = PolicySpec::Kind;
  switch (k) {
  case K::relative:
    return "relative";
  case K::allclose:
    return "allclose";
  case K::ulp:
    return "ulp";
  case K::exact:
    return "exact";
  case K::ratio:
    return "ratio";
  case K::regions:
    return "regions";
  case K::metric:
    return "metric";
  }
  return "?";
}

namespace detail {

namespace {
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && is_space(s.back()))
    s.remove_suffix(1);
  return s;
}
} // namespace

std::optional<CallForm> split_call(std::string_view text) {
  std::string_view s = trim(text);
  std::size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_'))
    ++n;
  if (n == 0) return std::nullopt;
  CallForm out;
  out.name = std::string(s.substr(0, n));
  std::string_view rest = trim(s.substr(n));
  if (rest.empty()) return out;
  if (rest.front() != '(' || rest.back() != ')') return std::nullopt;
  out.has_parens = true;
  rest = trim(rest.substr(1, rest.size() - 2));
  if (rest.empty()) return out;
  // Split on commas outside double quotes; a quoted argument keeps its quotes so the caller
  // can tell a file name from a number.
  std::size_t start = 0;
  bool in_quotes = false;
  for (std::size_t i = 0; i <= rest.size(); ++i) {
    if (i < rest.size() && rest[i] == '"') in_quotes = !in_quotes;
    if (i == rest.size() || (rest[i] == ',' && !in_quotes)) {
      std::string_view arg = trim(rest.substr(start, i - start));
      if (arg.empty()) return std::nullopt;
      out.args.emplace_back(arg);
      start = i + 1;
    }
  }
  if (in_quotes) return std::nullopt;
  return out;
}

std::optional<double> parse_number(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<std::int64_t> parse_integer(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

void check_policy(const PolicySpec& p, const Location& where) {
  using K = PolicySpec::Kind;
  auto bad = [&](const std::string& why) {
    throw SpecError(where, fmt::format("bad policy '{}': {}", p.text, why));
  };
  auto finite = [](double v) { return std::isfinite(v); };
  switch (p.kind) {
  case K::relative:
    if (p.k && !(finite(*p.k) && *p.k > 0)) bad("k must be a positive number");
    break;
  case K::allclose:
    if (p.rtol && !(finite(*p.rtol) && *p.rtol >= 0)) bad("rtol must be >= 0");
    if (p.atol && !(finite(*p.atol) && *p.atol >= 0)) bad("atol must be >= 0");
    if (p.rtol.has_value() != p.atol.has_value()) bad("give both rtol and atol, or neither");
    break;
  case K::ulp:
    if (!(finite(p.ulps) && p.ulps >= 0)) bad("the ulp count must be >= 0");
    break;
  case K::ratio:
    if (!(finite(p.threshold) && p.threshold > 0)) bad("the threshold must be positive");
    if (!(p.max_fraction >= 0 && p.max_fraction <= 1)) bad("max_fraction must be in [0, 1]");
    break;
  case K::metric:
    if (p.metric == "rel_l2") {
      if (!(finite(p.metric_threshold) && p.metric_threshold >= 0))
        bad("the rel_l2 bound must be >= 0");
    } else if (p.metric == "cosine") {
      if (!(p.metric_threshold >= -1 && p.metric_threshold <= 1))
        bad("the cosine bound must be in [-1, 1]");
    } else if (p.metric == "topk") {
      if (p.topk < 1) bad("k of topk must be a positive integer");
      if (!(p.metric_threshold >= 0 && p.metric_threshold <= 1))
        bad("the topk agreement must be in [0, 1]");
    } else {
      bad(fmt::format("unknown metric '{}' (known: cosine, rel_l2, topk)", p.metric));
    }
    break;
  case K::exact:
  case K::regions:
    break;
  }
}

std::optional<PolicySpec> policy_of_kind(std::string_view word) {
  using K = PolicySpec::Kind;
  PolicySpec p;
  if (word == "relative")
    p.kind = K::relative;
  else if (word == "allclose")
    p.kind = K::allclose;
  else if (word == "ulp")
    p.kind = K::ulp;
  else if (word == "exact")
    p.kind = K::exact;
  else if (word == "ratio")
    p.kind = K::ratio;
  else if (word == "regions")
    p.kind = K::regions;
  else if (word == "rel_l2" || word == "cosine" || word == "topk") {
    p.kind = K::metric;
    p.metric = std::string(word);
  } else {
    return std::nullopt;
  }
  p.expected = default_expected(p.kind);
  return p;
}

Expected default_expected(PolicySpec::Kind k) {
  // torch users compare allclose against the same-precision result; exact means bit-identical
  // to the reference; everything numerical is judged against the fp64 golden.
  return k == PolicySpec::Kind::allclose || k == PolicySpec::Kind::exact ? Expected::reference
                                                                         : Expected::golden;
}

} // namespace detail

namespace {
constexpr std::string_view kDistForms =
    "normal(mean, std), uniform(lo, hi), int(lo, hi), bernoulli(p), pareto(alpha), const(v), "
    "arange, file(\"x.npy\")";
constexpr std::string_view kPolicyForms =
    "relative, relative(k), allclose, allclose(rtol, atol), ulp(n), exact, "
    "ratio(threshold, max_fraction), regions, rel_l2(bound), cosine(bound), topk(k, agreement)";
} // namespace

Distribution parse_distribution(std::string_view text, const Location& where) {
  using K = Distribution::Kind;
  Distribution d;
  d.text = std::string(text);
  auto bad = [&](const std::string& why) -> Distribution {
    throw SpecError(where,
                    fmt::format("bad distribution '{}': {} (forms: {})", text, why, kDistForms));
  };
  auto call = detail::split_call(text);
  if (!call) return bad("expected name(arguments)");
  const std::string& name = call->name;
  if (name == "file") {
    d.kind = K::file;
    if (call->args.size() != 1) return bad("file takes one quoted file name");
    const std::string& a = call->args[0];
    if (a.size() < 3 || a.front() != '"' || a.back() != '"')
      return bad("file takes one quoted file name");
    d.file = a.substr(1, a.size() - 2);
    return d;
  }
  std::vector<double> args;
  for (const std::string& a : call->args) {
    auto v = detail::parse_number(a);
    if (!v) return bad(fmt::format("'{}' is not a number", a));
    args.push_back(*v);
  }
  auto want = [&](std::size_t n) {
    if (args.size() != n)
      bad(fmt::format("{} takes {} argument{}, got {}", name, n, n == 1 ? "" : "s", args.size()));
  };
  auto finite_args = [&] {
    for (double v : args)
      if (!std::isfinite(v)) bad("arguments must be finite");
  };
  if (name == "normal" || name == "uniform") {
    d.kind = name == "normal" ? K::normal : K::uniform;
    if (!call->has_parens || args.empty()) args = {0.0, 1.0}; // the standard forms
    want(2);
    finite_args();
    d.a = args[0];
    d.b = args[1];
    if (d.kind == K::normal && !(d.b > 0)) bad("the standard deviation must be positive");
    if (d.kind == K::uniform && !(d.a < d.b)) bad("lo must be below hi");
  } else if (name == "int") {
    d.kind = K::integer;
    want(2);
    finite_args();
    d.a = args[0];
    d.b = args[1];
    if (d.a != std::floor(d.a) || d.b != std::floor(d.b)) bad("the bounds must be integers");
    if (!(d.a <= d.b)) bad("lo must not be above hi");
    if (std::fabs(d.a) > 9007199254740992.0 || std::fabs(d.b) > 9007199254740992.0)
      bad("the bounds must lie within +-2^53");
  } else if (name == "bernoulli") {
    d.kind = K::bernoulli;
    want(1);
    d.a = args[0];
    if (!(d.a >= 0 && d.a <= 1)) bad("p must be in [0, 1]");
  } else if (name == "pareto") {
    d.kind = K::pareto;
    want(1);
    finite_args();
    d.a = args[0];
    if (!(d.a > 0)) bad("alpha must be positive");
  } else if (name == "const") {
    d.kind = K::constant;
    want(1); // NaN and Inf are allowed: a constant special value is a legitimate input
    d.a = args[0];
  } else if (name == "arange") {
    d.kind = K::arange;
    want(0);
  } else {
    return bad(fmt::format("unknown distribution '{}'", name));
  }
  return d;
}

PolicySpec parse_policy(std::string_view text, const Location& where) {
  using K = PolicySpec::Kind;
  auto bad = [&](const std::string& why) -> PolicySpec {
    throw SpecError(where, fmt::format("bad policy '{}': {} (forms: {})", text, why, kPolicyForms));
  };
  auto call = detail::split_call(text);
  if (!call) return bad("expected name(arguments)");
  auto made = detail::policy_of_kind(call->name);
  if (!made) return bad(fmt::format("unknown policy '{}'", call->name));
  PolicySpec p = *made;
  p.text = std::string(text);
  std::vector<double> args;
  for (const std::string& a : call->args) {
    auto v = detail::parse_number(a);
    if (!v) return bad(fmt::format("'{}' is not a number", a));
    args.push_back(*v);
  }
  auto want = [&](std::size_t n) {
    if (args.size() != n)
      bad(fmt::format("{} takes {} argument{}, got {}", call->name, n, n == 1 ? "" : "s",
                      args.size()));
  };
  switch (p.kind) {
  case K::relative:
    if (!args.empty()) {
      want(1);
      p.k = args[0];
    }
    break;
  case K::allclose:
    if (!args.empty()) {
      want(2);
      p.rtol = args[0];
      p.atol = args[1];
    }
    break;
  case K::ulp:
    want(1);
    p.ulps = args[0];
    break;
  case K::ratio:
    want(2);
    p.threshold = args[0];
    p.max_fraction = args[1];
    break;
  case K::exact:
  case K::regions:
    want(0);
    break;
  case K::metric:
    if (p.metric == "topk") {
      want(2);
      if (args[0] != std::floor(args[0]) || !(args[0] >= 1 && args[0] <= 1e9))
        bad("k of topk must be a positive integer");
      p.topk = static_cast<std::int64_t>(args[0]);
      p.metric_threshold = args[1];
    } else {
      want(1);
      p.metric_threshold = args[0];
    }
    break;
  }
  detail::check_policy(p, where);
  return p;
}

std::string LaunchSpec::kernel_base_name() const {
  std::string_view s = kernel;
  const auto lt = s.find('<');
  if (lt != std::string_view::npos) s = s.substr(0, lt);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  return std::string(s);
}

// kjudge's buffers start on this boundary on both backends (cuMemAlloc's alignment; the host
// arena's slots are 256-byte aligned, red zones included).
constexpr std::int64_t kBufferAlignment = 256;

Precondition parse_precondition(std::string_view text, const Location& where,
                                const std::set<std::string, std::less<>>& names,
                                const std::set<std::string, std::less<>>& tensors) {
  Precondition p;
  p.text = std::string(text);
  p.where = where;
  const auto call = detail::split_call(text);
  if (call && call->name == "aligned") {
    auto bad = [&](const std::string& why) {
      throw SpecError(where, fmt::format("bad precondition '{}': {} (form: aligned(tensor, N))",
                                         text, why));
    };
    if (call->args.size() != 2) bad("aligned takes a tensor and a byte count");
    p.tensor = call->args[0];
    if (!tensors.contains(p.tensor)) bad(fmt::format("'{}' is not a tensor", p.tensor));
    const auto n = detail::parse_integer(call->args[1]);
    if (!n || *n <= 0 || (*n & (*n - 1)) != 0) bad("N must be a power of two");
    if (*n > kBufferAlignment)
      bad(fmt::format("kjudge's buffers are {}-byte aligned; {} is more than it guarantees",
                      kBufferAlignment, *n));
    p.alignment = *n;
    return p;
  }
  p.expr = Expr::parse(text, where);
  p.expr->check_names(names);
  return p;
}

bool Precondition::holds(const Env& env) const {
  return !expr || expr->eval(env) != 0;
}

std::string Precondition::normalized() const {
  std::string out;
  for (const char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

} // namespace kj
