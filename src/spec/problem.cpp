// load_problem: problem.toml (docs/design.md "Problem format") into a checked Problem. Everything
// that can be known without a compiler is checked here, so later stages can trust the value:
// unknown keys, types, names and their uniqueness, expression names, dtypes, and every expression
// of every declared shape set evaluated once (shapes, floors, constraints, launch plans), so a
// division by zero or an overflowing shape is a load error with a place, not a judge crash.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "kjudge/spec.hpp"
#include "spec/internal.hpp"

namespace kj {

using detail::TomlContext;

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

// Every name of a problem lives in one namespace: launch args and expressions look names up
// without saying which kind they mean.
class NameRegistry {
public:
  NameRegistry(const TomlContext& ctx) : ctx_(ctx) {}
  // `owner` names the table in messages ("input[0]"); the error points at `field` of `node`.
  void add(const std::string& name, const std::string& owner, const std::string& field,
           const toml::node& node) {
    if (!detail::is_identifier(name))
      ctx_.fail(node, field,
                fmt::format("'{}' is not a valid name (letters, digits and _, not starting with "
                            "a digit)",
                            name));
    if (name == "i")
      ctx_.fail(node, field, "'i' is reserved: it is the index of a repeated launch");
    auto [it, fresh] = owners_.emplace(name, owner);
    if (!fresh)
      ctx_.fail(node, field, fmt::format("name '{}' is already used by {}", name, it->second));
  }

private:
  const TomlContext& ctx_;
  std::map<std::string, std::string> owners_;
};

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

template <class T>
T need_word(const toml::node& node, const std::string& field, const TomlContext& ctx,
            std::optional<T> (*parse)(std::string_view), std::string_view known) {
  const std::string word = detail::need_string(node, field, ctx);
  if (auto v = parse(word)) return *v;
  ctx.fail(node, field, fmt::format("unknown value '{}' (known: {})", word, known));
}

// A built-in baseline's `args`: its tensors in the roles of cuBLAS's A, B and C, and the written
// names of the GEMM's m, n and k (empty: gemv's GEMM n, which is 1).
struct BuiltinForm {
  std::string_view name;
  std::array<std::string_view, 3> tensor_roles;
  std::array<std::string_view, 3> size_roles;
};
constexpr BuiltinForm k_builtin_forms[] = {
    {"cublas:gemm", {"a", "b", "c"}, {"m", "n", "k"}},
    {"cublas:gemv", {"a", "x", "y"}, {"m", "", "n"}},
};

const BuiltinForm* builtin_form(std::string_view builtin) {
  for (const BuiltinForm& f : k_builtin_forms)
    if (f.name == builtin) return &f;
  return nullptr;
}

const BuiltinForm& known_form(const TimedBaseline& b) {
  const BuiltinForm* form = builtin_form(b.builtin);
  KJ_EXPECTS(form != nullptr, "a built-in baseline was checked at load");
  return *form;
}

} // namespace

const std::string& TimedBaseline::output_tensor() const {
  return tensors.at(std::string(known_form(*this).tensor_roles[2]));
}

GemmCall TimedBaseline::gemm_call(const Env& dims) const {
  const BuiltinForm& form = known_form(*this);
  GemmCall call;
  for (std::size_t r = 0; r < 3; ++r) {
    call.roles[r] = std::string(form.tensor_roles[r]);
    call.tensors[r] = tensors.at(call.roles[r]);
  }
  std::array<std::int64_t, 3> mnk{};
  for (std::size_t s = 0; s < 3; ++s)
    mnk[s] = form.size_roles[s].empty() ? 1 : sizes.at(std::string(form.size_roles[s])).eval(dims);
  call.m = mnk[0];
  call.n = mnk[1];
  call.k = mnk[2];
  return call;
}

namespace {

struct Loader {
  TomlContext ctx;
  std::filesystem::path dir;
  FileReader read;
  Problem p;
  NameRegistry names{ctx};
  std::set<std::string, std::less<>> dim_names;
  detail::NameScope scope;
  std::vector<std::pair<std::string, std::string>> hashed; // (name, bytes), in hash order

