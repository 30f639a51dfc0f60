// load_problem: problem.toml (docs/design.md "Problem format") into a checked Problem. Everything
// that can be known without a compiler is checked here, so later stages can trust the value:
// unknown keys, types, names and their uniqueness, expression names, dtypes, and every expression
// of every declared shape set evaluated once (shapes, floors, constraints, launch plans), so a
// division by zero or an overflowing shape is a load error with a place, not a judge crash.
// This file holds the entry points, the top level, the dims, the kernel sources and that
// evaluation; the Loader's other tables are in problem_tensors.cpp and problem_baseline.cpp.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kjudge/spec.hpp"
#include "spec/internal.hpp"
#include "spec/problem_loader.hpp"

namespace kj {

using detail::Loader;

namespace {

std::optional<std::string> read_from_disk(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return std::move(buf).str();
}

} // namespace

namespace detail {

double need_number(const toml::node& node, const std::string& field, const TomlContext& ctx) {
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* i = node.as_integer()) return static_cast<double>(i->get());
  ctx.fail(node, field, fmt::format("expected a number, got {}", detail::type_name(node)));
}

std::int64_t need_integer(const toml::node& node, const std::string& field,
                          const TomlContext& ctx) {
  if (const auto* i = node.as_integer()) return i->get();
  ctx.fail(node, field, fmt::format("expected an integer, got {}", detail::type_name(node)));
}

std::string Loader::read_named_file(const std::string& written, const toml::node& node,
                                    const std::string& field, std::string_view what) {
  const std::filesystem::path full = dir / written;
  auto bytes = read(full);
  if (!bytes)
    ctx.fail(node, field,
             fmt::format("cannot read {} '{}' (looked for {})", what, written, full.string()));
  hashed.emplace_back(written, *bytes);
  return *bytes;
}

void Loader::load(const toml::table& root) {
  detail::check_keys(root,
                     {"name", "summary", "tier", "nan", "signed_zero", "nondeterministic",
                      "floor_bytes", "floor_flops", "memory_limit", "allowed_options", "forbid",
                      "dims", "input", "scalar", "output", "reference", "golden", "baseline",
                      "may_require", "case", "downgrades", "stage", "score"},
                     "", ctx);
  p.dir = dir;
  p.name = detail::need_string(detail::need_key(root, "name", "", ctx), "name", ctx);
  if (p.name.empty()) ctx.fail(*root.get("name"), "name", "the name must not be empty");
  if (const toml::node* n = root.get("summary"))
    p.summary = detail::need_string(*n, "summary", ctx);
  if (const toml::node* n = root.get("tier"))
    p.tier = need_word<Tier>(*n, "tier", ctx, parse_tier, "exact, tolerance, approximate");
  if (const toml::node* n = root.get("nan"))
    p.nan = need_word<NanRule>(*n, "nan", ctx, parse_nan_rule, "propagate, ignore, exempt");
  if (const toml::node* n = root.get("signed_zero")) {
    const std::string v = detail::need_string(*n, "signed_zero", ctx);
    if (v != "strict" && v != "equal")
      ctx.fail(*n, "signed_zero", fmt::format("unknown value '{}' (known: strict, equal)", v));
    p.signed_zero_strict = v == "strict";
  }
  if (const toml::node* n = root.get("nondeterministic"))
    p.allow_nondeterministic = detail::need_bool(*n, "nondeterministic", ctx);
  if (const toml::node* n = root.get("allowed_options"))
    p.allowed_options = detail::string_list(*n, "allowed_options", ctx);
  if (const toml::node* n = root.get("forbid")) p.forbid = detail::string_list(*n, "forbid", ctx);
  if (const toml::node* n = root.get("downgrades")) {
    p.downgrades = detail::string_list(*n, "downgrades", ctx);
    for (const std::string& file : p.downgrades)
      if (std::error_code ec; !std::filesystem::is_regular_file(dir / file, ec))
        ctx.fail(*n, "downgrades", fmt::format("no such file '{}' beside problem.toml", file));
  }

  load_dims(need_table_key(root, "dims", ""));
  if (const toml::node* n = root.get("scalar")) load_scalars(*n);
  scope.int_names = dim_names;
  for (const ScalarSpec& s : p.scalars)
    if (is_integer(s.dtype)) scope.int_names.insert(s.name);
  for (const ScalarSpec& s : p.scalars)
    scope.scalars.insert(s.name);

  for (const Expr& c : p.dims.constraints)
    c.check_names(scope.int_names);
  p.floor_bytes = floor_expr(root, "floor_bytes");
  p.floor_flops = floor_expr(root, "floor_flops");
  p.memory_limit = floor_expr(root, "memory_limit");

  if (const toml::node* n = root.get("input")) load_inputs(*n);
  load_outputs(detail::need_key(root, "output", "", ctx));
  if (const toml::node* n = root.get("case")) load_adopted_cases(*n);
  for (const InputSpec& in : p.inputs)
    scope.tensors.insert(in.name);
  for (const OutputSpec& out : p.outputs)
    scope.tensors.insert(out.name);
  if (const toml::node* n = root.get("stage")) load_stages(*n);
  if (const toml::node* n = root.get("score")) load_score(detail::need_table(*n, "score", ctx));
  if (const toml::node* n = root.get("may_require")) {
    const std::vector<std::string> texts = detail::string_list(*n, "may_require", ctx);
    const toml::array& arr = *n->as_array();
    for (std::size_t i = 0; i < texts.size(); ++i)
      p.may_require.push_back(parse_precondition(
          texts[i], ctx.at(arr[i], fmt::format("may_require[{}]", i)), scope.int_names,
          scope.tensors));
  }

  // The hash order is fixed: problem.toml (added by the caller), reference, golden, then the
  // file() distributions in input order.
  p.reference = load_kernel_source(need_table_key(root, "reference", ""), "reference");
  if (const toml::node* n = root.get("golden"))
    p.golden = load_kernel_source(detail::need_table(*n, "golden", ctx), "golden");
  if (const toml::node* n = root.get("baseline")) load_baselines(*n);
  check_stages(root);
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    InputSpec& in = p.inputs[i];
    if (in.dist.kind != Distribution::Kind::file) continue;
    const toml::node& node = *input_nodes[i];
    read_named_file(in.dist.file, node, fmt::format("input[{}].dist", i), "data file");
    in.dist.file = (dir / in.dist.file).string();
  }

