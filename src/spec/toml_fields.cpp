// Reading typed fields out of toml++ tables with the errors a problem author needs: the file, the
// dotted field ("reference.launch[0].grid[1]") and the line and column of the value, and a
// "did you mean" for a misspelt key. The launch-plan reader lives here because a problem's
// [[reference.launch]] and a candidate's [[launch]] are the same thing and must fail alike.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "spec/internal.hpp"

namespace kj::detail {

Location TomlContext::at(const toml::source_region& src, std::string field) const {
  Location loc;
  loc.file = file;
  loc.field = std::move(field);
  if (src.begin.line > 0) {
    loc.line = static_cast<int>(src.begin.line) + line_offset;
    loc.column = static_cast<int>(src.begin.column);
  }
  return loc;
}

void TomlContext::fail(const toml::node& node, std::string field, const std::string& msg) const {
  throw SpecError(at(node, std::move(field)), msg);
}

bool is_identifier(std::string_view s) {
  if (s.empty()) return false;
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!start(s[0])) return false;
  return std::all_of(s.begin() + 1, s.end(),
                     [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

namespace {
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
} // namespace

std::optional<std::string> suggest(std::string_view word,
                                   const std::vector<std::string>& candidates) {
  // Within a third of the word (at least 1, at most 3): close enough to be a typo, far enough
  // from everything else not to suggest nonsense.
  const std::size_t limit = std::clamp<std::size_t>(word.size() / 3, 1, 3);
  std::optional<std::string> best;
  std::size_t best_d = limit + 1;
  if (word.size() > 64) return std::nullopt; // not a typo; and keeps the cost bounded
  for (const std::string& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

std::string join(std::string_view prefix, std::string_view key) {
  if (prefix.empty()) return std::string(key);
  return fmt::format("{}.{}", prefix, key);
}

void check_keys(const toml::table& table, std::span<const std::string_view> allowed,
                const std::string& owner, const TomlContext& ctx) {
  for (auto&& [key, value] : table) {
    const std::string_view k = key.str();
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::vector<std::string> options(allowed.begin(), allowed.end());
    std::string msg = owner.empty() ? fmt::format("unknown field '{}' at the top level", k)
                                    : fmt::format("unknown field '{}' in {}", k, owner);
    if (auto s = suggest(k, options))
      msg += fmt::format("; did you mean '{}'?", *s);
    else {
      std::sort(options.begin(), options.end());
      msg += fmt::format(" (known: {})", fmt::join(options, ", "));
    }
    // The key's own position: the value's may be on another line for a table.
    const toml::source_region& src = key.source().begin.line > 0 ? key.source() : value.source();
    throw SpecError(ctx.at(src, join(owner, k)), msg);
  }
}

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
  case toml::node_type::table:
    return "a table";
  case toml::node_type::array:
    return "an array";
  case toml::node_type::string:
    return "a string";
  case toml::node_type::integer:
    return "an integer";
  case toml::node_type::floating_point:
    return "a float";
  case toml::node_type::boolean:
    return "a boolean";
  case toml::node_type::date:
    return "a date";
  case toml::node_type::time:
    return "a time";
  case toml::node_type::date_time:
    return "a date-time";
  case toml::node_type::none:
    break;
  }
  return "nothing";
}

const toml::table& need_table(const toml::node& node, const std::string& field,
                              const TomlContext& ctx) {
  if (const toml::table* t = node.as_table()) return *t;
  ctx.fail(node, field, fmt::format("expected a table, got {}", type_name(node)));
}

const toml::array& need_array(const toml::node& node, const std::string& field,
                              const TomlContext& ctx) {
  if (const toml::array* a = node.as_array()) return *a;
  ctx.fail(node, field, fmt::format("expected an array, got {}", type_name(node)));
}

std::string need_string(const toml::node& node, const std::string& field, const TomlContext& ctx) {
  if (const auto* s = node.as_string()) return s->get();
  ctx.fail(node, field, fmt::format("expected a string, got {}", type_name(node)));
}

bool need_bool(const toml::node& node, const std::string& field, const TomlContext& ctx) {
  if (const auto* b = node.as_boolean()) return b->get();
  ctx.fail(node, field, fmt::format("expected true or false, got {}", type_name(node)));
}

const toml::node& need_key(const toml::table& table, std::string_view key, const std::string& owner,
                           const TomlContext& ctx) {
  if (const toml::node* n = table.get(key)) return *n;
  const std::string where = owner.empty() ? ctx.top_level : owner;
  throw SpecError(ctx.at(table, owner), fmt::format("missing field '{}' in {}", key, where));
}

std::vector<std::string> string_list(const toml::node& node, const std::string& field,
                                     const TomlContext& ctx) {
  const toml::array& arr = need_array(node, field, ctx);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr.size(); ++i)
    out.push_back(need_string(arr[i], fmt::format("{}[{}]", field, i), ctx));
  return out;
}

Expr expr_value(const toml::node& node, const std::string& field, const TomlContext& ctx) {
  const Location where = ctx.at(node, field);
  if (const auto* i = node.as_integer()) {
    // Kept as text so that messages and export show it as written.
    return Expr::parse(fmt::format("{}", i->get()), where);
  }
  if (const auto* s = node.as_string()) return Expr::parse(s->get(), where);
  ctx.fail(node, field,
           fmt::format("expected an integer expression (a string or an integer), got {}",
                       type_name(node)));
}

std::vector<Expr> expr_list(const toml::node& node, const std::string& field,
                            const TomlContext& ctx) {
  const toml::array& arr = need_array(node, field, ctx);
  std::vector<Expr> out;
  for (std::size_t i = 0; i < arr.size(); ++i)
    out.push_back(expr_value(arr[i], fmt::format("{}[{}]", field, i), ctx));
  return out;
}

DType need_dtype(const toml::node& node, const std::string& field, const TomlContext& ctx) {
  const std::string name = need_string(node, field, ctx);
  if (auto t = parse_dtype(name)) return *t;
  std::vector<std::string> known;
  for (int i = 0; i <= static_cast<int>(DType::boolean); ++i)
    known.emplace_back(dtype_name(static_cast<DType>(i)));
  std::string msg = fmt::format("unknown dtype '{}'", name);
  if (auto s = suggest(name, known)) msg += fmt::format("; did you mean '{}'?", *s);
  msg += fmt::format(" (known: {})", fmt::join(known, " "));
  ctx.fail(node, field, msg);
}

namespace {

// "softmax_rows<4>", "ns::k<T, 2>": a (qualified) identifier and balanced template arguments.
bool plausible_kernel_name(std::string_view k) {
  const std::size_t lt = k.find('<');
  std::string_view base = k.substr(0, lt);
  while (!base.empty() && base.back() == ' ')
    base.remove_suffix(1);
  std::size_t pos = 0;
  if (base.substr(0, 2) == "::") pos = 2;
  for (;;) {
    const std::size_t next = base.find("::", pos);
    if (!is_identifier(base.substr(pos, next == std::string_view::npos ? next : next - pos)))
      return false;
    if (next == std::string_view::npos) break;
    pos = next + 2;
  }
  if (lt == std::string_view::npos) return true;
  int depth = 0;
  for (std::size_t i = lt; i < k.size(); ++i) {
    if (k[i] == '<') ++depth;
    if (k[i] == '>' && --depth == 0) {
      std::string_view rest = k.substr(i + 1);
      return rest.find_first_not_of(' ') == std::string_view::npos;
    }
    if (k[i] == '"' || k[i] == ';' || k[i] == '{' || k[i] == '}') return false;
  }
  return false;
}

std::vector<Expr> dim_list(const toml::table& table, std::string_view key, const std::string& owner,
                           bool required, const TomlContext& ctx) {
  const toml::node* node = table.get(key);
  if (!node) {
    if (required) need_key(table, key, owner, ctx);
    return {};
  }
  const std::string field = join(owner, key);
  std::vector<Expr> out = expr_list(*node, field, ctx);
  if (out.empty() && !required) return out;
  if (out.empty() || out.size() > 3)
    ctx.fail(*node, field, fmt::format("expected 1 to 3 entries, got {}", out.size()));
  return out;
}

} // namespace

LaunchSpec parse_launch(const toml::table& table, const std::string& field, const NameScope& scope,
                        const TomlContext& ctx) {
  check_keys(table,
             {"kernel", "grid", "block", "shared", "cluster", "cooperative", "args", "repeat",
              "stage"},
             field, ctx);
  LaunchSpec l;
  l.where = ctx.at(table, field);
  const toml::node& kernel = need_key(table, "kernel", field, ctx);
  l.kernel = need_string(kernel, join(field, "kernel"), ctx);
  if (!plausible_kernel_name(l.kernel))
    ctx.fail(kernel, join(field, "kernel"),
             fmt::format("'{}' is not a kernel name (an identifier, optionally with template "
                         "arguments: \"softmax_rows<4>\")",
                         l.kernel));
  l.grid = dim_list(table, "grid", field, true, ctx);
  l.block = dim_list(table, "block", field, true, ctx);
  l.cluster = dim_list(table, "cluster", field, false, ctx);
  if (const toml::node* n = table.get("shared"))
    l.shared = expr_value(*n, join(field, "shared"), ctx);
  if (const toml::node* n = table.get("cooperative"))
    l.cooperative = need_bool(*n, join(field, "cooperative"), ctx);
  if (const toml::node* n = table.get("repeat"))
    l.repeat = expr_value(*n, join(field, "repeat"), ctx);
  if (const toml::node* n = table.get("stage")) {
    l.stage = need_string(*n, join(field, "stage"), ctx);
    if (!scope.stages.contains(l.stage))
      ctx.fail(*n, join(field, "stage"),
               scope.stages.empty()
                   ? fmt::format("no stage '{}': the problem declares no [[stage]]", l.stage)
                   : fmt::format("no stage '{}' (the problem's stages: {})", l.stage,
                                 fmt::join(scope.stages, ", ")));
  }

  // `i` is the repeat index; outside a repeated launch it is just an unknown name.
  std::set<std::string, std::less<>> names = scope.int_names;
  if (l.repeat) {
    l.repeat->check_names(scope.int_names);
    names.insert("i");
  }
  for (const auto* list : {&l.grid, &l.block, &l.cluster})
    for (const Expr& e : *list)
      e.check_names(names);
  l.shared.check_names(names);

  const toml::node& args_node = need_key(table, "args", field, ctx);
  const toml::array& args = need_array(args_node, join(field, "args"), ctx);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string arg_field = fmt::format("{}.args[{}]", field, i);
    const toml::node& a = args[i];
    if (a.is_integer()) {
      l.args.push_back(fmt::format("{}", a.as_integer()->get()));
      l.arg_exprs.push_back(expr_value(a, arg_field, ctx));
      continue;
    }
    if (!a.is_string())
      ctx.fail(a, arg_field,
               fmt::format("expected a tensor, scalar or dim name or an integer expression "
                           "(a string), got {}",
                           type_name(a)));
    const std::string text = a.as_string()->get();
    std::string_view trimmed = text;
    while (!trimmed.empty() && trimmed.front() == ' ')
      trimmed.remove_prefix(1);
    while (!trimmed.empty() && trimmed.back() == ' ')
      trimmed.remove_suffix(1);
    if (scope.tensors.contains(trimmed) || scope.scalars.contains(trimmed)) {
      l.args.emplace_back(trimmed);
      l.arg_exprs.emplace_back(std::nullopt);
      continue;
    }
    if (is_identifier(trimmed) && !names.contains(trimmed)) {
      // A bare unknown word is most likely a misspelt tensor: list every kind of name.
      std::vector<std::string> all(scope.tensors.begin(), scope.tensors.end());
      all.insert(all.end(), scope.scalars.begin(), scope.scalars.end());
      all.insert(all.end(), names.begin(), names.end());
      std::sort(all.begin(), all.end());
      std::string msg = fmt::format("'{}' is not a tensor, scalar or dim", trimmed);
      if (auto s = suggest(trimmed, all)) msg += fmt::format("; did you mean '{}'?", *s);
      msg += fmt::format(" (known: {})", fmt::join(all, ", "));
      ctx.fail(a, arg_field, msg);
    }
    Expr e = expr_value(a, arg_field, ctx);
    e.check_names(names);
    l.args.push_back(text);
    l.arg_exprs.emplace_back(std::move(e));
  }
  return l;
}

Location shape_where(const std::vector<Expr>& shape, const Location& table_where) {
  Location where = shape.empty() ? table_where : shape.front().where();
  where.field = join(table_where.field, "shape");
  return where;
}

[[noreturn]] void rethrow_with(const ExprError& e, const std::string& suffix) {
  throw ExprError(e.where(), e.bare_message() + suffix, e.expr_column());
}

std::string describe_set(const std::string& id, const Env& dims) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : dims)
    parts.push_back(fmt::format("{}={}", k, v));
  return fmt::format("{} ({})", id, fmt::join(parts, ", "));
}

