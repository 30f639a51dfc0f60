// kj::suite::load_suite and the samples (kjudge/suite.hpp): the manifest read field by field
// and the samples from a folder or a JSON Lines file, every fault a SpecError naming its place.
#include "kjudge/suite.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "kjudge/error.hpp"

namespace kj::suite {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string text_field(const toml::table& t, const std::string& file, const std::string& where,
                       const char* key, bool required) {
  const toml::node* node = t.get(key);
  if (node == nullptr) {
    if (required) throw SpecError({file, fmt::format("{}.{}", where, key), 0, 0}, "missing");
    return {};
  }
  const auto value = node->value<std::string>();
  if (!value || value->empty())
    throw SpecError({file, fmt::format("{}.{}", where, key), static_cast<int>(node->source().begin.line), 0},
                    "must be a non-empty string");
  return *value;
}

} // namespace

Suite load_suite(const fs::path& dir) {
  const fs::path manifest = dir / "manifest.toml";
  const std::string file = manifest.string();
  std::error_code ec;
  if (!fs::is_regular_file(manifest, ec))
    throw SpecError({file, "", 0, 0}, "no manifest.toml: a suite is a folder of problems with one");
  toml::table root;
  try {
    root = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    throw SpecError({file, "", static_cast<int>(e.source().begin.line), static_cast<int>(e.source().begin.column)},
                    std::string(e.description()));
  }
  Suite s;
  s.dir = dir;
  s.name = fs::weakly_canonical(dir, ec).filename().string();
  const toml::array* problems = root["problem"].as_array();
  if (problems == nullptr || problems->empty())
    throw SpecError({file, "problem", 0, 0}, "no [[problem]] tables");
  std::set<std::string> names;
  for (std::size_t i = 0; i < problems->size(); ++i) {
    const std::string where = fmt::format("problem[{}]", i);
    const toml::table* t = (*problems)[i].as_table();
    if (t == nullptr) throw SpecError({file, where, 0, 0}, "must be a table");
    Entry e;
    e.name = text_field(*t, file, where, "name", true);
    e.dir = dir / text_field(*t, file, where, "path", true);
    if (const std::string c = text_field(*t, file, where, "category", false); !c.empty())
      e.category = c;
    if (!names.insert(e.name).second)
      throw SpecError({file, where + ".name", 0, 0}, fmt::format("'{}' is listed twice", e.name));
    e.kernelbench = !fs::is_regular_file(e.dir / "problem.toml", ec) &&
                    fs::is_regular_file(e.dir / "problem.py", ec);
    if (!e.kernelbench && !fs::is_regular_file(e.dir / "problem.toml", ec))
      throw SpecError({file, where + ".path", 0, 0},
                      fmt::format("{}: no problem.toml (or KernelBench problem.py) there",
                                  e.dir.string()));
    s.problems.push_back(std::move(e));
  }
  if (const toml::node* debug = root.get("debug")) {
    const toml::array* list = debug->as_array();
    if (list == nullptr) throw SpecError({file, "debug", 0, 0}, "must be a list of problem names");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const auto name = (*list)[i].value<std::string>();
      if (!name || !names.contains(*name))
        throw SpecError({file, fmt::format("debug[{}]", i), 0, 0}, "not a problem of the manifest");
      s.debug.push_back(*name);
    }
  }
  return s;
}

namespace {

std::vector<Sample> samples_from_folder(const fs::path& from, const Suite& suite) {
  std::map<std::string, const Entry*> known;
  for (const Entry& e : suite.problems) known[e.name] = &e;
  std::vector<Sample> samples;
  for (const auto& sub : fs::directory_iterator(from)) {
    if (!sub.is_directory()) continue;
    const std::string problem = sub.path().filename().string();
    if (!known.contains(problem))
      throw SpecError({sub.path().string(), "", 0, 0},
                      fmt::format("no problem '{}' in suite {}", problem, suite.name));
    const char* extension = known[problem]->kernelbench ? ".py" : ".cu";
    for (const auto& f : fs::directory_iterator(sub.path()))
      if (f.is_regular_file() && f.path().extension() == extension)
        samples.push_back({problem, f.path().stem().string(), f.path(), {}, json::object()});
  }
  return samples;
}

std::vector<Sample> samples_from_lines(const fs::path& from, const Suite& suite) {
  std::set<std::string> known;
  for (const Entry& e : suite.problems) known.insert(e.name);
  std::ifstream in(from);
  if (!in) throw SpecError({from.string(), "", 0, 0}, "cannot read the samples file");
  std::vector<Sample> samples;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const Location at{from.string(), "", number, 0};
    json j;
    try {
      j = json::parse(line);
    } catch (const json::parse_error& e) {
      throw SpecError(at, fmt::format("not JSON: {}", e.what()));
    }
    auto text = [&](const char* key) {
      if (!j.is_object() || !j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty())
        throw SpecError({at.file, key, number, 0}, "must be a non-empty string");
      return j[key].get<std::string>();
    };
    Sample s{text("problem"), text("sample_id"), {}, text("source"), json::object()};
    if (!known.contains(s.problem))
      throw SpecError({at.file, "problem", number, 0},
                      fmt::format("no problem '{}' in suite {}", s.problem, suite.name));
    if (j.contains("metadata")) {
      if (!j["metadata"].is_object())
        throw SpecError({at.file, "metadata", number, 0}, "must be an object");
      s.metadata = j["metadata"];
    }
    samples.push_back(std::move(s));
  }
  return samples;
}

// The suite's problem order, then the id; a repeated (problem, id) is refused.
void order_and_check(std::vector<Sample>& samples, const Suite& suite, const std::string& from) {
  std::map<std::string, std::size_t> rank;
  for (std::size_t i = 0; i < suite.problems.size(); ++i) rank[suite.problems[i].name] = i;
  std::sort(samples.begin(), samples.end(), [&](const Sample& a, const Sample& b) {
    return std::pair(rank[a.problem], a.id) < std::pair(rank[b.problem], b.id);
  });
  for (std::size_t i = 1; i < samples.size(); ++i)
    if (samples[i].problem == samples[i - 1].problem && samples[i].id == samples[i - 1].id)
      throw SpecError({from, "sample_id", 0, 0},
                      fmt::format("{}/{} appears twice", samples[i].problem, samples[i].id));
}

} // namespace

std::vector<Sample> load_samples(const fs::path& from, const Suite& suite) {
  std::error_code ec;
  std::vector<Sample> samples;
  if (fs::is_directory(from, ec))
    samples = samples_from_folder(from, suite);
  else if (fs::is_regular_file(from, ec))
    samples = samples_from_lines(from, suite);
  else
    throw SpecError({from.string(), "", 0, 0}, "--samples: no such folder or file");
  order_and_check(samples, suite, from.string());
  return samples;
}

std::vector<Sample> bundled_samples(const Suite& suite) {
  std::vector<Sample> samples;
  for (const Entry& e : suite.problems)
    for (const char* kind : {"solutions", "traps", "candidates"}) {
      std::error_code ec;
      if (!fs::is_directory(e.dir / kind, ec)) continue;
      for (const auto& f : fs::directory_iterator(e.dir / kind))
        if (f.is_regular_file() && f.path().extension() == (e.kernelbench ? ".py" : ".cu"))
          samples.push_back({e.name, fmt::format("{}/{}", kind, f.path().stem().string()), f.path(),
                             {}, json::object()});
    }
  order_and_check(samples, suite, suite.dir.string());
  return samples;
}

} // namespace kj::suite
