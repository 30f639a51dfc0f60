// `kjudge export`: a Problem written back as problem.toml without its hidden shape sets, for
// handing a problem to a candidate's author. The output is canonical rather than a copy of the
// input (every field explicit, policies as inline tables, numbers in shortest round-trip form),
// so it loads back into the same Problem minus the hidden sets; comments and key order are lost.
#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

#include "kjudge/spec.hpp"

namespace kj {

namespace {

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    case '\r':
      out += "\\r";
      break;
    default:
      if (c < 0x20 || c == 0x7f)
        out += fmt::format("\\u{:04X}", c);
      else
        out += ch;
    }
  }
  return out + "\"";
}

// TOML needs a '.' or an exponent to read a float back as one.
std::string toml_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

template <class Range, class F>
std::string array(const Range& items, F&& each) {
  std::vector<std::string> parts;
  for (const auto& x : items)
    parts.push_back(each(x));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string strings(const std::vector<std::string>& v) {
  return array(v, [](const std::string& s) { return quote(s); });
}
// A plain integer as a TOML integer (it reads back with the same text), anything else quoted.
std::string toml_expr_text(const std::string& text) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  const bool plain = !digits.empty() && digits.size() <= 18 &&
                     digits.find_first_not_of("0123456789") == std::string_view::npos &&
                     (digits.size() == 1 || digits.front() != '0'); // TOML has no leading zeros
  return plain && text != "-0" ? text : quote(text);
}
std::string exprs(const std::vector<Expr>& v) {
  return array(v, [](const Expr& e) { return toml_expr_text(e.text()); });
}

std::string policy_table(const PolicySpec& p) {
  using K = PolicySpec::Kind;
  std::vector<std::string> f;
  f.push_back(fmt::format(
      "kind = {}", quote(p.kind == K::metric ? p.metric : std::string(policy_kind_name(p.kind)))));
  switch (p.kind) {
  case K::relative:
    if (p.k) f.push_back("k = " + toml_float(*p.k));
    break;
  case K::allclose:
    if (p.rtol) f.push_back("rtol = " + toml_float(*p.rtol));
    if (p.atol) f.push_back("atol = " + toml_float(*p.atol));
    break;
  case K::ulp:
    f.push_back("n = " + toml_float(p.ulps));
    break;
  case K::ratio:
    f.push_back("threshold = " + toml_float(p.threshold));
    f.push_back("max_fraction = " + toml_float(p.max_fraction));
    break;
  case K::metric:
    if (p.metric == "topk") f.push_back(fmt::format("k = {}", p.topk));
    f.push_back("threshold = " + toml_float(p.metric_threshold));
    break;
  case K::exact:
  case K::regions:
    break;
  }
  f.push_back(fmt::format("expected = {}", quote(expected_name(p.expected))));
  return fmt::format("{{ {} }}", fmt::join(f, ", "));
}

// A plan's `source` and its `[[TABLE.launch]]` tables, under a table header already written.
void write_plan(std::string& out, const KernelSource& src, const std::filesystem::path& dir,
                std::string_view table) {
  std::filesystem::path rel = src.path.lexically_relative(dir);
  if (rel.empty()) rel = src.path;
  out += fmt::format("source = {}\n", quote(rel.generic_string()));
  for (const LaunchSpec& l : src.launches) {
    out += fmt::format("\n[[{}.launch]]\n", table);
    out += fmt::format("kernel = {}\n", quote(l.kernel));
    out += fmt::format("grid = {}\n", exprs(l.grid));
    out += fmt::format("block = {}\n", exprs(l.block));
    out += fmt::format("shared = {}\n", toml_expr_text(l.shared.text()));
    if (!l.cluster.empty()) out += fmt::format("cluster = {}\n", exprs(l.cluster));
    if (l.cooperative) out += "cooperative = true\n";
    out += fmt::format("args = {}\n", array(l.args, toml_expr_text));
    if (l.repeat) out += fmt::format("repeat = {}\n", toml_expr_text(l.repeat->text()));
  }
}

void write_source(std::string& out, const KernelSource& src, const std::filesystem::path& dir,
                  std::string_view table) {
  out += fmt::format("\n[{}]\n", table);
  write_plan(out, src, dir, table);
}

} // namespace

