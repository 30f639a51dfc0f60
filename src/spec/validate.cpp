// `kjudge validate`: the shape plan (public, hidden, then each vary dim perturbed alone, filtered
// by the constraints, deduplicated and capped) and the report that gathers every check that
// needs no GPU. The reference lint lives in validate_lint.cpp, the launch/kernel signature check
// in validate_launch.cpp; this file runs them and adds the checks that need the shape plan.
#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "kjudge/sha256.hpp"
#include "kjudge/validate.hpp"

namespace kj {

namespace {

constexpr std::int64_t int64_max = std::numeric_limits<std::int64_t>::max();

// Miller-Rabin with the bases that are exact for every 64-bit integer; a dim can be anything the
// expression language allows, so trial division up to sqrt could take seconds.
__extension__ typedef unsigned __int128 u128;

std::uint64_t mul_mod(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return static_cast<std::uint64_t>(static_cast<u128>(a) * b % m);
}

std::uint64_t pow_mod(std::uint64_t base, std::uint64_t exp, std::uint64_t m) {
  std::uint64_t result = 1;
  base %= m;
  while (exp > 0) {
    if (exp & 1) result = mul_mod(result, base, m);
    base = mul_mod(base, base, m);
    exp >>= 1;
  }
  return result;
}

bool is_prime(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t p : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}) {
    if (n % p == 0) return n == p;
  }
  std::uint64_t d = n - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  for (std::uint64_t a : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}) {
    std::uint64_t x = pow_mod(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s; ++r) {
      x = mul_mod(x, x, n);
      if (x == n - 1) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

// A reason a shape set cannot be used, with where the failing field was declared.
struct Fault {
  Location where;
  std::string message;  // "fails constraint 'C % 4 == 0'"
};

void check_tensor_shape(const std::string& kind, const std::string& name, DType dtype,
                        const std::vector<Expr>& shape, const Location& where, const Env& env,
                        std::vector<Fault>& faults) {
  try {
    const Shape concrete = eval_shape(shape, env);
    const std::int64_t numel = checked_numel(concrete);
    const auto size = static_cast<std::int64_t>(dtype_size(dtype));
    if (numel > int64_max / size) {
      faults.push_back({where, fmt::format("{} '{}' of shape {} overflows a 64-bit byte count",
                                           kind, name, shape_string(concrete))});
    }
  } catch (const SpecError& e) {
    faults.push_back({e.where().file.empty() ? where : e.where(),
                      fmt::format("shape of {} '{}' cannot be evaluated: {}", kind, name,
                                  e.bare_message())});
  } catch (const std::exception& e) {  // checked_numel's SizeOverflow, a negative dim
    faults.push_back(
        {where, fmt::format("shape of {} '{}' cannot be evaluated: {}", kind, name, e.what())});
  }
}

// Every reason the dims cannot be judged: failing constraints first (they are what the author
// wrote to exclude shapes), then tensor shapes that do not evaluate or overflow.
std::vector<Fault> set_faults(const Problem& problem, const Env& dims) {
  std::vector<Fault> faults;
  Env env;
  try {
    env = shape_env(problem, dims);
  } catch (const SpecError& e) {
    faults.push_back({e.where(), e.bare_message()});
    return faults;
  }
  for (const Expr& c : problem.dims.constraints) {
    try {
      if (c.eval(env) == 0) {
        faults.push_back({c.where(), fmt::format("fails constraint '{}'", c.text())});
      }
    } catch (const SpecError& e) {
      faults.push_back({c.where(), fmt::format("constraint '{}' cannot be evaluated: {}",
                                               c.text(), e.bare_message())});
    }
  }
  for (const InputSpec& in : problem.inputs) {
    check_tensor_shape("input", in.name, in.dtype, in.shape, in.where, env, faults);
  }
  for (const OutputSpec& out : problem.outputs) {
    check_tensor_shape("output", out.name, out.dtype, out.shape, out.where, env, faults);
  }
  return faults;
}

// The candidate values of a vary dim, in the rule order of docs/design.md. Values below 1 are not
// shapes and are dropped without a record; a value that would overflow int64 is recorded.
std::vector<std::pair<Perturbation, std::optional<std::string>>> perturbations_of(
    const std::string& dim, std::int64_t d) {
  std::vector<std::pair<Perturbation, std::optional<std::string>>> out;
  auto add = [&](std::int64_t v, const char* rule) {
    if (v >= 1) out.push_back({Perturbation{dim, v, rule}, std::nullopt});
  };
  if (d > std::numeric_limits<std::int64_t>::min()) add(d - 1, "d-1");
  if (d < int64_max) {
    add(d + 1, "d+1");
  } else {
    out.push_back({Perturbation{dim, d, "d+1"}, "d+1 overflows int64"});
  }
  const std::optional<std::int64_t> prime =
      d < int64_max ? smallest_prime_above(std::max<std::int64_t>(d + 1, 0)) : std::nullopt;
  if (prime) {
    add(*prime, "prime");
  } else {
    out.push_back({Perturbation{dim, d, "prime"}, "the smallest prime > d+1 overflows int64"});
  }
  add(1, "one");
  return out;
}

// Where the problem's TOML lives, for diagnostics about fields that carry no Location.
std::string toml_file(const Problem& problem) {
  for (const DimSet& s : problem.dims.public_sets) {
    if (!s.where.file.empty()) return s.where.file;
  }
  for (const InputSpec& in : problem.inputs) {
    if (!in.where.file.empty()) return in.where.file;
  }
  return (problem.dir / "problem.toml").string();
}

std::string dims_string(const Env& dims) {
  std::string out;
  for (const auto& [name, value] : dims) {
    out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", name, value);
  }
  return out;
}

Location with_field(Location where, const std::string& suffix) {
  where.field += suffix;
  return where;
}

void add(std::vector<Diagnostic>& out, Diagnostic::Severity severity, Location where,
         std::string message) {
  out.push_back(Diagnostic{severity, std::move(where), std::move(message)});
}

// docs/design.md's vary rule: each vary dim must keep at least one perturbation that satisfies the
// constraints, or "picks shapes the candidate never saw" is empty for that dim.
void check_vary_dims(const Problem& problem, const ShapePlan& plan,
                     std::vector<Diagnostic>& out) {
  const std::string file = toml_file(problem);
  for (std::size_t i = 0; i < problem.dims.vary.size(); ++i) {
    const std::string& dim = problem.dims.vary[i];
    const Location where{file, fmt::format("dims.vary[{}]", i), 0, 0};
    bool present = false;
    for (const ShapeSet& s : plan.sets) {
      if (!s.perturbation && s.dims.count(dim)) present = true;
    }
    if (!present) {
      add(out, Diagnostic::Severity::error, where,
          fmt::format("vary dim '{}' is not a dim of any shape set", dim));
      continue;
    }
    const bool kept = std::any_of(plan.sets.begin(), plan.sets.end(), [&](const ShapeSet& s) {
      return s.perturbation && s.perturbation->dim == dim;
    });
    if (kept) continue;
    std::vector<std::string> faults;  // distinct, in first-seen order
    bool only_faults = true;
    for (const RejectedPerturbation& r : plan.rejected) {
      if (r.perturbation.dim != dim) continue;
      const bool benign = r.why.rfind("duplicate of ", 0) == 0 || r.why.rfind("over the cap", 0) == 0;
      if (benign) {
        only_faults = false;
      } else if (std::find(faults.begin(), faults.end(), r.why) == faults.end()) {
        faults.push_back(r.why);
      }
    }
    if (!only_faults) {
      // Duplicates still vary the dim (another set has that value); only the cap is a concern.
      const bool capped = std::any_of(plan.rejected.begin(), plan.rejected.end(), [&](auto& r) {
        return r.perturbation.dim == dim && r.why.rfind("over the cap", 0) == 0;
      });
      if (capped) {
        add(out, Diagnostic::Severity::warning, where,
            fmt::format("vary dim '{}' keeps no perturbation under the cap on perturbed shape "
                        "sets; vary fewer dims or use fewer shape sets",
                        dim));
      }
      continue;
    }
    std::string why;
    if (faults.size() == 1) {
      why = "every one " + faults.front();
    } else {
      why = "every one is rejected:";
      for (std::size_t k = 0; k < faults.size(); ++k) {
        why += (k ? "; " : " ") + faults[k];
      }
    }
    add(out, Diagnostic::Severity::error, where,
        fmt::format("vary dim '{}' keeps no perturbation: {}", dim, why));
  }
}

void check_base_sets(const Problem& problem, const ShapePlan& plan,
                     std::vector<Diagnostic>& out) {
  auto check = [&](const std::vector<DimSet>& sets, const char* kind) {
    for (std::size_t i = 0; i < sets.size(); ++i) {
      const std::string id = fmt::format("{}{}", kind, i);
      // Located at the set: the constraint or shape is fine, this set is what breaks it.
      for (const Fault& f : set_faults(problem, sets[i].values)) {
        add(out, Diagnostic::Severity::error, sets[i].where,
            fmt::format("{} shape set {} ({}) {}", kind, id, dims_string(sets[i].values),
                        f.message));
      }
    }
  };
  check(problem.dims.public_sets, "public");
  check(problem.dims.hidden_sets, "hidden");
  // A hidden set equal to a public one hides nothing; a repeated public set judges twice.
  for (std::size_t i = 0; i < plan.sets.size(); ++i) {
    if (plan.sets[i].perturbation) break;
    for (std::size_t j = 0; j < i; ++j) {
      if (plan.sets[j].dims == plan.sets[i].dims) {
        const bool hidden = plan.sets[i].hidden;
        const auto& src = hidden ? problem.dims.hidden_sets : problem.dims.public_sets;
        const std::size_t index =
            hidden ? i - problem.dims.public_sets.size() : i;
        add(out, Diagnostic::Severity::warning,
            index < src.size() ? src[index].where : Location{},
            fmt::format("shape set {} has the same dims as {}{}", plan.sets[i].id,
                        plan.sets[j].id,
                        hidden && !plan.sets[j].hidden ? ": it is not hidden" : ""));
        break;
      }
    }
  }
}

// Grid, block, shared and repeat evaluated on every shape set of the plan: a launch that cannot
// run on a perturbed shape would turn the reference itself into the failure.
void check_launch_dims(const Problem& problem, const KernelSource& src, const ShapePlan& plan,
                       const char* plan_name, std::vector<Diagnostic>& out) {
  struct Finding {
    std::string first_set;
    std::string message;
    int more = 0;
  };
  for (std::size_t k = 0; k < src.launches.size(); ++k) {
    const LaunchSpec& launch = src.launches[k];
    Location base = launch.where;
    if (base.field.empty()) base.field = fmt::format("{}.launch[{}]", plan_name, k);
    std::map<std::string, Finding> findings;  // by field
    std::vector<std::string> order;
    auto report = [&](const std::string& field, const std::string& set_id, std::string msg) {
      auto [it, fresh] = findings.try_emplace(field);
      if (fresh) {
        it->second = Finding{set_id, std::move(msg), 0};
        order.push_back(field);
      } else {
        ++it->second.more;
      }
    };
    for (const ShapeSet& set : plan.sets) {
      Env env;
      try {
        env = shape_env(problem, set.dims);
      } catch (const SpecError&) {
        continue;  // reported with the shape set
      }
      if (!set_faults(problem, set.dims).empty()) continue;  // reported with the shape set
      std::vector<std::optional<std::int64_t>> iterations{std::nullopt};
      if (launch.repeat) {
        std::int64_t n = 0;
        try {
          n = launch.repeat->eval(env);
        } catch (const SpecError& e) {
          report(".repeat", set.id, e.bare_message());
          continue;
        }
        if (n < 1) {
          report(".repeat", set.id, fmt::format("repeat count is {}", n));
          continue;
        }
        iterations = {0};
        if (n > 1) iterations.push_back(n - 1);
      }
      for (const auto& iter : iterations) {
        Env e = env;
        if (iter) e["i"] = *iter;
        auto eval = [&](const Expr& x, const std::string& field) -> std::optional<std::int64_t> {
          try {
            return x.eval(e);
          } catch (const SpecError& err) {
            report(field, set.id, err.bare_message());
            return std::nullopt;
          }
        };
        static constexpr std::int64_t grid_max[3] = {2147483647, 65535, 65535};
        static constexpr std::int64_t block_max[3] = {1024, 1024, 64};
        for (std::size_t j = 0; j < launch.grid.size() && j < 3; ++j) {
          const std::string field = fmt::format(".grid[{}]", j);
          if (auto v = eval(launch.grid[j], field); v && (*v < 1 || *v > grid_max[j])) {
            report(field, set.id,
                   fmt::format("'{}' is {}, outside [1, {}]", launch.grid[j].text(), *v,
                               grid_max[j]));
          }
        }
        std::int64_t threads = 1;
        bool block_ok = true;
        for (std::size_t j = 0; j < launch.block.size() && j < 3; ++j) {
          const std::string field = fmt::format(".block[{}]", j);
          auto v = eval(launch.block[j], field);
          if (!v) {
            block_ok = false;
          } else if (*v < 1 || *v > block_max[j]) {
            block_ok = false;
            report(field, set.id,
                   fmt::format("'{}' is {}, outside [1, {}]", launch.block[j].text(), *v,
                               block_max[j]));
          } else {
            threads *= *v;
          }
        }
        if (block_ok && threads > 1024) {
          report(".block", set.id,
                 fmt::format("{} threads per block, more than 1024", threads));
        }
        if (auto v = eval(launch.shared, ".shared"); v && *v < 0) {
          report(".shared", set.id, fmt::format("'{}' is {} bytes", launch.shared.text(), *v));
        }
      }
    }
    for (const std::string& field : order) {
      const Finding& f = findings[field];
      add(out, Diagnostic::Severity::error, with_field(base, field),
          fmt::format("on shape set {}: {}{}", f.first_set, f.message,
                      f.more ? fmt::format(" (and {} more)", f.more) : ""));
    }
  }
}

template <class F>
void guarded(std::vector<Diagnostic>& out, const char* stage, F&& f) {
  // A problem that loaded must get a report, not an exception; what escapes a stage is still
  // the problem's fault (an expression that cannot evaluate) or ours, and says which stage.
  try {
    f();
  } catch (const SpecError& e) {
    add(out, Diagnostic::Severity::error, e.where(), e.bare_message());
  } catch (const std::exception& e) {
    add(out, Diagnostic::Severity::error, Location{},
        fmt::format("internal error in the {} check: {}", stage, e.what()));
  }
}

}  // namespace

std::optional<std::int64_t> smallest_prime_above(std::int64_t n) {
  if (n < 2) return 2;
  if (n == int64_max) return std::nullopt;
  for (std::int64_t c = n + 1; c > n; ++c) {
    if (is_prime(static_cast<std::uint64_t>(c))) return c;
    if (c == int64_max) break;
  }
  return std::nullopt;
}

std::string perturbed_set_id(std::string_view base, std::string_view dim, std::int64_t value) {
  return fmt::format("{}~{}={}", base, dim, value);
}

ShapePlan plan_shapes(const Problem& problem, std::size_t max_perturbed) {
  ShapePlan plan;
  for (std::size_t i = 0; i < problem.dims.public_sets.size(); ++i) {
    plan.sets.push_back(
        ShapeSet{fmt::format("public{}", i), false, problem.dims.public_sets[i].values, {}});
  }
  for (std::size_t i = 0; i < problem.dims.hidden_sets.size(); ++i) {
    plan.sets.push_back(
        ShapeSet{fmt::format("hidden{}", i), true, problem.dims.hidden_sets[i].values, {}});
  }
  const std::size_t bases = plan.sets.size();
  std::size_t perturbed = 0;
  for (std::size_t b = 0; b < bases; ++b) {
    // Copies: push_back below may move plan.sets.
    const std::string base_id = plan.sets[b].id;
    const bool hidden = plan.sets[b].hidden;
    const Env base_dims = plan.sets[b].dims;
    for (const std::string& dim : problem.dims.vary) {
      const auto it = base_dims.find(dim);
      if (it == base_dims.end()) continue;  // validate_problem reports the unknown dim
      for (auto& [perturbation, overflow] : perturbations_of(dim, it->second)) {
        const Perturbation& p = perturbation;  // clang 14 cannot capture a structured binding
        auto reject = [&](std::string why) {
          plan.rejected.push_back(RejectedPerturbation{p, base_id, std::move(why)});
        };
        if (overflow) {
          reject(*overflow);
          continue;
        }
        Env dims = base_dims;
        dims[dim] = p.value;
        if (auto faults = set_faults(problem, dims); !faults.empty()) {
          reject(faults.front().message);
          continue;
        }
        const auto dup = std::find_if(plan.sets.begin(), plan.sets.end(),
                                      [&](const ShapeSet& s) { return s.dims == dims; });
        if (dup != plan.sets.end()) {
          reject("duplicate of " + dup->id);
          continue;
        }
        if (perturbed >= max_perturbed) {
          reject(fmt::format("over the cap ({} perturbed shape sets)", max_perturbed));
          continue;
        }
        ++perturbed;
        plan.sets.push_back(ShapeSet{perturbed_set_id(base_id, dim, p.value), hidden,
                                     std::move(dims), p});
      }
    }
  }
  return plan;
}

namespace {

// One draw of a range: each dim lo + (first 8 bytes of the HMAC) mod (hi - lo + 1). The bias of
// the modulo is below 2^-63 * span, nothing a shape could show.
Env draw_from_range(const DimRange& range, std::string_view secret, const std::string& hash,
                    std::size_t r, int draw, int attempt) {
  Env dims;
  for (const auto& [dim, b] : range.bounds) {
    const auto mac = hmac_sha256(
        secret, fmt::format("kjudge hidden shape|{}|{}|{}|{}|{}", hash, r, draw, attempt, dim));
    std::uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = v << 8 | mac[static_cast<std::size_t>(k)];
    // 0 <= lo <= hi <= 2^63 - 1 (load_dim_ranges): the span is in [1, 2^63].
    const std::uint64_t span = static_cast<std::uint64_t>(b.second - b.first) + 1;
    dims[dim] = b.first + static_cast<std::int64_t>(v % span);
  }
  return dims;
}

}  // namespace

std::string secret_tag(std::string_view secret) {
  const auto mac = hmac_sha256(secret, "kjudge secret tag");
  return fmt::format("{:02x}{:02x}{:02x}{:02x}", mac[0], mac[1], mac[2], mac[3]);
}

DrawnSets draw_hidden_sets(const Problem& problem, std::string_view secret) {
  DrawnSets out;
  const std::string tag = secret_tag(secret);
  std::vector<Env> taken;
  for (const DimSet& s : problem.dims.public_sets) taken.push_back(s.values);
  for (const DimSet& s : problem.dims.hidden_sets) taken.push_back(s.values);
  for (std::size_t r = 0; r < problem.dims.hidden_ranges.size(); ++r) {
    for (int i = 0; i < problem.dims.hidden_draws; ++i) {
      const std::string id = fmt::format("drawn{}.{}@{}", r, i, tag);
      bool drawn = false;
      for (int attempt = 0; attempt < kMaxDrawAttempts && !drawn; ++attempt) {
        Env dims = draw_from_range(problem.dims.hidden_ranges[r], secret, problem.hash, r, i,
                                   attempt);
        if (std::find(taken.begin(), taken.end(), dims) != taken.end() ||
            !set_faults(problem, dims).empty())
          continue;
        taken.push_back(dims);
        out.sets.push_back(ShapeSet{id, true, std::move(dims), std::nullopt});
        drawn = true;
      }
      // Which constraint the last draw failed would name its dims: not said.
      if (!drawn)
        out.failed.push_back(fmt::format("drawn{}.{}: none of {} draws is a new shape set that "
                                         "meets the constraints",
                                         r, i, kMaxDrawAttempts));
    }
  }
  return out;
}

std::string_view severity_name(Diagnostic::Severity s) {
  switch (s) {
    case Diagnostic::Severity::error: return "error";
    case Diagnostic::Severity::warning: return "warning";
    case Diagnostic::Severity::note: return "note";
  }
  return "error";
}

std::string format_diagnostic(const Diagnostic& d) {
  // As compilers print them, so editors and CI annotate the line: file:line:col first.
  // A diagnostic about no file in particular is kjudge's own word.
  const Location& w = d.where;
  std::string place = w.file.empty() ? "kjudge" : w.file;
  if (!w.file.empty() && w.line > 0) {
    place += fmt::format(":{}", w.line);
    if (w.column > 0) place += fmt::format(":{}", w.column);
  }
  return fmt::format("{}: {}: {}{}", place, severity_name(d.severity),
                     w.field.empty() ? "" : w.field + ": ", d.message);
}

bool ValidationReport::ok() const {
  return std::none_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) {
    return d.severity == Diagnostic::Severity::error;
  });
}

