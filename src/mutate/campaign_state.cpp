// The campaign's state folder: each finished mutant a JSON line (results.jsonl), keyed by the
// mutated text and what its verdicts depend on, read back so a campaign resumes and reuses.
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kjudge/error.hpp"
#include "kjudge/sha256.hpp"
#include "mutate/campaign_internal.hpp"

namespace kj::mutate::detail {

namespace fs = std::filesystem;

namespace {

nlohmann::json mutant_to_json(const Mutant& m) {
  return {{"id", m.id}, {"op", m.op}, {"category", category_name(m.category)},
          {"rewrite", m.rewrite}, {"description", m.description}, {"file", m.file},
          {"offset", m.offset}, {"length", m.length}, {"line", m.line}, {"column", m.column},
          {"original", m.original}, {"replacement", m.replacement}, {"prelude", m.prelude},
          {"function", m.function}, {"equivalence_prone", m.equivalence_prone}};
}

nlohmann::json result_to_json(const MutantResult& r) {
  nlohmann::json j = mutant_to_json(r.mutant);
  j.update({{"problem", r.problem}, {"status", status_name(r.status)},
            {"status_reason", r.status_reason}, {"replay", r.replay}, {"ptx_hash", r.ptx_hash},
            {"equivalence_class", r.equivalence_class}, {"accepted", r.accepted},
            {"killed_on", r.killed_on}, {"flaky", r.flaky}});
  j["witness"] = r.witness ? nlohmann::json(*r.witness) : nlohmann::json(nullptr);
  j["error_ratios"] = r.error_ratios;
  return j;
}

std::optional<Category> category_named(const std::string& name) {
  for (Category c : {Category::arithmetic, Category::indexing, Category::semantic,
                     Category::boundary, Category::synchronization, Category::precision,
                     Category::control})
    if (category_name(c) == name) return c;
  return std::nullopt;
}

std::optional<Status> status_named(const std::string& name) {
  for (Status s : {Status::killed, Status::not_killable, Status::compile_error,
                   Status::equivalent, Status::duplicate, Status::not_run})
    if (status_name(s) == name) return s;
  return std::nullopt;
}

std::optional<MutantResult> result_from_json(const nlohmann::json& j) {
  MutantResult r;
  Mutant& m = r.mutant;
  const auto cat = category_named(j.at("category").get<std::string>());
  const auto st = status_named(j.at("status").get<std::string>());
  if (!cat || !st) return std::nullopt;
  m.id = j.at("id");
  m.op = j.at("op");
  m.category = *cat;
  m.rewrite = j.at("rewrite");
  m.description = j.at("description");
  m.file = j.at("file");
  m.offset = j.at("offset");
  m.length = j.at("length");
  m.line = j.at("line");
  m.column = j.at("column");
  m.original = j.at("original");
  m.replacement = j.at("replacement");
  m.prelude = j.at("prelude");
  m.function = j.at("function");
  m.equivalence_prone = j.at("equivalence_prone");
  r.problem = j.at("problem");
  r.status = *st;
  r.status_reason = j.at("status_reason");
  r.replay = j.at("replay");
  r.ptx_hash = j.at("ptx_hash");
  r.equivalence_class = j.at("equivalence_class");
  r.accepted = j.at("accepted").get<std::map<std::string, bool>>();
  r.killed_on = j.at("killed_on").get<std::vector<std::size_t>>();
  r.flaky = j.at("flaky");
  if (!j.at("witness").is_null()) r.witness = j.at("witness").get<std::size_t>();
  // JSON has no infinity: a ratio over a control that is exact is written null.
  for (const nlohmann::json& pair : j.at("error_ratios"))
    r.error_ratios.emplace_back(pair.at(0).get<std::size_t>(),
                                pair.at(1).is_null() ? HUGE_VAL : pair.at(1).get<double>());
  return r;
}

} // namespace

std::string result_line(const std::string& key, const MutantResult& r) {
  return nlohmann::json{{"key", key}, {"result", result_to_json(r)}}.dump();
}

// A truncated last line (an interrupted write) is ignored: that mutant runs again.
std::map<std::string, MutantResult> load_state(const fs::path& dir) {
  std::map<std::string, MutantResult> kept;
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    try {
      const nlohmann::json j = nlohmann::json::parse(line);
      if (auto r = result_from_json(j.at("result"))) kept[j.at("key").get<std::string>()] = *r;
    } catch (const std::exception&) {
      // an interrupted write: that mutant runs again
    }
  }
  return kept;
}

// What a kept result depends on: the mutated source, the catalogue, the checkers, the pool and
// the backend. Any change runs the mutant again.
std::string state_key(const std::string& text, const std::string& context) {
  return sha256_hex(text + '\0' + context).substr(0, 32);
}

