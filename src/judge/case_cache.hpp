// The oracle's cases kept between checks (CheckOptions::case_cache; `kjudge serve` keeps one):
// a case's inputs, golden and reference depend only on the problem, the backend and the case,
// so a judge that sees many candidates of one problem makes each case once. Entries are keyed
// by the problem's hash, the backend, the device, whether the golden was made ("H|B|D|G|"), and
// the case id; beyond the budget, other problems' least recently used entries make room, and a
// problem's own cases are kept as they came (the first that fit). On the CUDA backend the cache
// also holds a CUDA context, which keeps the device's primary context, and with it the cached
// device buffers (the master inputs), alive between checks.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "judge/case_oracle.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/judge.hpp"

namespace kj {

class CaseCache {
public:
  explicit CaseCache(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The entry under `key`, or null (counted as a hit or a miss).
  std::shared_ptr<const judge::CaseData> find(const std::string& key);
  // Keeps `data` (`bytes` of host and device memory) under `key` ("H|B|D|G|case"), dropping
  // other problems' least recently used entries while over the budget; when that is not enough
  // (or the entry is larger than the budget) it is not kept.
  void insert(const std::string& key, std::shared_ptr<const judge::CaseData> data,
              std::uint64_t bytes);
  CaseCacheStats stats() const;
  // Drops every entry, then the context: after a CUDA error in the oracle, whose context may be
  // lost for good, the next check starts on a fresh one.
  void clear();

  // The CUDA context the cached device buffers live in (null until a CUDA check makes one).
  std::shared_ptr<CudaContext> context;

private:
  struct Entry {
    std::shared_ptr<const judge::CaseData> data;
    std::uint64_t bytes = 0;
    std::list<std::string>::iterator at; // in recent_
  };
  std::uint64_t max_bytes_;
  std::uint64_t bytes_ = 0, hits_ = 0, misses_ = 0;
  std::map<std::string, Entry> entries_;
  std::list<std::string> recent_; // most recent first
};

} // namespace kj
