// The numbers of a finished mutation campaign (include/kjudge/mutate.hpp, "Analysis";
// ../shared/reference/mutation-operators.md, method steps 6 and 7): each checker's escape rate
// with a bootstrap interval, and the greedy set cover over the kill matrix that says how few
// inputs catch what the whole pool catches, against same-size random suites and on held-out
// mutants and problems. Everything here is a pure function of the Campaign and fixed seeds, so
// two reports of one campaign agree to the last digit.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include "kjudge/mutate.hpp"

namespace kj::mutate {

std::string_view status_name(Status s) {
  switch (s) {
  case Status::killed: return "killed";
  case Status::not_killable: return "not_killable";
  case Status::compile_error: return "compile_error";
  case Status::equivalent: return "equivalent";
  case Status::duplicate: return "duplicate";
  case Status::not_run: return "not_run";
  }
  return "unknown";
}

namespace {

// An index in [0, n) from one draw. std::uniform_int_distribution is not specified bit for bit
// (libstdc++ and libc++ give different streams), and the reports must not change with the
// standard library; the modulo bias of a 64-bit draw is below 2^-40 for any pool we build.
std::size_t draw_index(std::mt19937_64& rng, std::size_t n) {
  return static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(n));
}

// The q-quantile of sorted values, linearly interpolated between the two nearest ranks
// (Hyndman and Fan's type 7, what numpy and R give by default).
double quantile_of_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double h = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

} // namespace

Rate bootstrap_rate(const std::vector<bool>& outcomes, int resamples, std::uint64_t seed) {
  Rate r;
  r.total = static_cast<std::int64_t>(outcomes.size());
  r.hits = static_cast<std::int64_t>(std::count(outcomes.begin(), outcomes.end(), true));
  if (r.total == 0) return r;
  r.rate = static_cast<double>(r.hits) / static_cast<double>(r.total);
  if (resamples <= 0) {
    r.low = r.high = r.rate;
    return r;
  }
  std::mt19937_64 rng(seed);
  std::vector<double> rates;
  rates.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    std::int64_t hits = 0;
    for (std::size_t j = 0; j < outcomes.size(); ++j)
      hits += outcomes[draw_index(rng, outcomes.size())] ? 1 : 0;
    rates.push_back(static_cast<double>(hits) / static_cast<double>(r.total));
  }
  std::sort(rates.begin(), rates.end());
  r.low = quantile_of_sorted(rates, 0.025);
  r.high = quantile_of_sorted(rates, 0.975);
  return r;
}

std::vector<EscapeRates> escape_rates(const Campaign& c) {
  std::vector<EscapeRates> all;
  for (const std::string& checker : c.checkers) {
    std::vector<bool> overall;
    std::map<Category, std::vector<bool>> by_category;
    for (const Category cat : kScoredCategories) by_category[cat];
    for (const MutantResult& m : c.mutants) {
      // Only mutants the strong oracle exposed can escape: a mutant nothing kills may be
      // equivalent, and counting it would charge the checker for the pool's blind spot.
      if (m.status != Status::killed || m.mutant.category == Category::control) continue;
      // A checker without a verdict on a mutant (it did not run there) is not scored on it,
      // rather than being scored as if it had rejected it.
      const auto verdict = m.accepted.find(checker);
      if (verdict == m.accepted.end()) continue;
      overall.push_back(verdict->second);
      by_category[m.mutant.category].push_back(verdict->second);
    }
    EscapeRates e;
    e.checker = checker;
    e.overall = bootstrap_rate(overall);
    for (const auto& [cat, outcomes] : by_category) e.by_category[cat] = bootstrap_rate(outcomes);
    for (const ControlResult& ctl : c.controls) {
      if (!ctl.broken.empty()) continue; // a faulty rewrite, not a correct kernel
      const auto verdict = ctl.accepted.find(checker);
      if (verdict == ctl.accepted.end()) continue;
      ++e.controls;
      if (!verdict->second) ++e.false_rejections;
    }
    all.push_back(std::move(e));
  }
  return all;
}