std::string export_problem_toml(const Problem& p) {
  std::string out = "# Exported by kjudge: hidden shape sets are left out.\n";
  out += fmt::format("name = {}\n", quote(p.name));
  out += fmt::format("summary = {}\n", quote(p.summary));
  out += fmt::format("tier = {}\n", quote(tier_name(p.tier)));
  out += fmt::format("nan = {}\n", quote(nan_rule_name(p.nan)));
  out += fmt::format("signed_zero = {}\n", quote(p.signed_zero_strict ? "strict" : "equal"));
  out += fmt::format("nondeterministic = {}\n", p.allow_nondeterministic);
  if (p.floor_bytes) out += fmt::format("floor_bytes = {}\n", quote(p.floor_bytes->text()));
  if (p.floor_flops) out += fmt::format("floor_flops = {}\n", quote(p.floor_flops->text()));
  if (p.memory_limit) out += fmt::format("memory_limit = {}\n", quote(p.memory_limit->text()));
  out += fmt::format("allowed_options = {}\n", strings(p.allowed_options));
  out += fmt::format("forbid = {}\n", strings(p.forbid));
  if (!p.may_require.empty()) {
    std::vector<std::string> texts;
    for (const Precondition& r : p.may_require)
      texts.push_back(r.text);
    out += fmt::format("may_require = {}\n", strings(texts));
  }

  out += "\n[dims]\n";
  auto dim_set = [](const DimSet& s) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : s.values)
      kv.push_back(fmt::format("{} = {}", k, v));
    return fmt::format("{{ {} }}", fmt::join(kv, ", "));
  };
  out += fmt::format("public = {}\n", array(p.dims.public_sets, dim_set));
  if (!p.dims.host_sets.empty()) out += fmt::format("host = {}\n", array(p.dims.host_sets, dim_set));
  out += fmt::format("vary = {}\n", strings(p.dims.vary));
  out += fmt::format("constraints = {}\n", exprs(p.dims.constraints));
  for (const RecordedBaseline& b : p.baselines) { // public shape sets only
    out += "\n[[baseline]]\n";
    out += fmt::format("name = {}\n", quote(b.name));
    out += fmt::format("gpu = {}\n", quote(b.gpu));
    out += fmt::format("dims = {}\n", dim_set(DimSet{b.dims, {}}));
    out += fmt::format("ms = {}\n", b.ms);
  }
  if (const auto& b = p.timed_baseline) {
    out += fmt::format("\n[[baseline]]\nname = {}\n", quote(b->name));
    if (b->plan) {
      write_plan(out, *b->plan, p.dir, "baseline");
    } else {
      std::vector<std::string> args;
      for (const auto& [role, tensor] : b->tensors)
        args.push_back(fmt::format("{} = {}", role, quote(tensor)));
      for (const auto& [role, size] : b->sizes)
        args.push_back(fmt::format("{} = {}", role, toml_expr_text(size.text())));
      out += fmt::format("builtin = {}\nargs = {{ {} }}\n", quote(b->builtin),
                         fmt::join(args, ", "));
    }
  }

  for (const InputSpec& in : p.inputs) {
    out += "\n[[input]]\n";
    out += fmt::format("name = {}\n", quote(in.name));
    out += fmt::format("dtype = {}\n", quote(dtype_name(in.dtype)));
    out += fmt::format("shape = {}\n", exprs(in.shape));
    out += fmt::format("dist = {}\n", quote(in.dist.text));
    out += fmt::format("domain = {}\n", quote(domain_name(in.domain)));
    if (in.specials_given) out += fmt::format("specials = {}\n", strings(in.specials));
  }
  for (const AdoptedCase& c : p.adopted_cases) {
    out += fmt::format("\n[[case]]\nseed = {}\n", c.seed);
    if (!c.input.empty())
      out += fmt::format("input = {}\nscale = {}\noffset = {}\n", quote(c.input),
                         toml_float(c.scale), toml_float(c.offset));
  }
  for (const ScalarSpec& s : p.scalars) {
    out += "\n[[scalar]]\n";
    out += fmt::format("name = {}\n", quote(s.name));
    out += fmt::format("dtype = {}\n", quote(dtype_name(s.dtype)));
    out += fmt::format("value = {}\n", quote(s.value));
  }
  for (const OutputSpec& o : p.outputs) {
    out += "\n[[output]]\n";
    out += fmt::format("name = {}\n", quote(o.name));
    out += fmt::format("dtype = {}\n", quote(dtype_name(o.dtype)));
    out += fmt::format("shape = {}\n", exprs(o.shape));
    out += fmt::format("policy = {}\n", policy_table(o.policy));
    if (o.slice) out += fmt::format("slice = {}\n", *o.slice);
    out += fmt::format("init = {}\n", quote(o.init == InitRule::drawn ? o.initial.text
                                                                       : init_rule_name(o.init)));
    if (o.ties) out += fmt::format("ties = {}\n", quote(*o.ties));
  }
  write_source(out, p.reference, p.dir, "reference");
  if (p.golden) write_source(out, *p.golden, p.dir, "golden");
  return out;
}

} // namespace kj