namespace {

// Validation draws with a key of its own (not any secret's): how often each range's draws meet the
// constraints and shapes (never: the range can never be judged; under half: most draws redraw).
// Returns the draws that meet them, "range<r>.draw<i>", for the launch checks.
constexpr std::string_view kValidationKey = "kjudge validate: not a secret";
constexpr int kValidationDraws = 32;

std::vector<ShapeSet> check_hidden_ranges(const Problem& problem, std::vector<Diagnostic>& out) {
  std::vector<ShapeSet> sample;
  for (std::size_t r = 0; r < problem.dims.hidden_ranges.size(); ++r) {
    const DimRange& range = problem.dims.hidden_ranges[r];
    int met = 0;
    std::string first_fault;
    for (int i = 0; i < kValidationDraws; ++i) {
      Env dims = draw_from_range(range, kValidationKey, problem.hash, r, i, 0);
      const auto faults = set_faults(problem, dims);
      if (faults.empty()) {
        ++met;
        sample.push_back(ShapeSet{fmt::format("range{}.draw{}", r, i), true, std::move(dims), {}});
      } else if (first_fault.empty()) {
        first_fault = fmt::format("{} {}", dims_string(dims), faults.front().message);
      }
    }
    if (met == 0)
      add(out, Diagnostic::Severity::error, range.where,
          fmt::format("hidden range {}: none of {} draws meets the constraints and shapes (the "
                      "first, {})",
                      r, kValidationDraws, first_fault));
    else if (2 * met < kValidationDraws)
      add(out, Diagnostic::Severity::warning, range.where,
          fmt::format("hidden range {}: only {} of {} draws meet the constraints and shapes (the "
                      "first that does not, {}); narrow the range",
                      r, met, kValidationDraws, first_fault));
  }
  return sample;
}

}  // namespace