namespace {

// ---- The kill matrix, as set cover sees it -------------------------------------------------

// The universe of the cover: the killed mutants (controls are not bugs to catch, so a CTRL
// mutant never counts, as in the escape rates). Elements are numbered 0..n-1 in campaign
// order; covers[i] lists the elements pool input i exposes.
struct KillMatrix {
  std::vector<std::size_t> mutant;           // element -> Campaign::mutants index
  std::vector<std::string> problem;          // element -> its problem
  std::vector<std::vector<std::size_t>> covers; // pool index -> elements, ascending
  std::vector<std::string> problems;         // the problems with a killed mutant, sorted
};

KillMatrix kill_matrix(const Campaign& c) {
  KillMatrix km;
  km.covers.resize(c.pool.size());
  std::set<std::string> problems;
  for (std::size_t mi = 0; mi < c.mutants.size(); ++mi) {
    const MutantResult& m = c.mutants[mi];
    if (m.status != Status::killed || m.mutant.category == Category::control) continue;
    const std::size_t element = km.mutant.size();
    km.mutant.push_back(mi);
    km.problem.push_back(m.problem);
    problems.insert(m.problem);
    for (const std::size_t input : m.killed_on)
      if (input < c.pool.size()) km.covers[input].push_back(element);
  }
  km.problems.assign(problems.begin(), problems.end());
  return km;
}

// Greedy set cover: repeatedly the candidate that covers most of what is still uncovered, the
// lowest position on ties, until max_picks are taken or nothing more can be covered. sets[j]
// holds element ids below n_elements. Lazy evaluation (gains only shrink, so a candidate whose
// fresh gain still tops the heap is the true best) keeps a large pool fast; the heap orders
// equal gains by position, which keeps the tie rule exact.
std::vector<std::size_t> greedy_picks(const std::vector<std::vector<std::size_t>>& sets,
                                      std::size_t n_elements, std::size_t max_picks) {
  std::vector<char> covered(n_elements, 0);
  using Entry = std::pair<std::size_t, std::size_t>; // (gain, position)
  auto worse = [](const Entry& a, const Entry& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> heap(worse);
  for (std::size_t j = 0; j < sets.size(); ++j)
    if (!sets[j].empty()) heap.push({sets[j].size(), j});
  std::vector<std::size_t> picks;
  while (picks.size() < max_picks && !heap.empty()) {
    const auto [stale_gain, j] = heap.top();
    heap.pop();
    std::size_t gain = 0;
    for (const std::size_t e : sets[j]) gain += covered[e] ? 0 : 1;
    if (gain == 0) continue;
    if (gain < stale_gain) {
      heap.push({gain, j});
      continue;
    }
    picks.push_back(j);
    for (const std::size_t e : sets[j]) covered[e] = 1;
  }
  return picks;
}

// How many of the elements marked in `counted` the chosen sets cover.
std::size_t covered_count(const std::vector<std::vector<std::size_t>>& sets,
                          const std::vector<std::size_t>& chosen, const std::vector<char>& counted) {
  std::vector<char> hit(counted.size(), 0);
  std::size_t n = 0;
  for (const std::size_t j : chosen)
    for (const std::size_t e : sets[j])
      if (counted[e] && !hit[e]) {
        hit[e] = 1;
        ++n;
      }
  return n;
}

// One problem's corner of the matrix: its pool inputs (ascending pool index) and its killed
// mutants renumbered 0..n-1, so that a per-problem cover only ever sees its own inputs.
struct ProblemMatrix {
  std::vector<std::size_t> inputs;              // local input -> pool index
  std::vector<std::size_t> elements;            // local element -> KillMatrix element
  std::vector<std::vector<std::size_t>> covers; // local input -> local elements
};

std::vector<ProblemMatrix> problem_matrices(const Campaign& c, const KillMatrix& km) {
  std::vector<ProblemMatrix> out(km.problems.size());
  std::map<std::string, std::size_t> index;
  for (std::size_t p = 0; p < km.problems.size(); ++p) index[km.problems[p]] = p;
  std::vector<std::size_t> local(km.mutant.size());
  for (std::size_t e = 0; e < km.mutant.size(); ++e) {
    ProblemMatrix& pm = out[index.at(km.problem[e])];
    local[e] = pm.elements.size();
    pm.elements.push_back(e);
  }
  for (std::size_t i = 0; i < c.pool.size(); ++i) {
    const auto p = index.find(c.pool[i].problem);
    if (p == index.end()) continue;
    ProblemMatrix& pm = out[p->second];
    pm.inputs.push_back(i);
    std::vector<std::size_t> cover;
    // An input only exposes mutants of its own problem; a stray cross-problem entry in
    // killed_on would otherwise let one problem's input count for another's mutants.
    for (const std::size_t e : km.covers[i])
      if (km.problem[e] == c.pool[i].problem) cover.push_back(local[e]);
    pm.covers.push_back(std::move(cover));
  }
  return out;
}

constexpr int kSuiteSizes[] = {1, 2, 3, 5};
constexpr int kRandomDraws = 200;
constexpr std::uint64_t kRandomSeed = 1;

double share(std::size_t part, std::size_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// k inputs per problem chosen greedily on that problem's killed mutants.
double greedy_per_problem(const std::vector<ProblemMatrix>& pms, std::size_t total, int k) {
  std::size_t caught = 0;
  for (const ProblemMatrix& pm : pms) {
    const auto picks = greedy_picks(pm.covers, pm.elements.size(), static_cast<std::size_t>(k));
    caught += covered_count(pm.covers, picks, std::vector<char>(pm.elements.size(), 1));
  }
  return share(caught, total);
}

// The mean detection of kRandomDraws suites of k distinct inputs per problem drawn uniformly
// (every input of a problem that has fewer than k).
double random_per_problem(const std::vector<ProblemMatrix>& pms, std::size_t total, int k) {
  if (total == 0) return 0;
  std::mt19937_64 rng(kRandomSeed);
  double sum = 0;
  for (int draw = 0; draw < kRandomDraws; ++draw) {
    std::size_t caught = 0;
    for (const ProblemMatrix& pm : pms) {
      std::vector<std::size_t> order(pm.inputs.size());
      for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
      const std::size_t take = std::min(order.size(), static_cast<std::size_t>(k));
      // A partial Fisher-Yates shuffle: the first `take` positions are a uniform sample.
      for (std::size_t j = 0; j < take; ++j)
        std::swap(order[j], order[j + draw_index(rng, order.size() - j)]);
      order.resize(take);
      caught += covered_count(pm.covers, order, std::vector<char>(pm.elements.size(), 1));
    }
    sum += share(caught, total);
  }
  return sum / kRandomDraws;
}

// Chosen on half of each problem's killed mutants, scored on the other half. The halves
// alternate through the mutants sorted by id, so they do not follow source order (which would
// put one function's mutants all on one side) and do not change between runs.
double held_out_mutants(const Campaign& c, const KillMatrix& km,
                        const std::vector<ProblemMatrix>& pms, int k) {
  std::size_t caught = 0, scored = 0;
  for (const ProblemMatrix& pm : pms) {
    std::vector<std::size_t> by_id(pm.elements.size());
    for (std::size_t j = 0; j < by_id.size(); ++j) by_id[j] = j;
    std::sort(by_id.begin(), by_id.end(), [&](std::size_t a, std::size_t b) {
      return c.mutants[km.mutant[pm.elements[a]]].mutant.id <
             c.mutants[km.mutant[pm.elements[b]]].mutant.id;
    });
    std::vector<char> in_a(pm.elements.size(), 0), in_b(pm.elements.size(), 0);
    for (std::size_t r = 0; r < by_id.size(); ++r) (r % 2 == 0 ? in_a : in_b)[by_id[r]] = 1;
    std::vector<std::vector<std::size_t>> covers_a(pm.covers.size());
    for (std::size_t j = 0; j < pm.covers.size(); ++j)
      for (const std::size_t e : pm.covers[j])
        if (in_a[e]) covers_a[j].push_back(e);
    const auto picks = greedy_picks(covers_a, pm.elements.size(), static_cast<std::size_t>(k));
    caught += covered_count(pm.covers, picks, in_b);
    scored += static_cast<std::size_t>(std::count(in_b.begin(), in_b.end(), 1));
  }
  return scored == 0 ? std::numeric_limits<double>::quiet_NaN() : share(caught, scored);
}

// The recipe-level matrix: recipe r covers a killed mutant when an input of that recipe in the
// mutant's problem exposes it. Recipes are numbered in order of first appearance in the pool.
struct RecipeMatrix {
  std::vector<std::string> recipes;
  std::vector<std::vector<std::size_t>> covers; // recipe -> KillMatrix elements, ascending
};

RecipeMatrix recipe_matrix(const Campaign& c, const KillMatrix& km) {
  RecipeMatrix rm;
  std::map<std::string, std::size_t> index;
  std::vector<std::set<std::size_t>> covers;
  for (std::size_t i = 0; i < c.pool.size(); ++i) {
    auto [it, fresh] = index.try_emplace(c.pool[i].recipe, rm.recipes.size());
    if (fresh) {
      rm.recipes.push_back(c.pool[i].recipe);
      covers.emplace_back();
    }
    for (const std::size_t e : km.covers[i])
      if (km.problem[e] == c.pool[i].problem) covers[it->second].insert(e);
  }
  for (const auto& s : covers) rm.covers.emplace_back(s.begin(), s.end());
  return rm;
}

// Chosen on half the problems (alternating through their sorted names), scored on the rest:
// whether a recipe found on some kernels carries over to kernels it has not seen.
double held_out_recipes(const KillMatrix& km, const RecipeMatrix& rm, int k) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (km.problems.size() < 2) return nan;
  std::set<std::string> half_a;
  for (std::size_t p = 0; p < km.problems.size(); p += 2) half_a.insert(km.problems[p]);
  std::vector<char> in_a(km.mutant.size(), 0), in_b(km.mutant.size(), 0);
  for (std::size_t e = 0; e < km.mutant.size(); ++e)
    (half_a.count(km.problem[e]) ? in_a : in_b)[e] = 1;
  std::vector<std::vector<std::size_t>> covers_a(rm.covers.size());
  for (std::size_t r = 0; r < rm.covers.size(); ++r)
    for (const std::size_t e : rm.covers[r])
      if (in_a[e]) covers_a[r].push_back(e);
  const auto picks = greedy_picks(covers_a, km.mutant.size(), static_cast<std::size_t>(k));
  const auto scored = static_cast<std::size_t>(std::count(in_b.begin(), in_b.end(), 1));
  return scored == 0 ? nan : share(covered_count(rm.covers, picks, in_b), scored);
}

} // namespace

CoverCurve set_cover(const Campaign& c) {
  CoverCurve curve;
  const KillMatrix km = kill_matrix(c);
  const std::size_t total = km.mutant.size();

  curve.chosen = greedy_picks(km.covers, total, c.pool.size());
  std::vector<char> covered(total, 0);
  std::size_t n_covered = 0;
  for (const std::size_t i : curve.chosen) {
    for (const std::size_t e : km.covers[i])
      if (!covered[e]) {
        covered[e] = 1;
        ++n_covered;
      }
    curve.detection.push_back(share(n_covered, total));
  }

  const std::vector<ProblemMatrix> pms = problem_matrices(c, km);
  const RecipeMatrix rm = recipe_matrix(c, km);
  for (const int k : kSuiteSizes) {
    curve.greedy_at[k] = greedy_per_problem(pms, total, k);
    curve.random_at[k] = random_per_problem(pms, total, k);
    curve.held_out_mutants_at[k] = held_out_mutants(c, km, pms, k);
    curve.held_out_recipes_at[k] = held_out_recipes(km, rm, k);
  }
  for (const std::size_t r : greedy_picks(rm.covers, total, rm.recipes.size()))
    curve.chosen_recipes.push_back(rm.recipes[r]);
  return curve;
}

std::vector<CasesToAdopt> cases_to_adopt(const Campaign& c) {
  const KillMatrix km = kill_matrix(c);
  std::vector<CasesToAdopt> out;
  for (const ProblemMatrix& pm : problem_matrices(c, km)) {
    const std::size_t n = pm.elements.size();
    std::vector<char> missed(n, 1);
    for (std::size_t j = 0; j < pm.inputs.size(); ++j)
      if (c.pool[pm.inputs[j]].default_case)
        for (const std::size_t e : pm.covers[j]) missed[e] = 0;
    std::vector<std::vector<std::size_t>> sets(pm.inputs.size());
    for (std::size_t j = 0; j < pm.inputs.size(); ++j)
      if (c.pool[pm.inputs[j]].adoptable)
        for (const std::size_t e : pm.covers[j])
          if (missed[e]) sets[j].push_back(e);
    CasesToAdopt a;
    a.problem = km.problem[pm.elements.front()];
    a.killed = n;
    a.missed = static_cast<std::size_t>(std::count(missed.begin(), missed.end(), 1));
    std::vector<char> got(n, 0);
    for (const std::size_t j : greedy_picks(sets, n, sets.size())) {
      a.picks.push_back(pm.inputs[j]);
      auto& gain = a.gains.emplace_back();
      for (const std::size_t e : sets[j])
        if (!got[e]) {
          got[e] = 1;
          gain.push_back(km.mutant[pm.elements[e]]);
        }
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::string adopted_cases_toml(const Campaign& c, const CasesToAdopt& a) {
  if (a.picks.empty()) return "";
  std::string text = fmt::format(
      "# kjudge mutate --emit-cases: {} of the {} mutants of {} the campaign killed pass every "
      "default\n# case; these cases expose {} of them. Append to the problem's problem.toml.\n",
      a.missed, a.killed, a.problem, [&] {
        std::size_t n = 0;
        for (const auto& g : a.gains) n += g.size();
        return n;
      }());
  for (std::size_t k = 0; k < a.picks.size(); ++k) {
    const PoolInput& in = c.pool[a.picks[k]];
    const AdoptedCase& ac = *in.adoptable;
    toml::table t{{"seed", static_cast<std::int64_t>(ac.seed)}};
    if (!ac.input.empty()) {
      t.insert("input", ac.input);
      t.insert("scale", ac.scale);
      t.insert("offset", ac.offset);
    }
    std::vector<std::string> ids;
    for (const std::size_t m : a.gains[k]) ids.push_back(c.mutants[m].mutant.id);
    std::ostringstream table;
    table << toml::table{{"case", toml::array{std::move(t)}}};
    text += fmt::format("\n# {} ({}): exposes {}\n{}\n", in.case_id, in.recipe,
                        fmt::join(ids, ", "), table.str());
  }
  return text;
}

} // namespace kj::mutate
