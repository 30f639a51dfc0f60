// The loader of problem.toml behind load_problem and parse_problem_text, shared by the files that
// define its parts: problem.cpp (the top level, the dims, the kernel sources and the evaluation
// of every shape set), problem_tensors.cpp (scalars, inputs, outputs and their policies) and
// problem_baseline.cpp (the baselines).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kjudge/spec.hpp"
#include "spec/internal.hpp"

namespace kj::detail {

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

struct Loader {
  TomlContext ctx;
  std::filesystem::path dir;
  FileReader read;
  Problem p;
  NameRegistry names{ctx};
  std::set<std::string, std::less<>> dim_names;
  NameScope scope;
  std::vector<std::pair<std::string, std::string>> hashed; // (name, bytes), in hash order
  std::vector<const toml::node*> input_nodes; // the dist node of each input, for messages

  // problem.cpp
  std::string read_named_file(const std::string& written, const toml::node& node,
                              const std::string& field, std::string_view what);
  void load(const toml::table& root);
  const toml::table& need_table_key(const toml::table& t, std::string_view key,
                                    const std::string& owner);
  std::optional<Expr> floor_expr(const toml::table& root, std::string_view key);
  void load_dims(const toml::table& dims);
  void load_dim_sets(const toml::node& node, const std::string& field, std::vector<DimSet>& out);
  void load_dim_ranges(const toml::node& node);
  DimSet load_dim_set(const toml::node& node, const std::string& set_field);
  KernelSource load_kernel_source(const toml::table& t, const std::string& field);
  void evaluate_sets();
  std::int64_t eval_in(const Expr& e, const Env& env, const std::string& desc);
  void evaluate_set(const DimSet& set, const std::string& id);

  // problem_tensors.cpp
  void load_scalars(const toml::node& node);
  void parse_scalar_value(ScalarSpec& s, const toml::node& v, const std::string& field);
  std::vector<Expr> load_shape(const toml::table& t, const std::string& field);
  void load_inputs(const toml::node& node);
  PolicySpec load_policy_table(const toml::table& t, const std::string& field);
  void load_outputs(const toml::node& node);
  void load_adopted_cases(const toml::node& node);
  void load_stages(const toml::node& node);
  void load_score(const toml::table& t);
  void check_stages(const toml::table& root);
  void load_output_init(OutputSpec& out, const toml::node& node, const std::string& field);
  void check_policy_fits_tier(const OutputSpec& out, const toml::node& node,
                              const std::string& field);

  // problem_baseline.cpp
  void load_baselines(const toml::node& node);
  TimedBaseline load_timed_baseline(const toml::table& t, const std::string& field);
  void check_builtin_sizes(const TimedBaseline& b, const Env& env, const std::string& desc);
};

} // namespace kj::detail
