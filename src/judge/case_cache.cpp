// CaseCache: a map of the oracle's cases with a least-recently-used list over it.
#include "judge/case_cache.hpp"

#include <utility>

namespace kj {

std::shared_ptr<const judge::CaseData> CaseCache::find(const std::string& key) {
  std::unique_lock<std::mutex> lock(mutex_);
  const bool waited = making_.contains(key);
  made_.wait(lock, [&] { return !making_.contains(key); });
  const auto it = entries_.find(key);
  if (it == entries_.end()) {
    ++misses_;
    if (!waited) making_.insert(key);
    return nullptr;
  }
  ++hits_;
  recent_.splice(recent_.begin(), recent_, it->second.at);
  return it->second.data;
}

void CaseCache::abandon(const std::string& key) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    making_.erase(key);
  }
  made_.notify_all();
}

void CaseCache::insert(const std::string& key, std::shared_ptr<const judge::CaseData> data,
                       std::uint64_t bytes) {
  {
    // The claim ends with the entry in place, under one lock: a waiter that wakes finds it.
    const std::lock_guard<std::mutex> lock(mutex_);
    making_.erase(key);
    keep(key, std::move(data), bytes);
  }
  made_.notify_all();
}

void CaseCache::keep(const std::string& key, std::shared_ptr<const judge::CaseData> data,
                     std::uint64_t bytes) {
  if (bytes > max_bytes_ || entries_.contains(key)) return;
  // Room is made from other problems' entries, least recently used first, never from this
  // one's: a check asks for its cases in the same order every time, and evicting them in turn
  // (plain LRU over a working set larger than the budget) would keep none of them.
  const std::string problem = key.substr(0, key.rfind('|') + 1);
  for (auto it = recent_.end(); bytes_ + bytes > max_bytes_ && it != recent_.begin();) {
    --it;
    if (it->starts_with(problem)) continue;
    const auto entry = entries_.find(*it);
    bytes_ -= entry->second.bytes;
    entries_.erase(entry);
    it = recent_.erase(it);
  }
  if (bytes_ + bytes > max_bytes_) return; // the cases already kept stay
  recent_.push_front(key);
  entries_[key] = Entry{std::move(data), bytes, recent_.begin()};
  bytes_ += bytes;
}

void CaseCache::clear() {
  const std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  recent_.clear();
  bytes_ = 0;
  context_.reset();
}

std::shared_ptr<CudaContext> CaseCache::keep_context(std::shared_ptr<CudaContext> offered) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!context_) context_ = std::move(offered);
  return context_;
}

CaseCacheStats CaseCache::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return {hits_, misses_, entries_.size(), bytes_};
}

std::shared_ptr<CaseCache> make_case_cache(std::uint64_t max_bytes) {
  return std::make_shared<CaseCache>(max_bytes);
}

CaseCacheStats case_cache_stats(const CaseCache& cache) {
  return cache.stats();
}

} // namespace kj
