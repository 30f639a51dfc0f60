// What kjudge's on-disk caches hold, and emptying them (`kjudge cache stats|clear`): the NVRTC
// cache (CheckOptions::cache_dir, its `.kjc` entries), the oracle's case cache
// (CheckOptions::case_cache_dir) and the KernelBench build cache (kjudge.kernelbench.build: a
// folder per candidate source under the NVRTC cache's kernelbench-builds/). Only files kjudge
// writes there are counted or removed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kj {

// One case cache entry: its key, its bytes, and how long making its case took.
struct CacheEntryFacts {
  std::string key;
  std::uint64_t bytes = 0;
  double make_s = 0;
};

struct CacheFolderFacts {
  std::filesystem::path dir;
  bool exists = false;
  std::uint64_t entries = 0, bytes = 0;
  std::uint64_t declined = 0;                // case cache: markers of cases not stored
  std::vector<CacheEntryFacts> per_entry;    // case cache: most recently used first
};

CacheFolderFacts nvrtc_cache_facts(const std::filesystem::path& dir);
CacheFolderFacts case_cache_facts(const std::filesystem::path& dir);
// Each removes the folder's entries, markers and temporary files (nothing else) and returns
// how many files went.
std::uint64_t clear_nvrtc_cache(const std::filesystem::path& dir);
std::uint64_t clear_case_cache(const std::filesystem::path& dir);
// `dir` is the build cache's own folder (NVRTC cache/kernelbench-builds): its entries are the
// folders named by a 64-digit key that hold a build.json; clearing removes them (and builds
// left half made, .entry-*) and returns how many folders went.
CacheFolderFacts kernelbench_build_facts(const std::filesystem::path& dir);
std::uint64_t clear_kernelbench_builds(const std::filesystem::path& dir);

} // namespace kj
