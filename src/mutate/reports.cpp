// The text reports of a finished mutation campaign (include/kjudge/mutate.hpp, "Reports";
// ../shared/reference/mutation-operators.md, "Reports"): the console summary a maintainer reads
// after `kjudge mutate`, compiler-style lines for the mutants a checker let through (so an
// editor jumps to them), the mutation-testing-report-schema v2 JSON that existing mutation
// dashboards read, and a JSON Lines sidecar with what that schema has no field for (category,
// PTX hash, per-checker verdicts, witness). The self-contained HTML page is html_report.cpp;
// the helpers both files use (report_internal.hpp) are defined here.
//
// Two meanings of "survived" meet here. The schema's status is about the strong oracle (did any
// input expose the mutant); a checker's escape is a killed mutant that checker accepted. The
// survivors a maintainer must fix are the escapes of kjudge itself.
#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "kjudge/mutate.hpp"
#include "kjudge/report.hpp"
#include "mutate/report_internal.hpp"

namespace kj::mutate {

using nlohmann::json;

// ---- Shared by every report (report_internal.hpp) -----------------------------------------

namespace detail {

std::string primary_checker(const Campaign& c) {
  if (std::find(c.checkers.begin(), c.checkers.end(), "kjudge") != c.checkers.end())
    return "kjudge";
  return c.checkers.empty() ? std::string() : c.checkers.front();
}

bool accepted_by(const MutantResult& m, const std::string& checker) {
  const auto it = m.accepted.find(checker);
  return it != m.accepted.end() && it->second;
}

std::vector<std::string> escapes_of(const Campaign& c, const MutantResult& m) {
  std::vector<std::string> out;
  if (m.status != Status::killed) return out;
  for (const std::string& checker : c.checkers)
    if (accepted_by(m, checker)) out.push_back(checker);
  return out;
}

std::string one_line(std::string_view text) {
  constexpr std::size_t kMaxShown = 60;
  std::string out;
  bool space = false;
  for (const char ch : text) {
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += ch;
  }
  if (out.size() > kMaxShown) out = out.substr(0, kMaxShown - 3) + "...";
  return out;
}

std::string shown_on_one_line(std::string_view text) {
  const std::string out = one_line(text);
  return out.empty() ? "\"\"" : out;
}

std::string edit_text(const Mutant& m) {
  return shown_on_one_line(m.original) + " -> " + shown_on_one_line(m.replacement);
}

const PoolInput* witness_input(const Campaign& c, const MutantResult& m) {
  if (!m.witness || *m.witness >= c.pool.size()) return nullptr;
  return &c.pool[*m.witness];
}

std::string witness_case(const Campaign& c, const MutantResult& m) {
  const PoolInput* w = witness_input(c, m);
  return w ? w->case_id : "none recorded";
}

std::size_t executed_count(const Campaign& c) {
  return static_cast<std::size_t>(std::count_if(c.mutants.begin(), c.mutants.end(), [](const MutantResult& m) {
    return m.status == Status::killed || m.status == Status::not_killable;
  }));
}

std::map<Status, std::size_t> status_counts(const Campaign& c) {
  std::map<Status, std::size_t> n;
  for (const Status s : {Status::killed, Status::not_killable, Status::compile_error,
                         Status::equivalent, Status::duplicate, Status::not_run})
    n[s] = 0;
  for (const MutantResult& m : c.mutants) ++n[m.status];
  return n;
}

std::string status_summary(const Campaign& c) {
  const auto n = status_counts(c);
  return fmt::format("{} mutants: {} killed, {} not shown killable, {} compile errors, "
                     "{} equivalent, {} duplicates, {} not run",
                     c.mutants.size(), n.at(Status::killed), n.at(Status::not_killable),
                     n.at(Status::compile_error), n.at(Status::equivalent),
                     n.at(Status::duplicate), n.at(Status::not_run));
}

std::string stage_times(const Campaign& c) {
  const auto seconds = [](double s) { return fmt::format("{:.2f} s", s); };
  return fmt::format("generate {}, compile {}, dedup {}, execute {}", seconds(c.generate_s),
                     seconds(c.compile_s), seconds(c.dedup_s), seconds(c.execute_s));
}

std::string throughput(const Campaign& c) {
  if (c.execute_s <= 0) return "no execution time recorded";
  return fmt::format("{:.1f} mutants/s", static_cast<double>(executed_count(c)) / c.execute_s);
}

std::string percent(double share) {
  if (std::isnan(share)) return "n/a";
  return fmt::format("{:.1f}%", 100 * share);
}

std::string share_at(const std::map<int, double>& figures, int k) {
  const auto it = figures.find(k);
  return it == figures.end() ? "n/a" : percent(it->second);
}

} // namespace detail

using namespace detail;

namespace {

// "12.3% [8.1, 16.0] (n=81)"; a dash where there is nothing to rate.
std::string rate_cell(const Rate& r) {
  if (r.total == 0) return "- (n=0)";
  return fmt::format("{:.1f}% [{:.1f}, {:.1f}] (n={})", 100 * r.rate, 100 * r.low, 100 * r.high,
                     r.total);
}

// Line and column (1-based) just past `text` when it starts at (line, column): the schema's end
// position, which is exclusive.
std::pair<int, int> end_position(int line, int column, std::string_view text) {
  for (const char ch : text) {
    if (ch == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

} // namespace

// ---- Console ------------------------------------------------------------------------------

std::vector<std::string> survivor_lines(const Campaign& c) {
  const std::string checker = primary_checker(c);
  std::vector<std::string> lines;
  for (const MutantResult& r : c.mutants) {
    const Mutant& m = r.mutant;
    const std::string where = fmt::format("{}:{}:{}", m.file, m.line, m.column);
    if (r.status == Status::killed && !checker.empty() && accepted_by(r, checker)) {
      // An equivalence-prone operator's escape may be legitimately correct code (a fast-math
      // intrinsic within tolerance): say so, so nobody tightens a bound to catch it blindly.
      lines.push_back(fmt::format("{}: warning: Survived: {} [{}] (accepted by {}; witness {}{})",
                                  where, edit_text(m), m.op, checker, witness_case(c, r),
                                  m.equivalence_prone ? "; equivalence-prone operator" : ""));
    } else if (r.status == Status::not_killable) {
      lines.push_back(
          fmt::format("{}: note: not shown killable: {} [{}]", where, edit_text(m), m.op));
    }
  }
  return lines;
}

void write_console(std::ostream& out, const Campaign& c) {
  out << fmt::format("kjudge mutate ({}): {}\n", c.backend.empty() ? "?" : c.backend,
                     status_summary(c));

  // Categories down, checkers across: a campaign has few checkers, so the table stays narrow.
  const std::vector<EscapeRates> rates = escape_rates(c);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header{"category"};
  for (const EscapeRates& e : rates) header.push_back(e.checker);
  rows.push_back(header);
  std::vector<std::string> overall{"overall"};
  for (const EscapeRates& e : rates) overall.push_back(rate_cell(e.overall));
  rows.push_back(overall);
  for (const Category cat : kScoredCategories) {
    std::vector<std::string> row{std::string(category_name(cat))};
    for (const EscapeRates& e : rates) row.push_back(rate_cell(e.by_category.at(cat)));
    rows.push_back(row);
  }
  std::vector<std::size_t> width(header.size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  out << "\nEscape rates (killed mutants the checker accepted; bootstrap 95% interval):\n";
  for (const auto& row : rows) {
    std::string line = " ";
    for (std::size_t i = 0; i < row.size(); ++i)
      line += fmt::format(" {:<{}}", row[i], i + 1 == row.size() ? 0 : width[i] + 1);
    out << line << "\n";
  }

  std::vector<std::string> rejections;
  for (const EscapeRates& e : rates)
    rejections.push_back(fmt::format("{} {} of {}", e.checker, e.false_rejections, e.controls));
  const auto broken = std::count_if(c.controls.begin(), c.controls.end(),
                                    [](const ControlResult& k) { return !k.broken.empty(); });
  out << fmt::format("\nFalse rejections of the {} controls: {}\n",
                     c.controls.size() - static_cast<std::size_t>(broken),
                     rejections.empty() ? "no checkers" : fmt::to_string(fmt::join(rejections, ", ")));
  for (const ControlResult& ctl : c.controls)
    if (!ctl.broken.empty())
      out << fmt::format("  not a control: CTRL mutant {} of {}: the strong oracle rejects it ({})\n",
                         ctl.name, ctl.problem, ctl.broken);
  for (const ControlResult& ctl : c.controls)
    for (const std::string& checker : c.checkers) {
      if (!ctl.broken.empty()) break;
      const auto it = ctl.accepted.find(checker);
      if (it != ctl.accepted.end() && !it->second)
        out << fmt::format("  {} rejected control {} of {}\n", checker, ctl.name, ctl.problem);
    }

  out << fmt::format("Stages: {} ({} executed, {})\n", stage_times(c), executed_count(c),
                     throughput(c));
  out << fmt::format("Dropped inputs: {} of {}\n", c.dropped_inputs.size(),
                     c.pool.size() + c.dropped_inputs.size());
  for (const auto& [input, why] : c.dropped_inputs)
    out << fmt::format("  {} {} ({}): {}\n", input.problem, input.case_id, input.recipe, why);
  out << (c.forced_fail_killed
              ? "Forced-fail mutant: killed (the oracle sees outputs written as NaN)\n"
              : "Forced-fail mutant: NOT killed: the strong oracle missed outputs written as "
                "NaN, so no figure above can be trusted\n");

  const CoverCurve cover = set_cover(c);
  out << "Set cover: detection of the killed mutants with k inputs per problem\n";
  out << fmt::format("  {:<18}", "k");
  for (const int k : kSuiteSizes) out << fmt::format(" {:>7}", k);
  out << "\n";
  const std::pair<const char*, const std::map<int, double>*> figures[] = {
      {"greedy", &cover.greedy_at},
      {"random (mean)", &cover.random_at},
      {"held-out mutants", &cover.held_out_mutants_at},
      {"held-out recipes", &cover.held_out_recipes_at}}; // k recipes, not k per problem
  for (const auto& [name, values] : figures) {
    out << fmt::format("  {:<18}", name);
    for (const int k : kSuiteSizes) out << fmt::format(" {:>7}", share_at(*values, k));
    out << "\n";
  }
  out << fmt::format("  recipes in greedy order: {}\n",
                     cover.chosen_recipes.empty() ? "none"
                                                  : fmt::to_string(fmt::join(cover.chosen_recipes, ", ")));

  const std::vector<std::string> lines = survivor_lines(c);
  const std::string checker = primary_checker(c);
  out << fmt::format("\nSurvivors (killed by the strong oracle, accepted by {}) and mutants "
                     "not shown killable: {}\n",
                     checker.empty() ? "no checker" : checker, lines.size());
  for (const std::string& line : lines) out << line << "\n";
}

// ---- mutation-testing-report-schema v2 ----------------------------------------------------

namespace {

std::string schema_status(Status s) {
  switch (s) {
  case Status::killed: return "Killed";
  case Status::not_killable: return "Survived";
  case Status::compile_error: return "CompileError";
  case Status::equivalent:
  case Status::duplicate:
  case Status::not_run: return "Ignored";
  }
  return "Ignored";
}

// Why the mutant has its schema status. Ignored folds three statuses together, so its reason
// starts with which one it was.
std::string schema_reason(const MutantResult& r) {
  const std::string& why = r.status_reason;
  switch (r.status) {
  case Status::killed: return why.empty() ? "exposed by the strong oracle" : why;
  case Status::not_killable: return why.empty() ? "not shown killable: no pool input exposed it" : why;
  case Status::compile_error: return why.empty() ? "compile error" : why;
  case Status::equivalent:
    return "equivalent: " + (why.empty() ? "its normalised PTX equals the original's" : why);
  case Status::duplicate:
    return "duplicate: " + (why.empty() ? "its normalised PTX equals an earlier mutant's (" +
                                              r.equivalence_class + ")"
                                        : why);
  case Status::not_run: return "not_run: " + (why.empty() ? "outside the budget" : why);
  }
  return why;
}

json schema_mutant(const Campaign& c, const MutantResult& r) {
  const Mutant& m = r.mutant;
  const auto [end_line, end_column] = end_position(m.line, m.column, m.original);
  json j = {
      {"id", m.id},
      {"mutatorName", m.op},
      {"replacement", m.replacement},
      {"description", m.description},
      {"location",
       {{"start", {{"line", m.line}, {"column", m.column}}},
        {"end", {{"line", end_line}, {"column", end_column}}}}},
      {"status", schema_status(r.status)},
      {"statusReason", schema_reason(r)},
  };
  if (r.status == Status::killed) {
    // The witness first (it is what replays), then the other inputs that expose it.
    json killed_by = json::array();
    std::set<std::string> seen;
    auto add = [&](const std::string& id) {
      if (seen.insert(id).second) killed_by.push_back(id);
    };
    if (const PoolInput* w = witness_input(c, r)) add(w->case_id);
    for (const std::size_t i : r.killed_on)
      if (i < c.pool.size()) add(c.pool[i].case_id);
    j["killedBy"] = killed_by;
  }
  return j;
}

json rate_json(const Rate& r) {
  return {{"hits", r.hits}, {"total", r.total}, {"rate", r.rate}, {"low", r.low}, {"high", r.high}};
}

// What a reader checks a campaign by: the sanity mutant, the controls, the rates, the pool.
json campaign_summary_json(const Campaign& c) {
  json controls = json::array();
  for (const ControlResult& k : c.controls)
    if (k.broken.empty())
      controls.push_back({{"problem", k.problem}, {"name", k.name}, {"accepted", k.accepted}});
  json broken = json::array();
  for (const ControlResult& k : c.controls)
    if (!k.broken.empty())
      broken.push_back({{"problem", k.problem}, {"name", k.name}, {"why", k.broken}});
  json rates = json::array();
  for (const EscapeRates& e : escape_rates(c)) {
    json by = json::object();
    for (const auto& [cat, r] : e.by_category) by[std::string(category_name(cat))] = rate_json(r);
    rates.push_back({{"checker", e.checker},
                     {"overall", rate_json(e.overall)},
                     {"by_category", by},
                     {"false_rejections", e.false_rejections},
                     {"controls", e.controls}});
  }
  json dropped = json::array();
  for (const auto& [input, why] : c.dropped_inputs)
    dropped.push_back({{"problem", input.problem}, {"case_id", input.case_id}, {"why", why}});
  return {{"forced_fail_killed", c.forced_fail_killed}, {"controls", controls},
          {"broken_controls", broken},
          {"escape_rates", rates}, {"pool_inputs", c.pool.size()}, {"dropped_inputs", dropped}};
}

} // namespace

std::string mutation_report_json(const Campaign& c) {
  json files = json::object();
  const auto file_entry = [](const std::string& source) {
    return json{{"language", "cpp"}, {"source", source}, {"mutants", json::array()}};
  };
  // Every recorded source, with or without mutants, so the dashboard shows the whole kernel.
  for (const auto& [file, source] : c.sources) files[file] = file_entry(source);
  for (const MutantResult& r : c.mutants) {
    const std::string& file = r.mutant.file;
    if (!files.contains(file)) files[file] = file_entry("");
    files[file]["mutants"].push_back(schema_mutant(c, r));
  }
  json doc = {
      {"schemaVersion", "2"},
      {"thresholds", {{"high", 80}, {"low", 60}}},
      {"files", files},
      {"framework", {{"name", "kjudge"}, {"version", KJUDGE_VERSION}}},
      // Free-form in the schema: what a reader needs to interpret the statuses.
      {"config",
       {{"backend", c.backend},
        {"checkers", c.checkers},
        {"oracle", "strong oracle (Killed = some pool input exposed it); per-checker escapes "
                   "are in the JSON Lines sidecar"},
        {"stage_seconds",
         {{"generate", c.generate_s}, {"compile", c.compile_s}, {"dedup", c.dedup_s},
          {"execute", c.execute_s}}}}},
  };
  doc["config"]["kjudge"] = campaign_summary_json(c);
  return doc.dump(2) + "\n";
}

// ---- JSON Lines sidecar -------------------------------------------------------------------

std::string mutants_jsonl(const Campaign& c) {
  std::string out;
  for (const MutantResult& r : c.mutants) {
    const Mutant& m = r.mutant;
    json accepted = json::object();
    for (const auto& [checker, yes] : r.accepted) accepted[checker] = yes;
    json witness = nullptr;
    if (const PoolInput* w = witness_input(c, r))
      witness = {{"case_id", w->case_id}, {"recipe", w->recipe}};
    json ratios = json::array();
    json max_ratio = nullptr;
    double largest = -HUGE_VAL;
    bool any_nan = false;
    for (const auto& [input, ratio] : r.error_ratios) {
      ratios.push_back({{"case_id", input < c.pool.size() ? c.pool[input].case_id : ""},
                        {"ratio", json_number(ratio)}});
      if (std::isnan(ratio)) any_nan = true;
      else largest = std::max(largest, ratio);
    }
    // A NaN ratio (NaN output) is the worst there is, not one to skip.
    if (any_nan) max_ratio = json_number(std::nan(""));
    else if (!r.error_ratios.empty()) max_ratio = json_number(largest);
    const json line = {
        {"id", m.id},
        {"problem", r.problem},
        {"file", m.file},
        {"line", m.line},
        {"column", m.column},
        {"function", m.function},
        {"operator", m.op},
        {"category", std::string(category_name(m.category))},
        {"rewrite", m.rewrite},
        {"original", m.original},
        {"replacement", m.replacement},
        {"description", m.description},
        {"status", std::string(status_name(r.status))},
        {"status_reason", r.status_reason},
        {"ptx_hash", r.ptx_hash},
        {"equivalence_class", r.equivalence_class},
        {"equivalence_prone", m.equivalence_prone},
        {"accepted", accepted},
        {"escapes", escapes_of(c, r)},
        {"witness", witness},
        {"replay", r.replay},
        {"flaky", r.flaky},
        {"max_error_ratio", max_ratio},
        {"error_ratios", ratios},
    };
    out += line.dump() + "\n";
  }
  return out;
}

} // namespace kj::mutate
