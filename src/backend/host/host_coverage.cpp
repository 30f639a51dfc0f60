// read_line_coverage (kjudge/host_backend.hpp): a coverage build's counters, which the candidate's
// worker handed out, turned into the lines of the candidate that ran. The counters are written
// as gcov's data file beside a copy of the build's notes, and the compiler's own gcov reads the
// two (confined as a build step: the data is the candidate's memory) into its JSON form.
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>

#include "backend/host/host_tools.hpp"
#include "kjudge/host_backend.hpp"
#include "kjudge/spec.hpp"
#include "util/private_folder.hpp"

namespace kj {

namespace fs = std::filesystem;

namespace {

// The one translation unit's data file in kj_host_coverage's output: [length, 4 bytes
// little-endian][data]. Empty when the output is not exactly one such record.
std::span<const std::byte> only_record(std::span<const std::byte> counters) {
  if (counters.size() < 4) return {};
  std::size_t length = 0;
  for (int b = 0; b < 4; ++b)
    length |= static_cast<std::size_t>(counters[static_cast<std::size_t>(b)]) << (8 * b);
  if (length == 0 || length != counters.size() - 4) return {};
  return counters.subspan(4);
}

// gcov's JSON (after any complaints gcov wrote before it) as line -> ran.
std::optional<std::map<unsigned, bool>> lines_in_report(const std::string& text,
                                                       std::string_view code_file) {
  const std::size_t at = text.find("{\"gcc_version\"");
  if (at == std::string::npos) return std::nullopt;
  const nlohmann::json report = nlohmann::json::parse(text.substr(at), nullptr, false);
  if (report.is_discarded() || !report.contains("files") || !report["files"].is_array())
    return std::nullopt;
  std::map<unsigned, bool> ran;
  for (const nlohmann::json& file : report["files"]) {
    if (!file.is_object() || file.value("file", std::string()) != code_file) continue;
    if (!file.contains("lines") || !file["lines"].is_array()) continue;
    for (const nlohmann::json& line : file["lines"]) {
      if (!line.is_object() || !line.contains("line_number") || !line.contains("count")) continue;
      const auto number = line["line_number"].get<long long>();
      if (number <= 0 || number > (1 << 24)) continue;
      // A line in several functions (a template's instances) ran if any of them ran it.
      bool& r = ran[static_cast<unsigned>(number)];
      r = r || line["count"].get<double>() > 0;
    }
  }
  return ran;
}

} // namespace

std::optional<LineCoverage> read_line_coverage(const fs::path& shared_object,
                                               std::span<const std::byte> counters,
                                               std::string_view file_name,
                                               const HostCompileOptions& options,
                                               std::string& why) {
  const std::span<const std::byte> data = only_record(counters);
  if (data.empty()) {
    why = counters.empty() ? "the build has no counters (no device code of the candidate's)"
                           : "the counters are malformed";
    return std::nullopt;
  }
  const fs::path notes = detail::coverage_notes(shared_object);
  // mkdtemp's name, not a predictable one: a folder made first by another user (or a link of
  // theirs) would take kjudge's writes.
  const fs::path dir = util::new_private_temp_folder("kjudge-coverage");
  std::error_code ec;
  auto cleanup = [&] { fs::remove_all(dir, ec); };
  fs::copy_file(notes, dir / "module.gcno", ec);
  if (ec) {
    why = fmt::format("the build's notes {} cannot be read: {}", notes.string(), ec.message());
    cleanup();
    return std::nullopt;
  }
  {
    std::ofstream f(dir / "module.gcda", std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  }
  std::string text;
  try {
    // The compiler's own gcov: a data file is read only by the version that wrote it.
    fs::path gcov = detail::resolve_program(options.compiler).parent_path() / "gcov";
    if (!fs::exists(gcov, ec)) gcov = detail::resolve_program("gcov");
    text = detail::run_host_tool(
        {gcov.string(), "--json-format", "--stdout", (dir / "module.gcda").string()},
        dir / "gcov.log", dir, options, file_name, "gcov does not read the counters of");
  } catch (const std::exception& e) {
    why = e.what();
    cleanup();
    return std::nullopt;
  }
  cleanup();
  const std::optional<std::map<unsigned, bool>> ran = lines_in_report(text, code_name(file_name));
  if (!ran) {
    why = "gcov's report does not parse";
    return std::nullopt;
  }
  LineCoverage out;
  for (const auto& [line, r] : *ran) {
    out.lines.push_back(line);
    if (!r) out.unrun.push_back(line);
  }
  return out;
}

} // namespace kj