  std::string read_named_file(const std::string& written, const toml::node& node,
                              const std::string& field, std::string_view what) {
    const std::filesystem::path full = dir / written;
    auto bytes = read(full);
    if (!bytes)
      ctx.fail(node, field,
               fmt::format("cannot read {} '{}' (looked for {})", what, written, full.string()));
    hashed.emplace_back(written, *bytes);
    return *bytes;
  }

  void load(const toml::table& root) {
    detail::check_keys(root,
                       {"name", "summary", "tier", "nan", "signed_zero", "nondeterministic",
                        "floor_bytes", "floor_flops", "memory_limit", "allowed_options", "forbid",
                        "dims", "input", "scalar", "output", "reference", "golden", "baseline"},
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
    for (const InputSpec& in : p.inputs)
      scope.tensors.insert(in.name);
    for (const OutputSpec& out : p.outputs)
      scope.tensors.insert(out.name);

    // The hash order is fixed: problem.toml (added by the caller), reference, golden, then the
    // file() distributions in input order.
    p.reference = load_kernel_source(need_table_key(root, "reference", ""), "reference");
    if (const toml::node* n = root.get("golden"))
      p.golden = load_kernel_source(detail::need_table(*n, "golden", ctx), "golden");
    if (const toml::node* n = root.get("baseline")) load_baselines(*n);
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      InputSpec& in = p.inputs[i];
      if (in.dist.kind != Distribution::Kind::file) continue;
      const toml::node& node = *input_nodes[i];
      read_named_file(in.dist.file, node, fmt::format("input[{}].dist", i), "data file");
      in.dist.file = (dir / in.dist.file).string();
    }

    evaluate_sets();
  }

  std::vector<const toml::node*> input_nodes; // the dist node of each input, for messages

  const toml::table& need_table_key(const toml::table& t, std::string_view key,
                                    const std::string& owner) {
    return detail::need_table(detail::need_key(t, key, owner, ctx), detail::join(owner, key), ctx);
  }

  // An optional integer expression of the dims (floor_bytes, floor_flops, memory_limit); an
  // empty string is none.
  std::optional<Expr> floor_expr(const toml::table& root, std::string_view key) {
    const toml::node* n = root.get(key);
    if (!n) return std::nullopt;
    if (const auto* s = n->as_string()) {
      if (s->get().find_first_not_of(" \t") == std::string::npos) return std::nullopt;
    }
    Expr e = detail::expr_value(*n, std::string(key), ctx);
    e.check_names(scope.int_names);
    return e;
  }

