// The problem loader's tables of named values (problem_loader.hpp): [[scalar]] with each value
// checked against its dtype, [[input]] with its distribution, domain and specials, and [[output]]
// with its policy, which must fit the problem's tier, as a string or an inline table that takes
// only its own kind's parameters.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kjudge/spec.hpp"
#include "spec/internal.hpp"
#include "spec/problem_loader.hpp"

namespace kj::detail {

void Loader::load_scalars(const toml::node& node) {
  const toml::array& arr = detail::need_array(node, "scalar", ctx);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string field = fmt::format("scalar[{}]", i);
    const toml::table& t = detail::need_table(arr[i], field, ctx);
    detail::check_keys(t, {"name", "dtype", "value"}, field, ctx);
    ScalarSpec s;
    s.where = ctx.at(t, field);
    const toml::node& name_node = detail::need_key(t, "name", field, ctx);
    s.name = detail::need_string(name_node, detail::join(field, "name"), ctx);
    names.add(s.name, field, detail::join(field, "name"), name_node);
    s.dtype = detail::need_dtype(detail::need_key(t, "dtype", field, ctx),
                                 detail::join(field, "dtype"), ctx);
    parse_scalar_value(s, detail::need_key(t, "value", field, ctx), detail::join(field, "value"));
    p.scalars.push_back(std::move(s));
  }
}

void Loader::parse_scalar_value(ScalarSpec& s, const toml::node& v, const std::string& field) {
  if (is_integer(s.dtype)) {
    std::int64_t value = 0;
    if (const auto* i = v.as_integer()) {
      value = i->get();
      s.value = fmt::format("{}", value);
    } else if (const auto* b = v.as_boolean(); b && s.dtype == DType::boolean) {
      value = b->get() ? 1 : 0;
      s.value = b->get() ? "true" : "false";
    } else if (const auto* str = v.as_string()) {
      s.value = str->get();
      if (s.dtype == DType::boolean && (s.value == "true" || s.value == "false")) {
        value = s.value == "true";
      } else if (auto parsed = detail::parse_integer(s.value)) {
        value = *parsed;
      } else {
        ctx.fail(v, field,
                 fmt::format("'{}' is not an integer (scalar dtype {})", s.value,
                             dtype_name(s.dtype)));
      }
    } else {
      ctx.fail(v, field,
               fmt::format("expected an integer for dtype {}, got {}", dtype_name(s.dtype),
                           detail::type_name(v)));
    }
    std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                 hi = std::numeric_limits<std::int64_t>::max();
    switch (s.dtype) {
    case DType::i32:
      lo = std::numeric_limits<std::int32_t>::min();
      hi = std::numeric_limits<std::int32_t>::max();
      break;
    case DType::i16:
      lo = std::numeric_limits<std::int16_t>::min();
      hi = std::numeric_limits<std::int16_t>::max();
      break;
    case DType::i8:
      lo = -128;
      hi = 127;
      break;
    case DType::u8:
      lo = 0;
      hi = 255;
      break;
    case DType::boolean:
      lo = 0;
      hi = 1;
      break;
    default:
      break;
    }
    if (value < lo || value > hi)
      ctx.fail(v, field,
               fmt::format("{} does not fit in {} [{}, {}]", value, dtype_name(s.dtype), lo, hi));
    s.as_int = value;
    s.as_double = static_cast<double>(value);
    return;
  }
  double value = 0;
  if (const auto* f = v.as_floating_point()) {
    value = f->get();
    s.value = fmt::format("{}", value);
  } else if (const auto* i = v.as_integer()) {
    value = static_cast<double>(i->get());
    s.value = fmt::format("{}", i->get());
  } else if (const auto* str = v.as_string()) {
    s.value = str->get();
    auto parsed = detail::parse_number(s.value);
    if (!parsed)
      ctx.fail(
          v, field,
          fmt::format("'{}' is not a number (scalar dtype {})", s.value, dtype_name(s.dtype)));
    value = *parsed;
  } else {
    ctx.fail(v, field,
             fmt::format("expected a number for dtype {}, got {}", dtype_name(s.dtype),
                         detail::type_name(v)));
  }
  if (std::isfinite(value) && std::fabs(value) > float_format(s.dtype).max_finite)
    ctx.fail(v, field,
             fmt::format("{} is beyond the largest finite {} ({})", s.value, dtype_name(s.dtype),
                         float_format(s.dtype).max_finite));
  s.as_double = value;
}

