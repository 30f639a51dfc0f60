// kj::localize::whatif (`kjudge whatif`): precision schemes for a staged problem's intermediates,
// replayed on the host through the golden's launches in f64 and scored by the problem's own gate,
// before anyone writes the kernel. Each segment after a cut runs as an all-f64 derived problem
// (its reference is then the golden too), fed the previous stage as the scheme stores it.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "judge/backend.hpp"
#include "judge/case_oracle.hpp"
#include "judge/check_settings.hpp"
#include "judge/host/host_backend.hpp"
#include "judge/output_judging.hpp"
#include "kjudge/compare.hpp"
#include "kjudge/error.hpp"
#include "kjudge/localize.hpp"
#include "localize/opened_backend.hpp"

namespace kj::localize {

using namespace kj::judge;
using nlohmann::json;

Representation parse_representation(std::string_view text, const Location& where) {
  Representation r;
  r.text = std::string(text);
  std::string_view name = text;
  if (const auto x = text.rfind('x'); x != std::string_view::npos && x + 1 < text.size() &&
                                      std::isdigit(static_cast<unsigned char>(text[x + 1]))) {
    name = text.substr(0, x);
    r.terms = std::atoi(std::string(text.substr(x + 1)).c_str());
  }
  const std::optional<DType> d = parse_dtype(name);
  if (!d || !is_float(*d) || r.terms < 1 || r.terms > 4)
    throw SpecError(where, fmt::format("'{}' is not a representation: a float dtype (bf16, f16, "
                                       "f32, f64, fp8e4m3, fp8e5m2), or one split into 2 to 4 "
                                       "terms (\"bf16x2\")",
                                       text));
  r.dtype = *d;
  return r;
}

double represented(const Representation& r, double v) {
  if (!std::isfinite(v)) return round_to(r.dtype, v);
  double held = 0;
  for (int k = 0; k < r.terms; ++k) held += round_to(r.dtype, v - held);
  return held;
}

std::vector<Scheme> load_schemes(const std::filesystem::path& file, const Problem& problem) {
  if (problem.stages.empty())
    throw SpecError({problem.dir.string(), "", 0, 0},
                    fmt::format("problem '{}' declares no [[stage]]: nothing to store otherwise",
                                problem.name));
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw SpecError({file.string(), "", static_cast<int>(e.source().begin.line),
                     static_cast<int>(e.source().begin.column)},
                    std::string(e.description()));
  }
  const toml::array* arr = root["scheme"].as_array();
  if (!arr || arr->empty() || root.size() != 1)
    throw SpecError({file.string(), "", 0, 0}, "a scheme file holds [[scheme]] tables only");
  std::vector<Scheme> out;
  for (std::size_t i = 0; i < arr->size(); ++i) {
    const std::string field = fmt::format("scheme[{}]", i);
    const toml::table* t = arr->get(i)->as_table();
    const auto at = [&](const toml::node* n, const std::string& key) {
      const auto& src = n ? n->source() : toml::source_region{};
      return Location{file.string(), field + (key.empty() ? "" : "." + key),
                      static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)};
    };
    if (!t) throw SpecError(at(arr->get(i), ""), "a [[scheme]] is a table");
    Scheme s;
    const auto name = (*t)["name"].value<std::string>();
    if (!name) throw SpecError(at(t, "name"), "a scheme needs a name (a string)");
    s.name = *name;
    for (const auto& [key, node] : *t) {
      const std::string k(key.str());
      if (k != "name" && !problem.find_stage(k))
        throw SpecError(at(&node, k), fmt::format("'{}' is no stage of problem '{}'", k,
                                                  problem.name));
    }
    for (const StageSpec& stage : problem.stages) {
      const toml::node* n = t->get(stage.name);
      const auto text = n ? n->value<std::string>() : std::nullopt;
      if (!text)
        throw SpecError(at(n ? n : t, stage.name),
                        fmt::format("scheme '{}' does not say how stage '{}' is stored (a "
                                    "string: \"bf16\", \"f32\", \"bf16x2\")",
                                    s.name, stage.name));
      s.stages.push_back(parse_representation(*text, at(n, stage.name)));
    }
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// A backend of the host over one problem, for its oracle alone.
struct Oracle : OpenedBackend {
  Oracle(Problem p, const CheckOptions& o) : OpenedBackend(std::move(p), o, Backend::host, "whatif") {}
  CaseOracle& oracle() { return backend->oracle(); }
};

// Every float tensor in f64: the reference's T is then double, the same launches as the golden.
Problem all_f64(Problem p) {
  for (InputSpec& in : p.inputs)
    if (is_float(in.dtype)) in.dtype = DType::f64;
  for (OutputSpec& out : p.outputs)
    if (is_float(out.dtype)) out.dtype = DType::f64;
  return p;
}

HostTensor stored(const Representation& r, const HostTensor& exact) {
  HostTensor t(DType::f64, exact.shape());
  for (std::int64_t i = 0; i < exact.numel(); ++i) t.set(i, represented(r, exact.get(i)));
  return t;
}

} // namespace