namespace {

constexpr std::int64_t kMaxRepeat = 4096;

std::int64_t eval_in(const Expr& e, const Env& env, const std::string& set_desc) {
  try {
    return e.eval(env);
  } catch (const ExprError& err) {
    rethrow_with(err, " for " + set_desc);
  }
}

void check_dims(const std::vector<Expr>& dims, const Env& env, const std::string& set_desc,
                std::string_view what, const std::int64_t (&limits)[3],
                std::int64_t product_limit) {
  std::int64_t product = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    const std::int64_t v = eval_in(dims[d], env, set_desc);
    if (v < 1 || v > limits[d])
      throw SpecError(dims[d].where(),
                      fmt::format("{}[{}] = '{}' is {}, outside [1, {}], for {}", what, d,
                                  dims[d].text(), v, limits[d], set_desc));
    if (product_limit == 0) continue; // the grid is limited per dim only, as the hardware is
    product *= v;                     // each factor is at most 1024 here: no overflow
    if (product > product_limit)
      throw SpecError(dims[d].where(), fmt::format("{} has {} threads, over the limit {}, for {}",
                                                   what, product, product_limit, set_desc));
  }
}

} // namespace

void check_launch_values(const LaunchSpec& launch, const Env& env, const std::string& set_desc) {
  static constexpr std::int64_t grid_limits[3] = {std::numeric_limits<std::int32_t>::max(), 65535,
                                                  65535};
  static constexpr std::int64_t block_limits[3] = {1024, 1024, 64};
  static constexpr std::int64_t cluster_limits[3] = {16, 16, 16};
  std::int64_t count = 1;
  Env scoped = env;
  if (launch.repeat) {
    count = eval_in(*launch.repeat, env, set_desc);
    if (count < 0 || count > kMaxRepeat)
      throw SpecError(launch.repeat->where(),
                      fmt::format("repeat = '{}' is {}, outside [0, {}], for {}",
                                  launch.repeat->text(), count, kMaxRepeat, set_desc));
  }
  for (std::int64_t i = 0; i < count; ++i) {
    if (launch.repeat) scoped["i"] = i;
    const std::string desc = launch.repeat ? fmt::format("{}, i={}", set_desc, i) : set_desc;
    check_dims(launch.grid, scoped, desc, "grid", grid_limits, 0);
    check_dims(launch.block, scoped, desc, "block", block_limits, 1024);
    check_dims(launch.cluster, scoped, desc, "cluster", cluster_limits, 16);
    const std::int64_t shared = eval_in(launch.shared, scoped, desc);
    if (shared < 0)
      throw SpecError(launch.shared.where(), fmt::format("shared = '{}' is {}, negative, for {}",
                                                         launch.shared.text(), shared, desc));
    for (const auto& e : launch.arg_exprs)
      if (e) eval_in(*e, scoped, desc);
  }
}

} // namespace kj::detail
