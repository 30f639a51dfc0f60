// The canonical case order of docs/design.md. For each shape set of the plan: public and hidden
// sets get `seeds` seeds, then the transforms x3, x0.01, x(-1) of each float input on seed 0;
// perturbed sets get `perturbed_seeds` seeds; last, on the first public set, the mean offsets
// (each float input shifted by 10 spreads), the special-value cases and the problem's adopted
// [[case]]s. The order never depends
// on anything but the problem and the options, so "the first failing case" and a case id mean
// the same thing on every machine, and an id carries the problem hash so a replay against a
// changed problem is refused rather than silently re-rolled.
#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kjudge/cases.hpp"

namespace kj {

namespace {

constexpr double transform_factors[] = {3.0, 0.01, -1.0};

constexpr SpecialKind special_kinds[] = {SpecialKind::nan,      SpecialKind::pos_inf,
                                         SpecialKind::neg_inf,  SpecialKind::neg_zero,
                                         SpecialKind::subnormal, SpecialKind::dtype_max};

// Why x -> factor * x leaves the domain, or nullopt when it stays inside. A negative factor
// flips the sign every non-`any` domain fixes; a factor above 1 pushes `unit` past 1; a factor
// in (0, 1] keeps every domain.
std::optional<std::string> transform_leaves(Domain domain, double factor) {
  if (domain == Domain::any) return std::nullopt;
  if (factor < 0 || (factor > 1 && domain == Domain::unit)) {
    return fmt::format("leaves domain {}", domain_name(domain));
  }
  return std::nullopt;
}

std::optional<std::string> special_refused(const InputSpec& in, SpecialKind kind) {
  if (!domain_admits(in.domain, kind)) {
    return fmt::format("domain {} does not admit {}", domain_name(in.domain),
                       special_kind_name(kind));
  }
  if (!dtype_admits(in.dtype, kind)) {
    return fmt::format("{} cannot hold {}", dtype_name(in.dtype), special_kind_name(kind));
  }
  if (in.specials_given &&
      std::find(in.specials.begin(), in.specials.end(), special_kind_name(kind)) ==
          in.specials.end())
    return fmt::format("not in the specials of input '{}'", in.name);
  return std::nullopt;
}

std::string case_id_shape() { return "<problem-hash8>:<shape-set>:<seed>:<transform>"; }

}  // namespace

std::string case_id(const Problem& problem, const ShapeSet& set, std::uint64_t seed,
                    std::string_view transform) {
  return fmt::format("{}:{}:{}:{}", problem.short_hash(), set.id, seed, transform);
}

std::string Case::case_class() const {
  if (special) return "special";
  if (shapes.perturbation) return "perturbed";
  return shapes.hidden ? "hidden" : "public";
}

CasePlan enumerate_cases(const Problem& problem, const CaseOptions& options) {
  // Without hidden sets the plan is drawn as if they did not exist: dropping them afterwards
  // would also drop the public perturbations that duplicate a hidden set, and the missing ids
  // would tell a candidate's author the hidden dims.
  ShapePlan shapes;
  if (options.include_hidden) {
    shapes = plan_shapes(problem, options.max_perturbed);
  } else {
    Problem public_only = problem;
    public_only.dims.hidden_sets.clear();
    shapes = plan_shapes(public_only, options.max_perturbed);
  }

  CasePlan plan;
  // Drawn sets come after every declared and perturbed one, so the rest of the plan (and every
  // id in it) is the same with any secret or none.
  const auto& ranges = problem.dims.hidden_ranges;
  if (options.include_hidden && !ranges.empty()) {
    if (!options.secret) {
      plan.skipped.push_back(CaseSkip{
          fmt::format("{} hidden shape sets drawn from dims.hidden_ranges",
                      ranges.size() * static_cast<std::size_t>(problem.dims.hidden_draws)),
          "no secret: give --secret-file or KJUDGE_SECRET"});
    } else {
      if (options.secret->size() < kMinSecretBytes)
        throw SpecError({"", "secret", 0, 0},
                        fmt::format("the secret is {} bytes; hidden shapes need at least {}",
                                    options.secret->size(), kMinSecretBytes));
      DrawnSets drawn = draw_hidden_sets(problem, *options.secret);
      for (ShapeSet& s : drawn.sets) shapes.sets.push_back(std::move(s));
      for (std::string& f : drawn.failed)
        plan.skipped.push_back(CaseSkip{std::move(f), "hidden range"});
    }
  }
  auto push = [&](const ShapeSet& set, std::uint64_t seed, Transform transform,
                  std::optional<SpecialValues> special, std::string_view label) {
    Case c;
    c.id = case_id(problem, set, seed, label);
    c.shapes = set;
    c.seed = seed;
    c.transform = std::move(transform);
    c.special = std::move(special);
    plan.cases.push_back(std::move(c));
  };

  const Transform identity{};
  for (const ShapeSet& set : shapes.sets) {
    if (set.perturbation) {
      for (int s = 0; s < options.perturbed_seeds; ++s) {
        push(set, static_cast<std::uint64_t>(s), identity, std::nullopt, identity.label());
      }
      continue;
    }
    for (int s = 0; s < options.seeds; ++s) {
      push(set, static_cast<std::uint64_t>(s), identity, std::nullopt, identity.label());
    }
    if (!options.transforms) continue;
    for (const InputSpec& in : problem.inputs) {
      if (!is_float(in.dtype)) continue;
      for (const double factor : transform_factors) {
        const Transform t{in.name, factor};
        if (auto why = transform_leaves(in.domain, factor)) {
          plan.skipped.push_back(
              CaseSkip{fmt::format("{} {} on {}", set.id, t.label(), in.name), *why});
          continue;
        }
        push(set, 0, t, std::nullopt, t.label());
      }
    }
  }

  const auto first_unperturbed_public = std::find_if(
      shapes.sets.begin(), shapes.sets.end(),
      [](const ShapeSet& s) { return !s.hidden && !s.perturbation; });
  // A mean far from zero against the spread: one-pass variances (E[x^2] - E[x]^2) and sums that
  // cancel lose their digits here and nowhere else (mutation campaigns found no scaling that
  // shows it). Only where the domain keeps a positive shift and the spread is known.
  if (options.transforms && options.mean_offsets &&
      first_unperturbed_public != shapes.sets.end()) {
    for (const InputSpec& in : problem.inputs) {
      const std::optional<double> spread = distribution_spread(in.dist);
      if (!is_float(in.dtype) || !spread) continue;
      const Transform t{in.name, 1.0, kMeanOffsetSpreads * *spread};
      if (in.domain == Domain::unit) {
        plan.skipped.push_back(CaseSkip{
            fmt::format("{} {} on {}", first_unperturbed_public->id, t.label(), in.name),
            "leaves domain unit"});
        continue;
      }
      push(*first_unperturbed_public, 0, t, std::nullopt, t.label());
    }
  }

  if (options.special_values) {
    const auto first_public = std::find_if(shapes.sets.begin(), shapes.sets.end(),
                                           [](const ShapeSet& s) {
                                             return !s.hidden && !s.perturbation;
                                           });
    const bool any_float = std::any_of(problem.inputs.begin(), problem.inputs.end(),
                                       [](const InputSpec& in) { return is_float(in.dtype); });
    if (first_public == shapes.sets.end()) {
      if (any_float) plan.skipped.push_back({"special values", "the problem has no public shape set"});
    } else {
      for (const InputSpec& in : problem.inputs) {
        if (!is_float(in.dtype)) continue;
        // The kinds refused for one reason (the input's specials leave them out) are one line.
        std::vector<std::pair<std::string, std::vector<std::string>>> refused;
        for (const SpecialKind kind : special_kinds) {
          const std::string label = fmt::format("{}:{}", in.name, special_kind_name(kind));
          if (auto why = special_refused(in, kind)) {
            auto same = std::find_if(refused.begin(), refused.end(),
                                     [&](const auto& r) { return r.first == *why; });
            if (same == refused.end()) same = refused.insert(refused.end(), {*why, {}});
            same->second.emplace_back(special_kind_name(kind));
            continue;
          }
          push(*first_public, 0, identity, SpecialValues{in.name, kind}, label);
        }
        for (const auto& [why, kinds] : refused)
          plan.skipped.push_back(CaseSkip{
              kinds.size() == 1
                  ? fmt::format("{} {}:{}", first_public->id, in.name, kinds.front())
                  : fmt::format("{} {}:{{{}}}", first_public->id, in.name, fmt::join(kinds, ", ")),
              why});
      }
    }
  }

  // The problem's adopted cases, where the default transforms are drawn.
  if (options.transforms && first_unperturbed_public != shapes.sets.end())
    for (const AdoptedCase& a : problem.adopted_cases) {
      const Transform t = a.input.empty() ? Transform{} : Transform{a.input, a.scale, a.offset};
      push(*first_unperturbed_public, a.seed, t, std::nullopt, t.label());
    }
  return plan;
}

std::vector<Case> witness_cases(const Problem& problem, const CasePlan& plan, int seeds) {
  std::vector<Case> out;
  const auto at = std::find_if(plan.cases.begin(), plan.cases.end(), [](const Case& c) {
    return !c.shapes.perturbation && c.transform.input.empty() && !c.special;
  });
  if (at == plan.cases.end()) return out;
  const Case& first = *at;
  for (int s = 0; s < seeds; ++s) {
    Case c = first;
    c.seed = static_cast<std::uint64_t>(s);
    c.transform = Transform{};
    c.special.reset();
    c.id = case_id(problem, c.shapes, c.seed, c.transform.label());
    out.push_back(std::move(c));
  }
  for (const InputSpec& in : problem.inputs) {
    const std::optional<double> spread = distribution_spread(in.dist);
    if (!is_float(in.dtype) || !spread || in.domain == Domain::unit) continue;
    std::vector<double> offsets{kMeanOffsetSpreads * *spread};
    if (in.domain == Domain::any) offsets.push_back(-8 * *spread - std::max(in.dist.a, 0.0));
    for (const double offset : offsets) {
      Case c = first;
      c.seed = 0;
      c.special.reset();
      c.transform = Transform{in.name, 1.0, offset};
      c.id = case_id(problem, c.shapes, 0, c.transform.label());
      out.push_back(std::move(c));
    }
  }
  return out;
}

const Case& find_case(const CasePlan& plan, const Problem& problem, std::string_view id,
                      const std::optional<std::string>& secret) {
  const Location where{"", "case id", 0, 0};
  // <hash>:<set>:<seed>:<transform>; the transform of a special case has a colon of its own.
  const auto c1 = id.find(':');
  const auto c2 = c1 == std::string_view::npos ? c1 : id.find(':', c1 + 1);
  const auto c3 = c2 == std::string_view::npos ? c2 : id.find(':', c2 + 1);
  std::uint64_t seed = 0;
  const bool malformed = [&] {
    if (c3 == std::string_view::npos) return true;
    if (c1 == 0 || c2 == c1 + 1 || c3 == c2 + 1 || c3 + 1 == id.size()) return true;
    const std::string_view digits = id.substr(c2 + 1, c3 - c2 - 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    return ec != std::errc{} || end != digits.data() + digits.size();
  }();
  if (malformed) {
    throw SpecError(where, fmt::format("malformed case id '{}': expected {}", id, case_id_shape()));
  }
  const std::string_view hash = id.substr(0, c1);
  if (hash != problem.short_hash()) {
    throw SpecError(where, fmt::format("replay refused: case id is for problem hash {}, this "
                                       "problem is {} (the problem changed since the id was "
                                       "printed)",
                                       hash, problem.short_hash()));
  }
  const auto it = std::find_if(plan.cases.begin(), plan.cases.end(),
                               [&](const Case& c) { return c.id == id; });
  const std::string_view set = id.substr(c1 + 1, c2 - c1 - 1);
  if (it == plan.cases.end() && set.starts_with("drawn") && set.find('@') != set.npos) {
    const std::string_view tag = set.substr(set.find('@') + 1);
    const std::string secret_note = secret ? "and this secret's tag is " + secret_tag(*secret)
                                           : "and no secret was given";
    throw SpecError(where, fmt::format("replay refused: case '{}' was drawn with a secret (tag {}) "
                                       "{}; it replays only with that secret",
                                       id, tag, secret_note));
  }
  if (it == plan.cases.end()) {
    throw SpecError(
        where,
        fmt::format("no case '{}' in the {} cases of problem '{}'; `kjudge cases {}` lists "
                    "the valid ids ({}, e.g. '{}')",
                    id, plan.cases.size(), problem.name,
                    problem.dir.empty() ? std::string("<problem>") : problem.dir.string(),
                    case_id_shape(), plan.cases.empty() ? std::string() : plan.cases.front().id));
  }
  return *it;
}

}  // namespace kj