std::vector<Expr> Loader::load_shape(const toml::table& t, const std::string& field) {
  const std::string shape_field = detail::join(field, "shape");
  std::vector<Expr> shape =
      detail::expr_list(detail::need_key(t, "shape", field, ctx), shape_field, ctx);
  for (const Expr& e : shape)
    e.check_names(scope.int_names);
  return shape;
}

void Loader::load_inputs(const toml::node& node) {
  const toml::array& arr = detail::need_array(node, "input", ctx);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string field = fmt::format("input[{}]", i);
    const toml::table& t = detail::need_table(arr[i], field, ctx);
    detail::check_keys(t, {"name", "dtype", "shape", "dist", "domain", "specials"}, field, ctx);
    InputSpec in;
    in.where = ctx.at(t, field);
    const toml::node& name_node = detail::need_key(t, "name", field, ctx);
    in.name = detail::need_string(name_node, detail::join(field, "name"), ctx);
    names.add(in.name, field, detail::join(field, "name"), name_node);
    in.dtype = detail::need_dtype(detail::need_key(t, "dtype", field, ctx),
                                  detail::join(field, "dtype"), ctx);
    in.shape = load_shape(t, field);
    const toml::node* dist = t.get("dist");
    if (dist) {
      const std::string df = detail::join(field, "dist");
      in.dist = parse_distribution(detail::need_string(*dist, df, ctx), ctx.at(*dist, df));
    } else {
      // Defaults: the standard normal for floats, a fair coin for bool, small integers
      // otherwise (indices need an explicit int(lo, hi) from their dims anyway).
      const char* text = is_float(in.dtype)           ? "normal(0, 1)"
                         : in.dtype == DType::boolean ? "bernoulli(0.5)"
                                                      : "int(0, 9)";
      in.dist = parse_distribution(text, in.where);
    }
    input_nodes.push_back(dist ? dist : &arr[i]);
    if (const toml::node* n = t.get("domain"))
      in.domain = need_word<Domain>(*n, detail::join(field, "domain"), ctx, parse_domain,
                                    "any, positive, nonnegative, unit");
    if (const toml::node* n = t.get("specials")) {
      const std::string sf = detail::join(field, "specials");
      in.specials = detail::string_list(*n, sf, ctx);
      in.specials_given = true;
      for (const std::string& s : in.specials)
        if (std::find(std::begin(kSpecialNames), std::end(kSpecialNames), s) ==
            std::end(kSpecialNames))
          ctx.fail(*n, sf,
                   fmt::format("unknown special value '{}' (known: nan, pos_inf, neg_inf, "
                               "neg_zero, subnormal, dtype_max)",
                               s));
    }
    p.inputs.push_back(std::move(in));
  }
}

// [[case]]: a seed and a transform of one float input that stays inside the input's domain
// (a scale in (0, 1] and no shift for `unit`, a positive scale and no negative shift for
// `positive` and `nonnegative`).
void Loader::load_adopted_cases(const toml::node& node) {
  const toml::array& arr = detail::need_array(node, "case", ctx);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string field = fmt::format("case[{}]", i);
    const toml::table& t = detail::need_table(arr[i], field, ctx);
    detail::check_keys(t, {"seed", "input", "scale", "offset"}, field, ctx);
    AdoptedCase c;
    c.where = ctx.at(t, field);
    if (const toml::node* n = t.get("seed")) {
      const std::int64_t seed = need_integer(*n, detail::join(field, "seed"), ctx);
      if (seed < 0 || seed >= (1 << 16))
        ctx.fail(*n, detail::join(field, "seed"), "a seed is in [0, 65535]");
      c.seed = static_cast<std::uint64_t>(seed);
    }
    for (const char* key : {"scale", "offset"})
      if (const toml::node* n = t.get(key)) {
        const double v = need_number(*n, detail::join(field, key), ctx);
        if (!std::isfinite(v)) ctx.fail(*n, detail::join(field, key), "must be finite");
        (std::string_view(key) == "scale" ? c.scale : c.offset) = v;
      }
    const toml::node* in_node = t.get("input");
    if (!in_node) {
      if (c.scale != 1 || c.offset != 0)
        ctx.fail(t, field, "a scale or an offset needs the input it applies to ('input')");
    } else {
      const std::string f = detail::join(field, "input");
      c.input = detail::need_string(*in_node, f, ctx);
      const InputSpec* in = p.find_input(c.input);
      if (!in) ctx.fail(*in_node, f, fmt::format("no input named '{}'", c.input));
      if (!is_float(in->dtype))
        ctx.fail(*in_node, f, fmt::format("input '{}' is {}: only float inputs are transformed",
                                          c.input, dtype_name(in->dtype)));
      const bool leaves = in->domain == Domain::any ? false
                          : in->domain == Domain::unit
                              ? c.scale <= 0 || c.scale > 1 || c.offset != 0
                              : c.scale <= 0 || c.offset < 0;
      if (leaves)
        ctx.fail(t, field, fmt::format("x*{:g}{:+g} leaves input '{}''s domain {}", c.scale,
                                       c.offset, c.input, domain_name(in->domain)));
    }
    p.adopted_cases.push_back(std::move(c));
  }
}

