// Tolerance cards read back (include/kjudge/card.hpp): the policy a card records against the
// problem's own, output by output.
#include "kjudge/card.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "kjudge/compare.hpp"
#include "kjudge/error.hpp"

namespace kj {

namespace {

// The bounds a policy allows, defaults resolved, as "larger is looser" numbers; cosine's and
// topk's agreement enter as 1 - value.
std::vector<double> looseness(const PolicySpec& p, DType t) {
  using K = PolicySpec::Kind;
  switch (p.kind) {
  case K::relative: return {p.k.value_or(is_float(t) ? default_relative_k(t) : 0)};
  case K::allclose: {
    const auto [rtol, atol] = torch_default_tolerances(t);
    return {p.rtol.value_or(rtol), p.atol.value_or(atol)};
  }
  case K::ulp: return {p.ulps};
  case K::ratio: return {p.threshold, p.max_fraction};
  case K::metric:
    if (p.metric == "rel_l2") return {p.metric_threshold};
    return {1 - p.metric_threshold, p.metric == "topk" ? -static_cast<double>(p.topk) : 0.0};
  case K::exact:
  case K::regions: return {};
  }
  return {};
}

} // namespace

std::string policy_text(const PolicySpec& p) {
  return p.text.empty() ? std::string(policy_kind_name(p.kind)) : p.text;
}

bool policy_looser(const PolicySpec& now, const PolicySpec& recorded, DType t) {
  if (now.kind != recorded.kind || now.metric != recorded.metric) return true;
  if (now.expected != recorded.expected) return true;
  const std::vector<double> a = looseness(now, t), b = looseness(recorded, t);
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] > b[i]) return true;
  return false;
}

std::optional<std::string> card_refusal(const Problem& problem) {
  const std::filesystem::path file = problem.dir / "card.toml";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) return std::nullopt;
  toml::table card;
  try {
    card = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw SpecError(Location{file.string(), "", static_cast<int>(e.source().begin.line),
                             static_cast<int>(e.source().begin.column)},
                    std::string(e.description()));
  }
  const toml::array* outputs = card["output"].as_array();
  if (!outputs) return std::nullopt;
  for (std::size_t i = 0; i < outputs->size(); ++i) {
    const toml::table* t = (*outputs)[i].as_table();
    const std::string field = fmt::format("output[{}]", i);
    const auto name = t ? (*t)["name"].value<std::string>() : std::nullopt;
    const auto policy = t ? (*t)["policy"].value<std::string>() : std::nullopt;
    if (!name || !policy)
      throw SpecError(Location{file.string(), field, 0, 0}, "a card's output needs a name and a policy");
    const OutputSpec* now = problem.find_output(*name);
    if (!now) continue; // an output the problem no longer has: nothing to loosen
    const PolicySpec recorded = parse_policy(*policy, Location{file.string(), field + ".policy", 0, 0});
    if (policy_looser(now->policy, recorded, now->dtype))
      return fmt::format("output '{}': the policy '{}' is looser than '{}' that {} records; "
                         "tighten it, write a new card (kjudge card), or pass --allow-loosen",
                         *name, policy_text(now->policy), *policy, file.string());
  }
  return std::nullopt;
}

} // namespace kj
