// The bundled problem suite as data (docs/design.md "Conventions": expectations are data in
// problems/*/, checked against a committed manifest). Without a GPU this test holds the suite to
// its own description: every problem of problems/manifest.toml loads and validates clean, every
// problem folder is in the manifest, each problem's candidates (the .cu files of solutions/ and
// traps/) number what the manifest says, each has exactly one well-formed entry in expect.toml
// and each entry names an existing file, and every candidate's launch plan loads. The
// expectation runner that judges the candidates on a GPU reads the same files in the same way
// (formats: docs/problems.md).
#include <gtest/gtest.h>

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kjudge/spec.hpp"
#include "kjudge/validate.hpp"
#include "kjudge/verdict.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

const fs::path kProblems = fs::path(KJ_SOURCE_DIR) / "problems";

// ---------------------------------------------------------------------------------------------
// The expectation grammar: "pass" | "fail:<reason>" | "fail:{<reason>, <reason>, ...}". A set
// means the verdict is FAIL with any one of its reasons (which one wins can depend on the
// machine: a race shows as nondeterministic or as mismatch). Reasons are FAIL reasons of
// docs/design.md's table; an ERROR (spec_error, internal) is never what a candidate is expected to
// produce.

struct Expectation {
  bool pass = false;
  std::set<Reason> reasons; // empty when pass
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// nullopt, with the reason in `why`, for anything off the grammar.
std::optional<Expectation> parse_expectation(std::string_view text, std::string& why) {
  if (text == "pass") return Expectation{true, {}};
  constexpr std::string_view kFail = "fail:";
  if (text.substr(0, kFail.size()) != kFail) {
    why = "expected \"pass\", \"fail:<reason>\" or \"fail:{<reason>, ...}\"";
    return std::nullopt;
  }
  std::string_view rest = text.substr(kFail.size());
  std::vector<std::string_view> words;
  if (!rest.empty() && rest.front() == '{') {
    if (rest.back() != '}') {
      why = "a reason set opens with '{' and must close with '}'";
      return std::nullopt;
    }
    rest = rest.substr(1, rest.size() - 2);
    while (true) {
      const auto comma = rest.find(',');
      words.push_back(trim(rest.substr(0, comma)));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  } else {
    words.push_back(rest);
  }
  Expectation e;
  for (std::string_view w : words) {
    const std::optional<Reason> r = parse_reason(w);
    if (!r) {
      why = "unknown reason '" + std::string(w) + "'";
      return std::nullopt;
    }
    if (reason_outcome(*r) != Outcome::fail) {
      why = "'" + std::string(w) + "' is not a FAIL reason (a candidate's fault)";
      return std::nullopt;
    }
    if (!e.reasons.insert(*r).second) {
      why = "reason '" + std::string(w) + "' is listed twice";
      return std::nullopt;
    }
  }
  return e;
}

TEST(ExpectationGrammar, AcceptsPassAReasonAndASet) {
  std::string why;
  auto e = parse_expectation("pass", why);
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->pass);
  e = parse_expectation("fail:mismatch", why);
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->pass);
  EXPECT_EQ(e->reasons, (std::set<Reason>{Reason::mismatch}));
  e = parse_expectation("fail:{nondeterministic,mismatch}", why);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reasons, (std::set<Reason>{Reason::nondeterministic, Reason::mismatch}));
  e = parse_expectation("fail:{crash, oob_write}", why);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->reasons, (std::set<Reason>{Reason::crash, Reason::oob_write}));
}

TEST(ExpectationGrammar, RejectsEverythingElse) {
  for (const char* bad :
       {"", "PASS", "fail", "fail:", "fail:nope", "fail:{}", "fail:{mismatch", "fail:{mismatch,}",
        "fail:{mismatch,mismatch}", "fail:none", "fail:spec_error", "fail:internal",
        "fail: mismatch", "error:spec_error", "pass "}) {
    std::string why;
    EXPECT_FALSE(parse_expectation(bad, why)) << "accepted: '" << bad << "'";
    EXPECT_FALSE(why.empty()) << bad;
  }
}

