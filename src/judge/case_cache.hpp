// The oracle's cases kept between checks (CheckOptions::case_cache; `kjudge serve` keeps one):
// a case's inputs, golden and reference depend only on the problem, the backend and the case,
// so a judge that sees many candidates of one problem makes each case once. Entries are keyed
// by the problem's hash, the backend, the device, whether the golden was made ("H|B|D|G|"), and
// the case id; beyond the budget, other problems' least recently used entries make room, and a
// problem's own cases are kept as they came (the first that fit). On the CUDA backend the cache
// also holds a CUDA context, which keeps the device's primary context, and with it the cached
// device buffers (the master inputs), alive between checks. The judges of one device (serve's
// --jobs, `kjudge run`) share one cache: a case that several of them need at once is made by
// the first, the others wait for it (three judges of one problem made each case three times).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "judge/case_oracle.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/judge.hpp"

namespace kj {

class CaseCache {
public:
  explicit CaseCache(std::uint64_t max_bytes) : max_bytes_(max_bytes) {}

  // The entry under `key` (a hit); while another caller is making it, waits for that one. Null
  // (a miss): the caller makes the entry and passes it to insert, or calls abandon, in either
  // case once; a caller that waited and still finds nothing makes its own without a claim.
  std::shared_ptr<const judge::CaseData> find(const std::string& key);
  // Keeps `data` (`bytes` of host and device memory) under `key` ("H|B|D|G|case"), dropping
  // other problems' least recently used entries while over the budget; when that is not enough
  // (or the entry is larger than the budget) it is not kept. Ends the caller's claim.
  void insert(const std::string& key, std::shared_ptr<const judge::CaseData> data,
              std::uint64_t bytes);
  // The claim of a miss ends without an entry (the making threw).
  void abandon(const std::string& key);
  CaseCacheStats stats() const;
  // Drops every entry, then the context: after a CUDA error in the oracle, whose context may be
  // lost for good, the next check starts on a fresh one.
  void clear();

  // The context that keeps the device's primary context, in which the cached device buffers
  // live, from being released between checks: the first one offered (`offered`) unless one is
  // kept already. Every CudaContext of a device shares its primary context, so a judge's own
  // context (and stream) uses the buffers another judge made.
  std::shared_ptr<CudaContext> keep_context(std::shared_ptr<CudaContext> offered);

private:
  void keep(const std::string& key, std::shared_ptr<const judge::CaseData> data,
            std::uint64_t bytes); // under mutex_
  struct Entry {
    std::shared_ptr<const judge::CaseData> data;
    std::uint64_t bytes = 0;
    std::list<std::string>::iterator at; // in recent_
  };
  std::uint64_t max_bytes_;
  std::uint64_t bytes_ = 0, hits_ = 0, misses_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable made_; // a claim ended
  std::map<std::string, Entry> entries_;
  std::list<std::string> recent_; // most recent first
  std::set<std::string> making_;  // claimed keys: a caller is making them
  std::shared_ptr<CudaContext> context_;
};

} // namespace kj