ValidationReport validate_problem(const Problem& problem) {
  ValidationReport report;
  auto& out = report.diagnostics;
  guarded(out, "shape plan", [&] { report.shapes = plan_shapes(problem); });
  guarded(out, "shape set", [&] { check_base_sets(problem, report.shapes, out); });
  guarded(out, "vary", [&] { check_vary_dims(problem, report.shapes, out); });
  // Launches are checked on the ranges' validation draws too: a range the reference cannot
  // launch on would turn a secret's draw into the problem's error.
  ShapePlan launch_plan = report.shapes;
  guarded(out, "hidden ranges", [&] {
    for (ShapeSet& s : check_hidden_ranges(problem, out)) launch_plan.sets.push_back(std::move(s));
  });

  // The golden's own kernels may sit in the reference file; they are double by design and
  // outside the lint, which guards only the template the golden instantiates with T = double.
  std::set<std::string> golden_only;
  if (problem.golden && problem.golden->path == problem.reference.path) {
    for (const LaunchSpec& l : problem.golden->launches) golden_only.insert(l.kernel_base_name());
    for (const LaunchSpec& l : problem.reference.launches) golden_only.erase(l.kernel_base_name());
  }
  guarded(out, "reference lint", [&] {
    auto lint = lint_reference(problem.reference, golden_only);
    out.insert(out.end(), lint.begin(), lint.end());
  });
  guarded(out, "reference launch", [&] {
    auto sig = check_launch_signatures(problem, problem.reference);
    out.insert(out.end(), sig.begin(), sig.end());
  });
  guarded(out, "reference launch dims",
          [&] { check_launch_dims(problem, problem.reference, launch_plan, "reference", out); });
  if (problem.golden) {
    guarded(out, "golden launch", [&] {
      auto sig = check_launch_signatures(problem, *problem.golden);
      out.insert(out.end(), sig.begin(), sig.end());
    });
    guarded(out, "golden launch dims",
            [&] { check_launch_dims(problem, *problem.golden, launch_plan, "golden", out); });
  }
  if (problem.timed_baseline && problem.timed_baseline->plan) {
    const KernelSource& plan = *problem.timed_baseline->plan;
    guarded(out, "baseline launch", [&] {
      auto sig = check_launch_signatures(problem, plan);
      out.insert(out.end(), sig.begin(), sig.end());
    });
    guarded(out, "baseline launch dims",
            [&] { check_launch_dims(problem, plan, launch_plan, "baseline", out); });
  }
  return report;
}

}  // namespace kj