  evaluate_sets();
}

const toml::table& Loader::need_table_key(const toml::table& t, std::string_view key,
                                          const std::string& owner) {
  return detail::need_table(detail::need_key(t, key, owner, ctx), detail::join(owner, key), ctx);
}

// An optional integer expression of the dims (floor_bytes, floor_flops, memory_limit); an
// empty string is none.
std::optional<Expr> Loader::floor_expr(const toml::table& root, std::string_view key) {
  const toml::node* n = root.get(key);
  if (!n) return std::nullopt;
  if (const auto* s = n->as_string()) {
    if (s->get().find_first_not_of(" \t") == std::string::npos) return std::nullopt;
  }
  Expr e = detail::expr_value(*n, std::string(key), ctx);
  e.check_names(scope.int_names);
  return e;
}

void Loader::load_dims(const toml::table& dims) {
  detail::check_keys(dims,
                     {"public", "hidden", "hidden_ranges", "hidden_draws", "host", "vary",
                      "constraints"},
                     "dims", ctx);
  const toml::node& pub = detail::need_key(dims, "public", "dims", ctx);
  load_dim_sets(pub, "dims.public", p.dims.public_sets);
  if (p.dims.public_sets.empty())
    ctx.fail(pub, "dims.public", "at least one public shape set is needed");
  if (const toml::node* n = dims.get("hidden"))
    load_dim_sets(*n, "dims.hidden", p.dims.hidden_sets);
  if (const toml::node* n = dims.get("host")) load_dim_sets(*n, "dims.host", p.dims.host_sets);

  // The first public set fixes the dims; every other set must define exactly those.
  const DimSet& first = p.dims.public_sets.front();
  for (const auto& [name, v] : first.values)
    dim_names.insert(name);
  auto compare = [&](const DimSet& set) {
    for (const auto& name : dim_names)
      if (!set.values.contains(name))
        throw SpecError(set.where, fmt::format("missing dim '{}' (dims.public[0] defines it; "
                                               "every shape set defines the same dims)",
                                               name));
    for (const auto& [name, v] : set.values)
      if (!dim_names.contains(name))
        throw SpecError(set.where, fmt::format("dim '{}' is not in dims.public[0] (every shape "
                                               "set defines the same dims)",
                                               name));
  };
  for (const DimSet& set : p.dims.public_sets)
    compare(set);
  for (const DimSet& set : p.dims.hidden_sets)
    compare(set);
  for (const DimSet& set : p.dims.host_sets)
    compare(set);
  if (const toml::node* n = dims.get("hidden_ranges")) load_dim_ranges(*n);
  if (const toml::node* n = dims.get("hidden_draws")) {
    const std::int64_t draws = need_integer(*n, "dims.hidden_draws", ctx);
    if (draws < 1 || draws > kMaxHiddenDraws)
      ctx.fail(*n, "dims.hidden_draws",
               fmt::format("{} draws per range: between 1 and {}", draws, kMaxHiddenDraws));
    p.dims.hidden_draws = static_cast<int>(draws);
  }
  const toml::table& first_node = *pub.as_array()->get(0)->as_table();
  for (auto&& [key, value] : first_node)
    names.add(std::string(key.str()), "dims", detail::join("dims.public[0]", key.str()), value);

  if (const toml::node* n = dims.get("vary")) {
    p.dims.vary = detail::string_list(*n, "dims.vary", ctx);
    const toml::array& arr = *n->as_array();
    std::set<std::string> seen;
    for (std::size_t i = 0; i < p.dims.vary.size(); ++i) {
      const std::string field = fmt::format("dims.vary[{}]", i);
      if (!dim_names.contains(p.dims.vary[i]))
        ctx.fail(arr[i], field,
                 fmt::format("'{}' is not a dim (dims: {})", p.dims.vary[i],
                             fmt::join(dim_names, ", ")));
      if (!seen.insert(p.dims.vary[i]).second)
        ctx.fail(arr[i], field, fmt::format("'{}' is listed twice", p.dims.vary[i]));
    }
  }
  if (const toml::node* n = dims.get("constraints"))
    p.dims.constraints = detail::expr_list(*n, "dims.constraints", ctx);
}