  void load_dims(const toml::table& dims) {
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

  // [[baseline]]: recorded times, each for one GPU model and one public shape set (its dims
  // given in full), so a bench on that model and shape can report against it; and at most one
  // baseline the bench times itself (a launch plan or a built-in).
  void load_baselines(const toml::node& node) {
    const toml::array& arr = detail::need_array(node, "baseline", ctx);
    for (std::size_t i = 0; i < arr.size(); ++i) {
      const std::string field = fmt::format("baseline[{}]", i);
      const toml::table& t = detail::need_table(arr[i], field, ctx);
      if (t.contains("source") || t.contains("builtin")) {
        if (p.timed_baseline)
          ctx.fail(t, field, fmt::format("a second timed baseline (the first is '{}'): a bench "
                                         "times at most one",
                                         p.timed_baseline->name));
        p.timed_baseline = load_timed_baseline(t, field);
        continue;
      }
      detail::check_keys(t, {"name", "gpu", "dims", "ms"}, field, ctx);
      RecordedBaseline b;
      b.where = ctx.at(t, field);
      for (auto [key, value] : {std::pair{"name", &b.name}, std::pair{"gpu", &b.gpu}}) {
        const toml::node& n = detail::need_key(t, key, field, ctx);
        *value = detail::need_string(n, detail::join(field, key), ctx);
        if (value->empty()) ctx.fail(n, detail::join(field, key), "must not be empty");
      }
      const toml::node& ms = detail::need_key(t, "ms", field, ctx);
      b.ms = need_number(ms, detail::join(field, "ms"), ctx);
      if (!(b.ms > 0) || !std::isfinite(b.ms))
        ctx.fail(ms, detail::join(field, "ms"), "a time must be a positive number of milliseconds");
      const toml::node& dims_node = detail::need_key(t, "dims", field, ctx);
      b.dims = load_dim_set(dims_node, detail::join(field, "dims")).values;
      const bool is_public =
          std::any_of(p.dims.public_sets.begin(), p.dims.public_sets.end(),
                      [&](const DimSet& set) { return set.values == b.dims; });
      if (!is_public)
        ctx.fail(dims_node, detail::join(field, "dims"),
                 "not one of the public shape sets (a recorded baseline is for a public shape "
                 "set, every dim given)");
      for (const RecordedBaseline& other : p.baselines)
        if (other.gpu == b.gpu && other.dims == b.dims)
          ctx.fail(t, field, fmt::format("a second baseline for '{}' on these dims", b.gpu));
      p.baselines.push_back(std::move(b));
    }
  }

  TimedBaseline load_timed_baseline(const toml::table& t, const std::string& field) {
    TimedBaseline b;
    b.where = ctx.at(t, field);
    const toml::node& name = detail::need_key(t, "name", field, ctx);
    b.name = detail::need_string(name, detail::join(field, "name"), ctx);
    if (b.name.empty()) ctx.fail(name, detail::join(field, "name"), "must not be empty");
    if (t.contains("source")) {
      if (t.contains("builtin"))
        ctx.fail(t, field, "give either 'source' (a launch plan) or 'builtin', not both");
      toml::table plan_keys = t;
      plan_keys.erase("name");
      b.plan = load_kernel_source(plan_keys, field);
      return b;
    }
    detail::check_keys(t, {"name", "builtin", "args"}, field, ctx);
    const toml::node& builtin = detail::need_key(t, "builtin", field, ctx);
    b.builtin = detail::need_string(builtin, detail::join(field, "builtin"), ctx);
    const BuiltinForm* form = builtin_form(b.builtin);
    if (!form)
      ctx.fail(builtin, detail::join(field, "builtin"),
               fmt::format("unknown built-in '{}' (known: cublas:gemm, cublas:gemv)", b.builtin));
    const std::string args_field = detail::join(field, "args");
    const toml::table& args = need_table_key(t, "args", field);
    std::vector<std::string_view> known(form->tensor_roles.begin(), form->tensor_roles.end());
    for (std::string_view role : form->size_roles)
      if (!role.empty()) known.push_back(role);
    detail::check_keys(args, known, args_field, ctx);
    // The tensors: A and B inputs, C an output.
    std::vector<DType> dtypes;
    for (std::size_t r = 0; r < form->tensor_roles.size(); ++r) {
      const std::string role(form->tensor_roles[r]);
      const std::string f = detail::join(args_field, role);
      const toml::node& n = detail::need_key(args, role, args_field, ctx);
      const std::string tensor = detail::need_string(n, f, ctx);
      const bool is_output = r + 1 == form->tensor_roles.size();
      std::optional<DType> dtype;
      if (is_output) {
        if (const OutputSpec* o = p.find_output(tensor)) dtype = o->dtype;
      } else if (const InputSpec* in = p.find_input(tensor)) {
        dtype = in->dtype;
      }
      if (!dtype)
        ctx.fail(n, f, fmt::format("'{}' is not one of the problem's {}", tensor,
                                   is_output ? "outputs" : "inputs"));
      dtypes.push_back(*dtype);
      b.tensors[role] = tensor;
    }
    const DType operand = dtypes[0], result = dtypes[2];
    const bool half = operand == DType::f16 || operand == DType::bf16;
    const bool supported = dtypes[1] == operand &&
                           (operand == DType::f32 || operand == DType::f64 || half) &&
                           (result == operand || (half && result == DType::f32));
    if (!supported)
      ctx.fail(args, args_field,
               fmt::format("{} takes f32 or f64 throughout, or f16 or bf16 operands with an "
                           "output of the same dtype or f32 (here {}, {} -> {})",
                           b.builtin, dtype_name(dtypes[0]), dtype_name(dtypes[1]),
                           dtype_name(result)));
    for (std::string_view written : form->size_roles) {
      if (written.empty()) continue;
      const std::string role(written);
      const toml::node& n = detail::need_key(args, role, args_field, ctx);
      Expr e = detail::expr_value(n, detail::join(args_field, role), ctx);
      e.check_names(dim_names);
      b.sizes.emplace(role, std::move(e));
    }
    return b;
  }

  // A built-in baseline's sizes on a public shape set must match the tensors it is given.
  void check_builtin_sizes(const TimedBaseline& b, const Env& env, const std::string& desc) {
    for (const auto& [role, e] : b.sizes)
      if (const std::int64_t value = eval_in(e, env, desc); value < 1)
        throw SpecError(e.where(),
                        fmt::format("baseline '{}': {} = {} for {}: a size must be at least 1",
                                    b.name, role, value, desc));
    // Elements each operand must hold: A is m x k, B k x n, C m x n.
    const GemmCall call = b.gemm_call(env);
    const std::array<std::int64_t, 3> want = {call.m * call.k, call.k * call.n, call.m * call.n};
    for (std::size_t r = 0; r < call.tensors.size(); ++r) {
      const std::string& tensor = call.tensors[r];
      const std::vector<Expr>* shape = nullptr;
      if (const InputSpec* in = p.find_input(tensor)) shape = &in->shape;
      if (const OutputSpec* o = p.find_output(tensor)) shape = &o->shape;
      const std::int64_t numel = checked_numel(eval_shape(*shape, env, tensor, b.where));
      if (numel != want[r])
        throw SpecError(b.where, fmt::format("baseline '{}': {} '{}' holds {} elements where {} "
                                             "needs {} for {}",
                                             b.name, call.roles[r], tensor, numel, b.builtin,
                                             want[r], desc));
    }
  }

  void load_dim_sets(const toml::node& node, const std::string& field, std::vector<DimSet>& out) {
    const toml::array& arr = detail::need_array(node, field, ctx);
    for (std::size_t i = 0; i < arr.size(); ++i)
      out.push_back(load_dim_set(arr[i], fmt::format("{}[{}]", field, i)));
  }

  // `[{ R = [1, 64], C = 4096 }]`: every dim of dims.public[0], each a value or [lo, hi].
  void load_dim_ranges(const toml::node& node) {
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
  DimSet load_dim_set(const toml::node& node, const std::string& set_field) {
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

  void load_scalars(const toml::node& node) {
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

  void parse_scalar_value(ScalarSpec& s, const toml::node& v, const std::string& field) {
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

  std::vector<Expr> load_shape(const toml::table& t, const std::string& field) {
    const std::string shape_field = detail::join(field, "shape");
    std::vector<Expr> shape =
        detail::expr_list(detail::need_key(t, "shape", field, ctx), shape_field, ctx);
    for (const Expr& e : shape)
      e.check_names(scope.int_names);
    return shape;
  }

  void load_inputs(const toml::node& node) {
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

  PolicySpec load_policy_table(const toml::table& t, const std::string& field) {
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

  void load_outputs(const toml::node& node) {
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
      if (const toml::node* n = t.get("init"))
        out.init = need_word<InitRule>(*n, detail::join(field, "init"), ctx, parse_init_rule,
                                       "poison, zero");
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

  void check_policy_fits_tier(const OutputSpec& out, const toml::node& node,
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

  KernelSource load_kernel_source(const toml::table& t, const std::string& field) {
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

  void evaluate_sets() {
    auto each = [&](const std::vector<DimSet>& sets, std::string_view kind) {
      for (std::size_t i = 0; i < sets.size(); ++i)
        evaluate_set(sets[i], fmt::format("dims.{}[{}]", kind, i));
    };
    each(p.dims.public_sets, "public");
    each(p.dims.hidden_sets, "hidden");
    each(p.dims.host_sets, "host");
  }

  std::int64_t eval_in(const Expr& e, const Env& env, const std::string& desc) {
    try {
      return e.eval(env);
    } catch (const ExprError& err) {
      detail::rethrow_with(err, " for " + desc);
    }
  }

  void evaluate_set(const DimSet& set, const std::string& id) {
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
};

} // namespace

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
  } catch (const std::overflow_error&) {
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