PolicySpec Loader::load_policy_table(const toml::table& t, const std::string& field) {
  detail::check_keys(
      t, {"kind", "expected", "k", "rtol", "atol", "n", "threshold", "max_fraction"}, field, ctx);
  const toml::node& kind_node = detail::need_key(t, "kind", field, ctx);
  const std::string kind = detail::need_string(kind_node, detail::join(field, "kind"), ctx);
  auto made = detail::policy_of_kind(kind);
  if (!made)
    ctx.fail(kind_node, detail::join(field, "kind"),
             fmt::format("unknown policy kind '{}' (known: relative, allclose, ulp, exact, "
                         "ratio, regions, rel_l2, cosine, topk)",
                         kind));
  PolicySpec pol = *made;
  // Each kind takes only its own parameters: a stray rtol on `relative` is a mistake.
  using K = PolicySpec::Kind;
  std::vector<std::string_view> allowed = {"kind", "expected"};
  switch (pol.kind) {
  case K::relative:
    allowed.push_back("k");
    break;
  case K::allclose:
    allowed.insert(allowed.end(), {"rtol", "atol"});
    break;
  case K::ulp:
    allowed.push_back("n");
    break;
  case K::ratio:
    allowed.insert(allowed.end(), {"threshold", "max_fraction"});
    break;
  case K::metric:
    allowed.push_back("threshold");
    if (pol.metric == "topk") allowed.push_back("k");
    break;
  case K::exact:
  case K::regions:
    break;
  }
  for (auto&& [key, value] : t)
    if (std::find(allowed.begin(), allowed.end(), key.str()) == allowed.end())
      throw SpecError(ctx.at(key.source(), detail::join(field, key.str())),
                      fmt::format("policy '{}' takes no '{}' (it takes: {})", kind, key.str(),
                                  fmt::join(allowed, ", ")));
  auto num = [&](std::string_view key) -> std::optional<double> {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    return need_number(*n, detail::join(field, key), ctx);
  };
  auto required = [&](std::string_view key) {
    if (!t.get(key)) detail::need_key(t, key, field, ctx);
    return *num(key);
  };
  switch (pol.kind) {
  case K::relative:
    pol.k = num("k");
    break;
  case K::allclose:
    pol.rtol = num("rtol");
    pol.atol = num("atol");
    break;
  case K::ulp:
    pol.ulps = required("n");
    break;
  case K::ratio:
    pol.threshold = required("threshold");
    pol.max_fraction = required("max_fraction");
    break;
  case K::metric:
    pol.metric_threshold = required("threshold");
    if (pol.metric == "topk") {
      const toml::node& kn = detail::need_key(t, "k", field, ctx);
      pol.topk = need_integer(kn, detail::join(field, "k"), ctx);
    }
    break;
  case K::exact:
  case K::regions:
    break;
  }
  if (const toml::node* n = t.get("expected"))
    pol.expected = need_word<Expected>(*n, detail::join(field, "expected"), ctx, parse_expected,
                                       "golden, reference");
  pol.text = kind;
  detail::check_policy(pol, ctx.at(t, field));
  return pol;
}