WhatIf whatif(const Problem& problem, const std::vector<Scheme>& schemes, const WhatIfOptions& o) {
  if (problem.stages.empty() || schemes.empty())
    throw SpecError({problem.dir.string(), "", 0, 0},
                    fmt::format("whatif: problem '{}' needs [[stage]] tables and a scheme",
                                problem.name));
  Oracle whole(with_stages_as_outputs(problem), o.check);
  std::vector<std::unique_ptr<Oracle>> segments;
  for (std::size_t s = 0; s < problem.stages.size(); ++s)
    segments.push_back(std::make_unique<Oracle>(all_f64(after_cut(problem, s)), o.check));

  CaseOptions co;
  co.include_hidden = false;
  co.special_values = false;
  std::string budget;
  const CasePlan plan = host_case_plan(problem, co, budget);
  const std::size_t n_out = problem.outputs.size();
  WhatIf w;
  for (const Scheme& s : schemes) w.schemes.push_back(s.name);
  std::map<std::pair<std::size_t, std::string>, WhatIfRow> rows;
  int taken = 0;
  for (const Case& c : plan.cases) {
    if (taken++ >= o.max_cases) break;
    // A declared set and its perturbations (host0~M=63) in one column: the problem's shapes.
    const std::string set = c.shapes.id.substr(0, c.shapes.id.find('~'));
    if (std::find(w.shape_sets.begin(), w.shape_sets.end(), set) == w.shape_sets.end())
      w.shape_sets.push_back(set);
    const CaseData d = whole.oracle().prepare(c);
    std::vector<HostTensor> inputs;
    for (const HostTensor& t : whole.oracle().inputs_on_host(d))
      inputs.push_back(is_float(t.dtype()) ? t.converted(DType::f64) : t);
    for (std::size_t k = 0; k < schemes.size(); ++k) {
      HostTensor stage = stored(schemes[k].stages[0], d.golden[n_out]);
      std::vector<HostTensor> outputs;
      for (std::size_t s = 0; s < problem.stages.size(); ++s) {
        std::vector<HostTensor> fed = inputs;
        fed.push_back(std::move(stage));
        CaseData after = segments[s]->oracle().prepare_on(c, std::move(fed));
        outputs = std::move(after.golden);
        if (s + 1 < problem.stages.size()) stage = stored(schemes[k].stages[s + 1], outputs[n_out]);
      }
      WhatIfRow& row = rows[{k, set}];
      row.scheme = schemes[k].name;
      row.shape_set = set;
      ++row.cases;
      bool ok = true;
      for (std::size_t out = 0; out < n_out; ++out) {
        const OutputSpec& spec = problem.outputs[out];
        const HostTensor actual = outputs[out].converted(spec.dtype);
        const OutputFinding f =
            compare_output(judge::host_compare_inputs(problem, out, d, actual, nullptr, {}));
        row.worst_ratio = std::max(row.worst_ratio, std::exp(f.log_error_ratio));
        if (f.reason != Reason::none) {
          ok = false;
          if (row.first_failure.empty())
            row.first_failure = fmt::format("{}: {}: {}", c.id, spec.name, f.message.substr(0, 160));
        }
      }
      row.passed += ok;
    }
  }
  for (std::size_t k = 0; k < schemes.size(); ++k)
    for (const std::string& set : w.shape_sets) w.rows.push_back(rows[{k, set}]);
  return w;
}

std::string whatif_text(const WhatIf& w) {
  std::string t = fmt::format("{:<28}", "scheme \\ shape set");
  for (const std::string& set : w.shape_sets) t += fmt::format(" {:<24}", set);
  t += "\n";
  std::size_t i = 0;
  for (const std::string& scheme : w.schemes) {
    t += fmt::format("{:<28}", scheme);
    for (std::size_t s = 0; s < w.shape_sets.size(); ++s, ++i) {
      const WhatIfRow& r = w.rows[i];
      t += fmt::format(" {:<24}", fmt::format("{} {}/{} ({:.2g}x)", r.passed == r.cases ? "PASS" : "FAIL",
                                              r.passed, r.cases, r.worst_ratio));
    }
    t += "\n";
  }
  t += "(cases passed of the shape set's, and the gate's worst error over its bound)\n";
  return t;
}

json whatif_json(const WhatIf& w) {
  json rows = json::array();
  for (const WhatIfRow& r : w.rows)
    rows.push_back({{"scheme", r.scheme}, {"shape_set", r.shape_set}, {"cases", r.cases},
                    {"passed", r.passed}, {"verdict", r.passed == r.cases ? "PASS" : "FAIL"},
                    {"worst_ratio", r.worst_ratio}, {"first_failure", r.first_failure}});
  return {{"schema_version", 1}, {"schemes", w.schemes}, {"shape_sets", w.shape_sets},
          {"rows", rows}};
}

} // namespace kj::localize