std::string catalogue_fingerprint() {
  std::string all;
  for (const Operator& op : operator_catalogue()) {
    all += op.id + ':';
    for (const std::string& r : op.rewrites) all += r + ',';
  }
  return sha256_hex(all);
}

std::string checkers_fingerprint(const std::vector<Checker>& checkers) {
  std::string all;
  for (const Checker& c : checkers)
    all += fmt::format("{}|{}|{}|{}|{:g}|{:g}|{:g}|{:g}|{}|{}|{};", c.name, static_cast<int>(c.draw),
                       c.seeds, static_cast<int>(c.judge), c.rtol, c.atol, c.rtol_half,
                       c.atol_half, c.torch_defaults, c.dtype_epsilon_rtol,
                       c.skip_nonfinite_reference);
  return all;
}

} // namespace kj::mutate::detail

namespace kj::mutate {

std::string mutants_json(const std::vector<Mutant>& mutants) {
  nlohmann::json all = nlohmann::json::array();
  for (const Mutant& m : mutants) all.push_back(detail::mutant_to_json(m));
  return all.dump();
}

std::string campaign_json(const Campaign& c) {
  nlohmann::json j = {{"backend", c.backend}, {"checkers", c.checkers},
                      {"forced_fail_killed", c.forced_fail_killed}, {"sources", c.sources},
                      {"seconds", {{"generate", c.generate_s}, {"compile", c.compile_s},
                                   {"dedup", c.dedup_s}, {"execute", c.execute_s}}}};
  const auto input = [](const PoolInput& in) {
    return nlohmann::json{{"problem", in.problem}, {"case_id", in.case_id}, {"recipe", in.recipe},
                          {"default_case", in.default_case}};
  };
  j["pool"] = nlohmann::json::array();
  for (const PoolInput& in : c.pool) j["pool"].push_back(input(in));
  j["mutants"] = nlohmann::json::array();
  for (const MutantResult& r : c.mutants) j["mutants"].push_back(detail::result_to_json(r));
  j["controls"] = nlohmann::json::array();
  for (const ControlResult& k : c.controls)
    j["controls"].push_back({{"problem", k.problem}, {"name", k.name}, {"accepted", k.accepted},
                             {"broken", k.broken}});
  j["dropped_inputs"] = nlohmann::json::array();
  for (const auto& [in, why] : c.dropped_inputs) {
    nlohmann::json d = input(in);
    d["why"] = why;
    j["dropped_inputs"].push_back(d);
  }
  return j.dump();
}

// Every index a result holds must name a pool input, so the analysis never reads past it.
Campaign campaign_from_json(std::string_view text, const std::string& where) {
  const auto bad = [&](const std::string& what) {
    return SpecError(Location{where, "", 0, 0}, "a campaign: " + what);
  };
  Campaign c;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    c.backend = j.at("backend");
    c.checkers = j.at("checkers").get<std::vector<std::string>>();
    for (const nlohmann::json& in : j.at("pool"))
      c.pool.push_back({in.at("problem"), in.at("case_id"), in.at("recipe"),
                        in.at("default_case").get<bool>(), std::nullopt});
    for (const nlohmann::json& m : j.at("mutants")) {
      std::optional<MutantResult> r = detail::result_from_json(m);
      if (!r) throw bad("mutant " + m.value("id", std::string("?")) + ": an unknown category or status");
      std::vector<std::size_t> indices = r->killed_on;
      if (r->witness) indices.push_back(*r->witness);
      for (const auto& [index, ratio] : r->error_ratios) indices.push_back(index);
      for (std::size_t index : indices)
        if (index >= c.pool.size())
          throw bad(fmt::format("mutant {}: pool input {} of {}", r->mutant.id, index, c.pool.size()));
      c.mutants.push_back(std::move(*r));
    }
    for (const nlohmann::json& k : j.at("controls"))
      c.controls.push_back({k.at("problem"), k.at("name"),
                            k.at("accepted").get<std::map<std::string, bool>>(),
                            k.value("broken", std::string())});
    for (const nlohmann::json& d : j.value("dropped_inputs", nlohmann::json::array()))
      c.dropped_inputs.emplace_back(
          PoolInput{d.at("problem"), d.at("case_id"), d.at("recipe"), false, std::nullopt},
          d.at("why").get<std::string>());
    c.forced_fail_killed = j.at("forced_fail_killed");
    const nlohmann::json& s = j.at("seconds");
    c.generate_s = s.value("generate", 0.0);
    c.compile_s = s.value("compile", 0.0);
    c.dedup_s = s.value("dedup", 0.0);
    c.execute_s = s.value("execute", 0.0);
    c.sources = j.value("sources", std::map<std::string, std::string>());
  } catch (const nlohmann::json::exception& e) {
    throw bad(e.what());
  }
  return c;
}

} // namespace kj::mutate