void Loader::load_outputs(const toml::node& node) {
  const toml::array& arr = detail::need_array(node, "output", ctx);
  if (arr.empty()) ctx.fail(node, "output", "a problem needs at least one output");
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string field = fmt::format("output[{}]", i);
    const toml::table& t = detail::need_table(arr[i], field, ctx);
    detail::check_keys(t, {"name", "dtype", "shape", "policy", "slice", "init", "ties"}, field,
                       ctx);
    OutputSpec out;
    out.where = ctx.at(t, field);
    const toml::node& name_node = detail::need_key(t, "name", field, ctx);
    out.name = detail::need_string(name_node, detail::join(field, "name"), ctx);
    names.add(out.name, field, detail::join(field, "name"), name_node);
    out.dtype = detail::need_dtype(detail::need_key(t, "dtype", field, ctx),
                                   detail::join(field, "dtype"), ctx);
    out.shape = load_shape(t, field);

    const std::string pf = detail::join(field, "policy");
    const toml::node* pn = t.get("policy");
    if (!pn) {
      // Defaults: exact where the tier or the dtype leaves no room, relative otherwise.
      const bool exact = p.tier == Tier::exact || is_integer(out.dtype);
      if (p.tier == Tier::approximate && !exact)
        ctx.fail(t, field,
                 fmt::format("output '{}' needs a policy: tier 'approximate' judges by a "
                             "metric (rel_l2(b), cosine(b) or topk(k, a))",
                             out.name));
      out.policy = parse_policy(exact ? "exact" : "relative", out.where);
    } else if (const auto* s = pn->as_string()) {
      out.policy = parse_policy(s->get(), ctx.at(*pn, pf));
    } else if (const auto* pt = pn->as_table()) {
      out.policy = load_policy_table(*pt, pf);
    } else {
      ctx.fail(*pn, pf,
               fmt::format("expected a policy string or an inline table, got {}",
                           detail::type_name(*pn)));
    }
    if (pn) check_policy_fits_tier(out, *pn, pf);

    if (const toml::node* n = t.get("slice")) {
      const std::string sf = detail::join(field, "slice");
      const std::int64_t axis = need_integer(*n, sf, ctx);
      if (axis < 0 || axis >= static_cast<std::int64_t>(out.shape.size()))
        ctx.fail(*n, sf,
                 fmt::format("slice axis {} is not an axis of a rank-{} output", axis,
                             out.shape.size()));
      out.slice = static_cast<int>(axis);
    }
    if (const toml::node* n = t.get("init")) load_output_init(out, *n, detail::join(field, "init"));
    if (const toml::node* n = t.get("ties")) {
      const std::string tf = detail::join(field, "ties");
      out.ties = detail::need_string(*n, tf, ctx);
      if (!is_integer(out.dtype))
        ctx.fail(*n, tf,
                 fmt::format("ties applies to integer outputs; '{}' is {}", out.name,
                             dtype_name(out.dtype)));
      if (out.ties->empty()) ctx.fail(*n, tf, "ties must not be empty");
    }
    p.outputs.push_back(std::move(out));
  }
}

// "poison", "zero", or a distribution: the initial values of an in-out tensor.
void Loader::load_output_init(OutputSpec& out, const toml::node& node, const std::string& field) {
  const std::string text = detail::need_string(node, field, ctx);
  if (const auto rule = parse_init_rule(text)) {
    out.init = *rule;
    return;
  }
  if (text.find('(') == std::string::npos && text != "arange")
    ctx.fail(node, field,
             fmt::format("unknown value '{}' (known: poison, zero, or a distribution such as "
                         "\"normal(0, 1)\" for an in-out tensor)",
                         text));
  out.init = InitRule::drawn;
  out.initial = parse_distribution(text, ctx.at(node, field));
  if (out.initial.kind == Distribution::Kind::file)
    ctx.fail(node, field, "an in-out tensor's initial values are drawn, not read: file() is for "
                          "inputs");
}

void Loader::check_policy_fits_tier(const OutputSpec& out, const toml::node& node,
                                    const std::string& field) {
  using K = PolicySpec::Kind;
  if (p.tier == Tier::exact && out.policy.kind != K::exact)
    ctx.fail(node, field,
             fmt::format("tier 'exact' judges bit-identity; policy '{}' contradicts it (use "
                         "tier 'tolerance', or drop the policy)",
                         out.policy.text));
  if (out.policy.kind == K::metric && p.tier != Tier::approximate)
    ctx.fail(node, field,
             fmt::format("metric policy '{}' belongs to tier 'approximate', not '{}'",
                         out.policy.text, tier_name(p.tier)));
  if (p.tier == Tier::approximate && is_float(out.dtype) && out.policy.kind != K::metric)
    ctx.fail(node, field,
             fmt::format("tier 'approximate' judges float outputs by a metric (rel_l2, "
                         "cosine, topk); policy '{}' is not one",
                         out.policy.text));
}

} // namespace kj::detail