// ---------------------------------------------------------------------------------------------
// The manifest and the expect.toml files.

struct ManifestEntry {
  std::string name;
  fs::path dir;
  std::int64_t candidates = 0;
};

toml::table parse_toml_file(const fs::path& file) {
  try {
    return toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    ADD_FAILURE() << file << ": " << e.description() << " at line " << e.source().begin.line;
    return {};
  }
}

// Every key of `t` must be in `known`.
void expect_keys(const toml::table& t, const std::set<std::string>& known, const std::string& at) {
  for (auto&& [key, value] : t)
    EXPECT_TRUE(known.contains(std::string(key.str())))
        << at << ": unknown key '" << key.str() << "'";
}

std::vector<ManifestEntry> read_manifest() {
  const fs::path file = kProblems / "manifest.toml";
  const toml::table root = parse_toml_file(file);
  expect_keys(root, {"problem"}, file.string());
  std::vector<ManifestEntry> out;
  const toml::array* problems = root["problem"].as_array();
  if (!problems) {
    ADD_FAILURE() << file << ": no [[problem]] entries";
    return out;
  }
  for (std::size_t i = 0; i < problems->size(); ++i) {
    const std::string at = file.string() + ": problem[" + std::to_string(i) + "]";
    const toml::table* t = problems->get(i)->as_table();
    if (!t) {
      ADD_FAILURE() << at << " is not a table";
      continue;
    }
    expect_keys(*t, {"name", "path", "candidates"}, at);
    const auto name = (*t)["name"].value<std::string>();
    const auto path = (*t)["path"].value<std::string>();
    const auto count = (*t)["candidates"].value<std::int64_t>();
    if (!name || !path || !count) {
      ADD_FAILURE() << at << ": needs name (string), path (string) and candidates (integer)";
      continue;
    }
    out.push_back({*name, kProblems / *path, *count});
  }
  return out;
}

const std::vector<ManifestEntry>& manifest() {
  static const std::vector<ManifestEntry> m = read_manifest();
  return m;
}

struct ExpectEntry {
  std::string file; // relative to the problem folder, as written
  std::string expect;
  std::string why;
  std::optional<std::string> defence;
  std::optional<std::string> expect_host;  // the host backend's answer, where it differs
  std::optional<std::string> expect_bench; // `kjudge bench`'s verdict on the GPU
  std::optional<std::string> known_gap;    // what would catch a trap kjudge cannot catch yet
  std::optional<std::string> expect_localize; // `kjudge localize`'s culprit ("stage:h", "none")
};

// The defences of docs/design.md "Defences" that have a KJ_TEST_DISABLE switch (defences.hpp): a
// trap names the one that catches it, so a defence test can run it with the switch on and off.
const std::set<std::string> kDefences = {"isolation",  "redzone",    "poison",
                                          "input_hash", "rerun",      "static_scan",
                                          "regenerate", "one_program"};

std::vector<ExpectEntry> read_expect(const fs::path& dir) {
  const fs::path file = dir / "expect.toml";
  std::vector<ExpectEntry> out;
  if (!fs::is_regular_file(file)) {
    ADD_FAILURE() << "missing " << file;
    return out;
  }
  const toml::table root = parse_toml_file(file);
  expect_keys(root, {"candidate"}, file.string());
  const toml::array* entries = root["candidate"].as_array();
  if (!entries) {
    ADD_FAILURE() << file << ": no [[candidate]] entries";
    return out;
  }
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const std::string at = file.string() + ": candidate[" + std::to_string(i) + "]";
    const toml::table* t = entries->get(i)->as_table();
    if (!t) {
      ADD_FAILURE() << at << " is not a table";
      continue;
    }
    expect_keys(*t,
                {"file", "expect", "why", "defence", "expect_host", "expect_bench", "known_gap",
                 "expect_localize"},
                at);
    const auto f = (*t)["file"].value<std::string>();
    const auto e = (*t)["expect"].value<std::string>();
    const auto w = (*t)["why"].value<std::string>();
    if (!f || !e || !w) {
      ADD_FAILURE() << at << ": needs file, expect and why (strings)";
      continue;
    }
    ExpectEntry entry{*f, *e, *w, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      std::nullopt};
    bool strings = true;
    for (auto [key, field] : {std::pair{"defence", &entry.defence},
                              std::pair{"expect_host", &entry.expect_host},
                              std::pair{"expect_bench", &entry.expect_bench},
                              std::pair{"known_gap", &entry.known_gap},
                              std::pair{"expect_localize", &entry.expect_localize}}) {
      const toml::node* n = t->get(key);
      if (!n) continue;
      const auto s = n->value<std::string>();
      if (!s) {
        ADD_FAILURE() << at << ": " << key << " must be a string";
        strings = false;
        continue;
      }
      *field = *s;
    }
    if (strings) out.push_back(std::move(entry));
  }
  return out;
}