void Loader::load_dim_sets(const toml::node& node, const std::string& field,
                           std::vector<DimSet>& out) {
  const toml::array& arr = detail::need_array(node, field, ctx);
  for (std::size_t i = 0; i < arr.size(); ++i)
    out.push_back(load_dim_set(arr[i], fmt::format("{}[{}]", field, i)));
}

// `[{ R = [1, 64], C = 4096 }]`: every dim of dims.public[0], each a value or [lo, hi].
void Loader::load_dim_ranges(const toml::node& node) {
  const toml::array& arr = detail::need_array(node, "dims.hidden_ranges", ctx);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string field = fmt::format("dims.hidden_ranges[{}]", i);
    const toml::table& t = detail::need_table(arr[i], field, ctx);
    DimRange range;
    range.where = ctx.at(t, field);
    for (auto&& [key, value] : t) {
      const std::string name(key.str());
      const std::string dim_field = detail::join(field, name);
      if (!dim_names.contains(name))
        ctx.fail(value, dim_field,
                 fmt::format("dim '{}' is not in dims.public[0] (dims: {})", name,
                             fmt::join(dim_names, ", ")));
      std::int64_t lo = 0, hi = 0;
      if (const toml::array* pair = value.as_array()) {
        if (pair->size() != 2)
          ctx.fail(value, dim_field, "a range is [lo, hi]: two integers");
        lo = need_integer(*pair->get(0), dim_field, ctx);
        hi = need_integer(*pair->get(1), dim_field, ctx);
      } else {
        lo = hi = need_integer(value, dim_field, ctx);
      }
      if (lo < 0 || hi < lo)
        ctx.fail(value, dim_field,
                 fmt::format("[{}, {}] is not a range of dims (0 <= lo <= hi)", lo, hi));
      range.bounds[name] = {lo, hi};
    }
    for (const auto& name : dim_names)
      if (!range.bounds.contains(name))
        ctx.fail(t, field,
                 fmt::format("missing dim '{}' (a range gives every dim: a value or [lo, hi])",
                             name));
    p.dims.hidden_ranges.push_back(std::move(range));
  }
}

