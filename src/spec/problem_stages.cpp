// A problem's [[stage]] tables (kj::StageSpec) and [score] formula (kj::ScoreFormula), and the
// rules that make its reference splittable at each stage: `kjudge localize` runs the reference's
// launches before a stage's cut and after it as two plans, so every stage must be written by
// exactly one reference launch and read by a later one, in the reference's dtype.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "kjudge/spec.hpp"
#include "spec/internal.hpp"
#include "spec/problem_loader.hpp"

namespace kj::detail {

namespace {

bool names_tensor(const LaunchSpec& l, const std::string& tensor) {
  return std::find(l.args.begin(), l.args.end(), tensor) != l.args.end();
}

} // namespace

void Loader::load_stages(const toml::node& node) {
  const toml::array& arr = detail::need_array(node, "stage", ctx);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string field = fmt::format("stage[{}]", i);
    const toml::table& t = detail::need_table(arr[i], field, ctx);
    detail::check_keys(t, {"name", "dtype", "shape"}, field, ctx);
    StageSpec s;
    s.where = ctx.at(t, field);
    const toml::node& name_node = detail::need_key(t, "name", field, ctx);
    s.name = detail::need_string(name_node, detail::join(field, "name"), ctx);
    names.add(s.name, field, detail::join(field, "name"), name_node);
    const toml::node& dtype_node = detail::need_key(t, "dtype", field, ctx);
    s.dtype = detail::need_dtype(dtype_node, detail::join(field, "dtype"), ctx);
    // The reference template is one template over T: a stage it writes is a T buffer.
    const DType t_dtype = problem_float_dtype(p);
    if (s.dtype != t_dtype)
      ctx.fail(dtype_node, detail::join(field, "dtype"),
               fmt::format("stage '{}' is {}, but the reference's T is {} (the dtype of the "
                           "problem's first float tensor): a stage holds T",
                           s.name, dtype_name(s.dtype), dtype_name(t_dtype)));
    s.shape = load_shape(t, field);
    scope.tensors.insert(s.name);
    scope.stages.insert(s.name);
    p.stages.push_back(std::move(s));
  }
}

// Each stage completed by one reference launch that names it, read by a later one; stages in
// the order the reference completes them; nothing the split cannot honour.
void Loader::check_stages(const toml::table& root) {
  auto refuse_in = [&](const std::optional<KernelSource>& plan, const char* what) {
    if (!plan) return;
    for (const LaunchSpec& l : plan->launches)
      if (!l.stage.empty())
        throw SpecError(l.where, fmt::format("'stage' is for the reference's launches, not the {}'s",
                                             what));
  };
  refuse_in(p.golden, "golden");
  if (p.timed_baseline) refuse_in(p.timed_baseline->plan, "baseline");
  if (p.stages.empty()) {
    for (const LaunchSpec& l : p.reference.launches)
      if (!l.stage.empty()) throw SpecError(l.where, "'stage' names no [[stage]] of the problem");
    return;
  }
  const toml::node& stage_node = *root.get("stage");
  if (p.golden)
    ctx.fail(stage_node, "stage",
             "stages need the reference's template trick (its golden is the same launches with "
             "T = double); a problem with a [golden] plan cannot declare them");
  for (const OutputSpec& out : p.outputs)
    if (out.init == InitRule::drawn)
      ctx.fail(stage_node, "stage",
               fmt::format("output '{}' is an in-out tensor: its initial values are drawn after "
                           "the inputs', so a stage made an input would change them",
                           out.name));
  const std::vector<LaunchSpec>& launches = p.reference.launches;
  std::vector<StageSpec> ordered;
  for (std::size_t k = 0; k < launches.size(); ++k) {
    const LaunchSpec& l = launches[k];
    if (l.stage.empty()) continue;
    const std::string field = fmt::format("reference.launch[{}].stage", k);
    const auto it = std::find_if(p.stages.begin(), p.stages.end(),
                                 [&](const StageSpec& s) { return s.name == l.stage; });
    if (std::any_of(ordered.begin(), ordered.end(),
                    [&](const StageSpec& s) { return s.name == l.stage; }))
      throw SpecError(l.where, fmt::format("{}: stage '{}' is completed by an earlier launch "
                                           "already: one launch completes each stage",
                                           field, l.stage));
    if (!names_tensor(l, l.stage))
      throw SpecError(l.where, fmt::format("{}: the launch completes stage '{}' but does not "
                                           "take it among its args",
                                           field, l.stage));
    const bool read_later = std::any_of(launches.begin() + static_cast<std::ptrdiff_t>(k) + 1,
                                        launches.end(),
                                        [&](const LaunchSpec& m) { return names_tensor(m, l.stage); });
    if (!read_later)
      throw SpecError(l.where, fmt::format("{}: no later launch reads stage '{}': a stage is an "
                                           "intermediate between launches",
                                           field, l.stage));
    ordered.push_back(*it);
  }
  for (const StageSpec& s : p.stages)
    if (std::none_of(ordered.begin(), ordered.end(),
                     [&](const StageSpec& o) { return o.name == s.name; }))
      throw SpecError(s.where, fmt::format("stage '{}': no reference launch completes it (give "
                                           "the launch that writes it `stage = \"{}\"`)",
                                           s.name, s.name));
  p.stages = std::move(ordered);
}

void Loader::load_score(const toml::table& t) {
  detail::check_keys(t, {"per_case", "gain", "cost"}, "score", ctx);
  ScoreFormula f;
  f.where = ctx.at(t, "score");
  const toml::node& per_case = detail::need_key(t, "per_case", "score", ctx);
  f.per_case = detail::need_string(per_case, "score.per_case", ctx);
  if (f.per_case != "speedup")
    ctx.fail(per_case, "score.per_case",
             fmt::format("unknown per-case score '{}' (known: speedup)", f.per_case));
  std::set<std::string, std::less<>> known{"N"};
  for (const char* name : kScoreCaseNames) known.insert(name);
  for (const char* key : {"gain", "cost"}) {
    const std::string field = fmt::format("score.{}", key);
    const toml::node& n = detail::need_key(t, key, "score", ctx);
    Expr e = Expr::parse_real(detail::need_string(n, field, ctx), ctx.at(n, field));
    e.check_names(known);
    (std::string_view(key) == "gain" ? f.gain : f.cost) = std::move(e);
  }
  p.score = std::move(f);
}

} // namespace kj::detail
