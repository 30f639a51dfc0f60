// The problem loader's [[baseline]] tables (problem_loader.hpp): recorded times, and the one
// baseline a bench times itself, a launch plan or a built-in (cuBLAS GEMM or GEMV) whose
// tensors, dtypes and sizes are checked here; and TimedBaseline's view of a built-in's roles.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kjudge/spec.hpp"
#include "spec/internal.hpp"
#include "spec/problem_loader.hpp"

namespace kj {

namespace {

// A built-in baseline's `args`: its tensors in the roles of cuBLAS's A, B and C, and the written
// names of the GEMM's m, n and k (empty: gemv's GEMM n, which is 1).
struct BuiltinForm {
  std::string_view name;
  std::array<std::string_view, 3> tensor_roles;
  std::array<std::string_view, 3> size_roles;
};
constexpr BuiltinForm kBuiltinForms[] = {
    {"cublas:gemm", {"a", "b", "c"}, {"m", "n", "k"}},
    {"cublas:gemv", {"a", "x", "y"}, {"m", "", "n"}},
};

const BuiltinForm* builtin_form(std::string_view builtin) {
  for (const BuiltinForm& f : kBuiltinForms)
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

namespace detail {

// [[baseline]]: recorded times, each for one GPU model and one public shape set (its dims
// given in full), so a bench on that model and shape can report against it; and at most one
// baseline the bench times itself (a launch plan or a built-in).
void Loader::load_baselines(const toml::node& node) {
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

TimedBaseline Loader::load_timed_baseline(const toml::table& t, const std::string& field) {
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
void Loader::check_builtin_sizes(const TimedBaseline& b, const Env& env, const std::string& desc) {
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

} // namespace detail

} // namespace kj