// One shape set, `{ R = 4096, C = 4096 }`: dim names and non-negative integers.
DimSet Loader::load_dim_set(const toml::node& node, const std::string& set_field) {
  const toml::table& t = detail::need_table(node, set_field, ctx);
  DimSet set;
  set.where = ctx.at(t, set_field);
  for (auto&& [key, value] : t) {
    const std::string name(key.str());
    const std::string dim_field = detail::join(set_field, name);
    if (!detail::is_identifier(name))
      ctx.fail(value, dim_field, fmt::format("'{}' is not a valid dim name", name));
    const std::int64_t v = need_integer(value, dim_field, ctx);
    if (v < 0) ctx.fail(value, dim_field, fmt::format("dim {} = {} is negative", name, v));
    set.values[name] = v;
  }
  if (set.values.empty()) ctx.fail(t, set_field, "a shape set needs at least one dim");
  return set;
}

KernelSource Loader::load_kernel_source(const toml::table& t, const std::string& field) {
  detail::check_keys(t, {"source", "launch"}, field, ctx);
  KernelSource src;
  const toml::node& sn = detail::need_key(t, "source", field, ctx);
  const std::string sf = detail::join(field, "source");
  const std::string written = detail::need_string(sn, sf, ctx);
  if (written.empty()) ctx.fail(sn, sf, "the source file name is empty");
  src.text = read_named_file(written, sn, sf, field + " source");
  src.path = dir / written;
  const std::string lf = detail::join(field, "launch");
  const toml::node& ln = detail::need_key(t, "launch", field, ctx);
  const toml::array& launches = detail::need_array(ln, lf, ctx);
  if (launches.empty()) ctx.fail(ln, lf, "at least one launch is needed");
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const std::string f = fmt::format("{}[{}]", lf, i);
    src.launches.push_back(
        detail::parse_launch(detail::need_table(launches[i], f, ctx), f, scope, ctx));
  }
  return src;
}

void Loader::evaluate_sets() {
  auto each = [&](const std::vector<DimSet>& sets, std::string_view kind) {
    for (std::size_t i = 0; i < sets.size(); ++i)
      evaluate_set(sets[i], fmt::format("dims.{}[{}]", kind, i));
  };
  each(p.dims.public_sets, "public");
  each(p.dims.hidden_sets, "hidden");
  each(p.dims.host_sets, "host");
}

std::int64_t Loader::eval_in(const Expr& e, const Env& env, const std::string& desc) {
  try {
    return e.eval(env);
  } catch (const ExprError& err) {
    detail::rethrow_with(err, " for " + desc);
  }
}

void Loader::evaluate_set(const DimSet& set, const std::string& id) {
  const Env env = shape_env(p, set.values);
  const std::string desc = detail::describe_set(id, set.values);
  for (const Expr& c : p.dims.constraints)
    if (eval_in(c, env, desc) == 0)
      throw SpecError(c.where(),
                      fmt::format("constraint '{}' does not hold for {}", c.text(), desc));
  auto tensor = [&](const std::vector<Expr>& shape, const std::string& name, DType dtype,
                    const Location& where) {
    Shape s;
    try {
      s = eval_shape(shape, env, name, where);
    } catch (const ExprError& err) {
      detail::rethrow_with(err, " for " + desc);
    } catch (const SpecError& err) {
      throw SpecError(err.where(), err.bare_message() + " for " + desc);
    }
    std::int64_t bytes = 0;
    if (__builtin_mul_overflow(checked_numel(s), static_cast<std::int64_t>(dtype_size(dtype)),
                               &bytes))
      throw SpecError(where, fmt::format("shape of '{}' overflows 64 bits: {} elements of {} "
                                         "bytes for {}",
                                         name, checked_numel(s), dtype_size(dtype), desc));
  };
  for (const InputSpec& in : p.inputs)
    tensor(in.shape, in.name, in.dtype, detail::shape_where(in.shape, in.where));
  for (const OutputSpec& out : p.outputs)
    tensor(out.shape, out.name, out.dtype, detail::shape_where(out.shape, out.where));
  if (p.floor_bytes) eval_in(*p.floor_bytes, env, desc);
  if (p.floor_flops) eval_in(*p.floor_flops, env, desc);
  if (p.memory_limit) eval_in(*p.memory_limit, env, desc);
  for (const LaunchSpec& l : p.reference.launches)
    detail::check_launch_values(l, env, desc);
  // The timed baseline runs on the public sets only.
  if (p.timed_baseline && id.starts_with("dims.public")) {
    if (p.timed_baseline->plan)
      for (const LaunchSpec& l : p.timed_baseline->plan->launches)
        detail::check_launch_values(l, env, desc);
    else
      check_builtin_sizes(*p.timed_baseline, env, desc);
  }
  if (p.golden)
    for (const LaunchSpec& l : p.golden->launches)
      detail::check_launch_values(l, env, desc);
}

} // namespace detail

