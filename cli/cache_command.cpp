// `kjudge cache stats|clear`: what the NVRTC cache, the oracle's case cache and the KernelBench
// build cache (kernelbench-builds/ in the NVRTC cache's folder) hold on disk, or emptying them;
// and the folders they default to, which `check`, `bench`, `serve` and `run` share.
#include <cstdlib>
#include <filesystem>
#include <ostream>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app.hpp"
#include "kjudge/cache_folders.hpp"
#include "kjudge/error.hpp"

namespace kj::cli {

namespace fs = std::filesystem;

namespace {

// A folder an option names must be a folder where it exists (a missing one holds nothing).
fs::path checked_folder(const fs::path& dir, const char* option) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw SpecError({dir.string(), option, 0, 0}, "not a folder");
  return dir;
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

nlohmann::json folder_json(const CacheFolderFacts& f, bool cases) {
  nlohmann::json j = {{"dir", f.dir.string()}, {"entries", f.entries}, {"bytes", f.bytes}};
  if (!cases) return j;
  j["declined"] = f.declined;
  nlohmann::json entries = nlohmann::json::array();
  for (const CacheEntryFacts& e : f.per_entry)
    entries.push_back({{"key", e.key}, {"bytes", e.bytes}, {"make_s", e.make_s}});
  j["per_entry"] = std::move(entries);
  return j;
}

void print_folder(std::ostream& out, const char* what, const CacheFolderFacts& f, bool cases) {
  out << what << " " << f.dir.string() << ": ";
  if (!f.exists) {
    out << "no such folder (empty)\n";
    return;
  }
  out << f.entries << (f.entries == 1 ? " entry, " : " entries, ") << mib(f.bytes);
  if (cases) out << ", " << f.declined << " declined (read slower than made)";
  out << "\n";
  if (!cases) return;
  // Per entry: the key's first 16 digits, its size, and how long its case took to make.
  for (const CacheEntryFacts& e : f.per_entry)
    out << fmt::format("    {}  {:>10}  made in {:.3f} s\n", e.key.substr(0, 16), mib(e.bytes),
                       e.make_s);
}

} // namespace

fs::path default_cache_dir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return fs::path(xdg) / "kjudge";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0')
    return fs::path(home) / ".cache" / "kjudge";
  return {}; // nowhere to cache: compile every time
}

fs::path case_cache_dir_of(const std::string& option_value) {
  if (option_value == "off") return {};
  if (!option_value.empty()) return checked_folder(option_value, "--case-cache-dir");
  const fs::path base = default_cache_dir();
  return base.empty() ? fs::path() : base / "cases";
}

int run_cache(const CacheArgs& a, std::ostream& out, std::ostream&) {
  const fs::path nvrtc_dir =
      checked_folder(a.cache.empty() ? default_cache_dir() : fs::path(a.cache), "--cache");
  const fs::path case_dir = case_cache_dir_of(a.case_cache_dir);
  const fs::path builds_dir = nvrtc_dir.empty() ? fs::path() : nvrtc_dir / "kernelbench-builds";
  if (a.action == "clear") {
    const std::uint64_t nvrtc = nvrtc_dir.empty() ? 0 : clear_nvrtc_cache(nvrtc_dir);
    const std::uint64_t cases = case_dir.empty() ? 0 : clear_case_cache(case_dir);
    const std::uint64_t builds = builds_dir.empty() ? 0 : clear_kernelbench_builds(builds_dir);
    if (a.json) {
      out << nlohmann::json{{"nvrtc_cache", {{"dir", nvrtc_dir.string()}, {"removed", nvrtc}}},
                            {"case_cache", {{"dir", case_dir.string()}, {"removed", cases}}},
                            {"kernelbench_builds",
                             {{"dir", builds_dir.string()}, {"removed", builds}}}}
                 .dump(2)
          << "\n";
    } else {
      if (!nvrtc_dir.empty())
        out << "NVRTC cache " << nvrtc_dir.string() << ": " << nvrtc << " files removed\n";
      if (!case_dir.empty())
        out << "case cache " << case_dir.string() << ": " << cases << " files removed\n";
      if (!builds_dir.empty())
        out << "KernelBench build cache " << builds_dir.string() << ": " << builds
            << " builds removed\n";
    }
    return 0;
  }
  const CacheFolderFacts nvrtc = nvrtc_cache_facts(nvrtc_dir);
  const CacheFolderFacts cases = case_cache_facts(case_dir);
  const CacheFolderFacts builds = kernelbench_build_facts(builds_dir);
  if (a.json) {
    nlohmann::json j = {
        {"nvrtc_cache", nvrtc_dir.empty() ? nlohmann::json() : folder_json(nvrtc, false)},
        {"case_cache", case_dir.empty() ? nlohmann::json() : folder_json(cases, true)},
        {"kernelbench_builds", builds_dir.empty() ? nlohmann::json() : folder_json(builds, false)}};
    out << j.dump(2) << "\n";
    return 0;
  }
  if (!nvrtc_dir.empty()) print_folder(out, "NVRTC cache", nvrtc, false);
  if (!case_dir.empty()) print_folder(out, "case cache", cases, true);
  if (!builds_dir.empty()) print_folder(out, "KernelBench build cache", builds, false);
  return 0;
}

} // namespace kj::cli
