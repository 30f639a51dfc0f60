// Pieces shared by the files of the spec module and nobody else: the small-language helpers of
// parse_fields.cpp, and the TOML reading helpers that problem.cpp and candidate.cpp both use so
// that a launch plan means the same thing, and fails with the same messages, in a problem and in
// a candidate's front-matter.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "kjudge/spec.hpp"

namespace kj::detail {

// "name", "name()" or "name(a, b)"; arguments trimmed, quoted ones keep their quotes.
struct CallForm {
  std::string name;
  std::vector<std::string> args;
  bool has_parens = false;
};
std::optional<CallForm> split_call(std::string_view text);
std::optional<double> parse_number(std::string_view text); // whole text, from_chars syntax
std::optional<std::int64_t> parse_integer(std::string_view text);

// A policy with only its kind set (and the kind's default `expected`); nullopt if unknown.
std::optional<PolicySpec> policy_of_kind(std::string_view word);
Expected default_expected(PolicySpec::Kind kind);
// Range checks of a policy's parameters (shared by the string and the table forms).
void check_policy(const PolicySpec& policy, const Location& where);

bool is_identifier(std::string_view s);
// Closest of `candidates` within a small edit distance, for "did you mean" hints.
std::optional<std::string> suggest(std::string_view word,
                                   const std::vector<std::string>& candidates);

// Where the TOML text came from: the file named in messages, and how many lines of that file
// precede the TOML (a candidate's front-matter starts inside a .cu file).
struct TomlContext {
  std::string file;
  int line_offset = 0;
  std::string top_level = "the problem"; // the root table in "missing field" messages

  Location at(const toml::source_region& src, std::string field) const;
  Location at(const toml::node& node, std::string field) const {
    return at(node.source(), std::move(field));
  }
  [[noreturn]] void fail(const toml::node& node, std::string field, const std::string& msg) const;
};

// Every key of `table` must be in `allowed`; otherwise a SpecError at the key's position:
// "unknown field 'dtyp' in input[0]; did you mean 'dtype'?". `owner` empty = the top level.
void check_keys(const toml::table& table, std::span<const std::string_view> allowed,
                const std::string& owner, const TomlContext& ctx);
inline void check_keys(const toml::table& table, std::initializer_list<std::string_view> allowed,
                       const std::string& owner, const TomlContext& ctx) {
  check_keys(table, std::span<const std::string_view>(allowed.begin(), allowed.size()), owner,
             ctx);
}

std::string_view type_name(const toml::node& node);
std::string join(std::string_view prefix, std::string_view key); // "input[0]" + "dtype"

const toml::table& need_table(const toml::node& node, const std::string& field,
                              const TomlContext& ctx);
const toml::array& need_array(const toml::node& node, const std::string& field,
                              const TomlContext& ctx);
std::string need_string(const toml::node& node, const std::string& field, const TomlContext& ctx);
bool need_bool(const toml::node& node, const std::string& field, const TomlContext& ctx);
double need_number(const toml::node& node, const std::string& field, const TomlContext& ctx);
std::int64_t need_integer(const toml::node& node, const std::string& field,
                          const TomlContext& ctx);
// A word of a closed set, read by `parse`; an unknown one is a SpecError listing `known`.
template <class T>
T need_word(const toml::node& node, const std::string& field, const TomlContext& ctx,
            std::optional<T> (*parse)(std::string_view), std::string_view known) {
  const std::string word = detail::need_string(node, field, ctx);
  if (auto v = parse(word)) return *v;
  ctx.fail(node, field, fmt::format("unknown value '{}' (known: {})", word, known));
}
// A required key; `owner` names the table for the "missing field" message.
const toml::node& need_key(const toml::table& table, std::string_view key, const std::string& owner,
                           const TomlContext& ctx);
std::vector<std::string> string_list(const toml::node& node, const std::string& field,
                                     const TomlContext& ctx);
// An expression written as a TOML string or integer.
Expr expr_value(const toml::node& node, const std::string& field, const TomlContext& ctx);
std::vector<Expr> expr_list(const toml::node& node, const std::string& field,
                            const TomlContext& ctx);

// A dtype name; an unknown one is a SpecError listing the known ones.
DType need_dtype(const toml::node& node, const std::string& field, const TomlContext& ctx);

// The names a launch plan may use.
struct NameScope {
  std::set<std::string, std::less<>> int_names; // dims and integer scalars: for expressions
  std::set<std::string, std::less<>> tensors;   // inputs, outputs, and a candidate's scratch
  std::set<std::string, std::less<>> scalars;   // every scalar, integer or float
  std::set<std::string, std::less<>> stages;    // the problem's stages, for a launch's `stage`
};

// One [[launch]] table (of a problem's reference/golden or of a candidate), names checked.
LaunchSpec parse_launch(const toml::table& table, const std::string& field, const NameScope& scope,
                        const TomlContext& ctx);

// Evaluate every expression of a launch for one shape set (every repeat index up to a cap) and
// check the grid/block limits; `set_desc` says which shape set in messages.
void check_launch_values(const LaunchSpec& launch, const Env& env, const std::string& set_desc);

// The place of a tensor's whole shape for messages about it (overflow): field "<table>.shape",
// at the line of its first entry.
Location shape_where(const std::vector<Expr>& shape, const Location& table_where);

// Rethrow an ExprError with `suffix` added to its message, keeping location and column.
[[noreturn]] void rethrow_with(const ExprError& e, const std::string& suffix);

// Hex SHA-256 over (name, bytes) parts in the given order, each framed by its lengths.
std::string hash_parts(const std::vector<std::pair<std::string, std::string>>& parts);

// "dims.public[1] (C=1000, R=128)"
std::string describe_set(const std::string& id, const Env& dims);

} // namespace kj::detail