// The candidates on disk: every .cu of solutions/ and traps/, as "solutions/basic.cu".
std::set<std::string> candidate_files(const fs::path& dir) {
  std::set<std::string> out;
  for (const char* sub : {"solutions", "traps"}) {
    if (!fs::is_directory(dir / sub)) continue;
    for (const auto& entry : fs::directory_iterator(dir / sub)) {
      if (!entry.is_regular_file()) continue;
      const fs::path p = entry.path();
      EXPECT_EQ(p.extension(), ".cu") << p << ": solutions/ and traps/ hold only .cu candidates";
      out.insert(std::string(sub) + "/" + p.filename().string());
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

TEST(Manifest, ListsEveryProblemOnceAndNothingElse) {
  const auto& m = manifest();
  ASSERT_FALSE(m.empty());
  std::set<std::string> names, dirs;
  for (const ManifestEntry& e : m) {
    EXPECT_TRUE(names.insert(e.name).second) << "problem '" << e.name << "' listed twice";
    EXPECT_TRUE(dirs.insert(fs::weakly_canonical(e.dir).string()).second)
        << e.dir << " listed twice";
    EXPECT_TRUE(fs::is_regular_file(e.dir / "problem.toml")) << e.dir << " has no problem.toml";
    EXPECT_GT(e.candidates, 0) << e.name << ": a problem without candidates proves nothing";
  }
  // A problem folder the manifest does not list would never be checked.
  for (const auto& entry : fs::directory_iterator(kProblems)) {
    if (!fs::is_regular_file(entry.path() / "problem.toml")) continue;
    EXPECT_TRUE(dirs.contains(fs::weakly_canonical(entry.path()).string()))
        << entry.path() << " is not in problems/manifest.toml";
  }
}

TEST(Problems, LoadAndValidateClean) {
  for (const ManifestEntry& e : manifest()) {
    SCOPED_TRACE(e.name);
    try {
      const Problem p = load_problem(e.dir);
      EXPECT_EQ(p.name, e.name) << "the manifest's name differs from problem.toml's";
      const ValidationReport report = validate_problem(p);
      EXPECT_TRUE(report.ok());
      for (const Diagnostic& d : report.diagnostics)
        ADD_FAILURE() << format_diagnostic(d); // warnings too: the bundled suite is clean
    } catch (const SpecError& err) {
      ADD_FAILURE() << "does not load: " << err.what();
    }
  }
}

TEST(Problems, CandidatesMatchTheManifestAndTheirExpectations) {
  for (const ManifestEntry& e : manifest()) {
    SCOPED_TRACE(e.name);
    const std::set<std::string> on_disk = candidate_files(e.dir);
    EXPECT_EQ(static_cast<std::int64_t>(on_disk.size()), e.candidates)
        << "problems/manifest.toml says " << e.candidates << " candidates";

    std::set<std::string> expected;
    int passing = 0;
    for (const ExpectEntry& x : read_expect(e.dir)) {
      SCOPED_TRACE(x.file);
      EXPECT_TRUE(expected.insert(x.file).second) << "two expectations for one file";
      EXPECT_TRUE(on_disk.contains(x.file))
          << "no such candidate (files live in solutions/ or traps/)";
      EXPECT_FALSE(trim(x.why).empty()) << "an expectation says why";
      std::string why;
      const std::optional<Expectation> parsed = parse_expectation(x.expect, why);
      if (!parsed) {
        ADD_FAILURE() << "expect = \"" << x.expect << "\": " << why;
        continue;
      }
      std::optional<Expectation> bench;
      if (x.expect_bench) {
        bench = parse_expectation(*x.expect_bench, why);
        EXPECT_TRUE(bench) << "expect_bench = \"" << *x.expect_bench << "\": " << why;
      }
      if (x.expect_host && *x.expect_host != "unsupported") {
        EXPECT_TRUE(parse_expectation(*x.expect_host, why))
            << "expect_host = \"" << *x.expect_host << "\": " << why;
      }
      // solutions/ holds correct kernels, traps/ wrong ones: a trap fails in the check, or in the
      // bench where only the bench can catch it, or is a known gap that says what would.
      const bool is_trap = x.file.rfind("traps/", 0) == 0;
      if (x.file.rfind("solutions/", 0) == 0) {
        EXPECT_TRUE(parsed->pass) << "a solution is expected to pass";
        EXPECT_TRUE(!bench || bench->pass) << "a solution passes the bench too";
        EXPECT_FALSE(x.known_gap) << "a known gap is a trap's";
      }
      if (is_trap && !x.known_gap) {
        EXPECT_TRUE(!parsed->pass || (bench && !bench->pass))
            << "a trap must fail (in the check, or in the bench with expect_bench)";
      }
      if (x.known_gap) {
        EXPECT_FALSE(trim(*x.known_gap).empty()) << "a known gap says what would catch it";
      }
      if (parsed->pass) ++passing;
      if (x.defence) {
        EXPECT_TRUE(kDefences.contains(*x.defence)) << "unknown defence '" << *x.defence << "'";
        EXPECT_FALSE(parsed->pass) << "only a trap is caught by a defence";
      }
    }
    for (const std::string& f : on_disk)
      EXPECT_TRUE(expected.contains(f)) << f << " has no expectation in expect.toml";
    EXPECT_GT(passing, 0) << "at least one candidate must be correct";
  }
}

TEST(Problems, EveryLaunchPlanLoads) {
  for (const ManifestEntry& e : manifest()) {
    SCOPED_TRACE(e.name);
    std::optional<Problem> p;
    try {
      p = load_problem(e.dir);
    } catch (const SpecError& err) {
      ADD_FAILURE() << "does not load: " << err.what();
      continue;
    }
    std::map<std::string, Expectation> expectations;
    for (const ExpectEntry& x : read_expect(e.dir)) {
      std::string why;
      if (auto parsed = parse_expectation(x.expect, why)) expectations[x.file] = *parsed;
    }
    for (const std::string& f : candidate_files(e.dir)) {
      SCOPED_TRACE(f);
      // Every candidate's front-matter is valid, traps included: a trap fails for the fault it
      // is about (a kernel signature, a compile error), never for a typo in its plan.
      try {
        const Candidate c = load_candidate(e.dir / f, *p);
        EXPECT_FALSE(c.source.launches.empty());
        // The lexer-level check of each launch against its kernel's parameters (count, pointer
        // or scalar) holds for every candidate not meant to fail at launch.
        const auto it = expectations.find(f);
        if (it != expectations.end() && !it->second.reasons.contains(Reason::launch_error)) {
          for (const Diagnostic& d : check_launch_signatures(*p, c.source, c.scratch))
            if (d.severity == Diagnostic::Severity::error) ADD_FAILURE() << format_diagnostic(d);
        }
      } catch (const SpecError& err) {
        // A trap whose plan is its fault (it asks for what the problem decides).
        const auto it = expectations.find(f);
        if (it == expectations.end() || !it->second.reasons.contains(Reason::launch_error))
          ADD_FAILURE() << "launch plan does not load: " << err.what();
      }
    }
  }
}

} // namespace
} // namespace kj