Problem parse_problem_text(std::string toml_text, const std::filesystem::path& dir,
                           const std::string& toml_name, const FileReader& read) {
  Loader loader;
  loader.ctx.file = toml_name;
  loader.dir = dir;
  loader.read = read ? read : FileReader(read_from_disk);
  toml::table root;
  try {
    root = toml::parse(toml_text, toml_name);
  } catch (const toml::parse_error& e) {
    Location where = loader.ctx.at(e.source(), "");
    throw SpecError(where, fmt::format("malformed TOML: {}", e.description()));
  }
  loader.hashed.emplace_back("problem.toml", toml_text);
  loader.load(root);
  loader.p.hash = detail::hash_parts(loader.hashed);
  return std::move(loader.p);
}

Problem load_problem(const std::filesystem::path& dir_or_toml) {
  std::error_code ec;
  std::filesystem::path dir = dir_or_toml, toml_path = dir_or_toml / "problem.toml";
  if (std::filesystem::is_regular_file(dir_or_toml, ec)) {
    toml_path = dir_or_toml;
    dir = dir_or_toml.parent_path();
    if (dir.empty()) dir = ".";
  }
  auto text = read_from_disk(toml_path);
  if (!text) {
    Location where;
    where.file = toml_path.string();
    throw SpecError(where, std::filesystem::exists(dir_or_toml, ec)
                               ? "cannot read problem.toml"
                               : fmt::format("no problem at '{}'", dir_or_toml.string()));
  }
  return parse_problem_text(std::move(*text), dir, toml_path.string());
}

const InputSpec* Problem::find_input(std::string_view n) const {
  for (const InputSpec& s : inputs)
    if (s.name == n) return &s;
  return nullptr;
}
const OutputSpec* Problem::find_output(std::string_view n) const {
  for (const OutputSpec& s : outputs)
    if (s.name == n) return &s;
  return nullptr;
}
const ScalarSpec* Problem::find_scalar(std::string_view n) const {
  for (const ScalarSpec& s : scalars)
    if (s.name == n) return &s;
  return nullptr;
}

DType problem_float_dtype(const Problem& problem) {
  for (const auto& in : problem.inputs)
    if (is_float(in.dtype)) return in.dtype;
  for (const auto& out : problem.outputs)
    if (is_float(out.dtype)) return out.dtype;
  return DType::f32;
}

const StageSpec* Problem::find_stage(std::string_view n) const {
  for (const StageSpec& s : stages)
    if (s.name == n) return &s;
  return nullptr;
}

const RecordedBaseline* Problem::find_baseline(std::string_view gpu, const Env& set_dims) const {
  for (const RecordedBaseline& b : baselines)
    if (b.gpu == gpu && b.dims == set_dims) return &b;
  return nullptr;
}

Env shape_env(const Problem& problem, const Env& dims) {
  Env env = dims;
  for (const ScalarSpec& s : problem.scalars)
    if (is_integer(s.dtype)) env[s.name] = s.as_int;
  return env;
}

Shape eval_shape(const std::vector<Expr>& shape, const Env& env, std::string_view tensor,
                 const Location& where) {
  Shape out;
  out.reserve(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const std::int64_t v = shape[d].eval(env);
    if (v < 0)
      throw SpecError(shape[d].where(), fmt::format("shape of '{}' has a negative dim: "
                                                    "shape[{}] = '{}' is {}",
                                                    tensor, d, shape[d].text(), v));
    out.push_back(v);
  }
  try {
    checked_numel(out);
  } catch (const SizeOverflow&) {
    throw SpecError(where,
                    fmt::format("shape of '{}' overflows 64 bits: {}", tensor, shape_string(out)));
  }
  return out;
}

Shape eval_shape(const std::vector<Expr>& shape, const Env& env) {
  const Location where = shape.empty() ? Location{} : shape.front().where();
  return eval_shape(shape, env, "tensor", where);
}

} // namespace kj
