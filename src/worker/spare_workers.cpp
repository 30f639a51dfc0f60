// SpareWorkers (spare_workers.hpp).
#include "worker/spare_workers.hpp"

#include <chrono>

namespace kj {

std::unique_ptr<judge::WorkerProcess> SpareWorkers::take(const std::vector<std::string>& argv) {
  std::unique_ptr<judge::WorkerProcess> taken;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // One on its way is sooner than one started now.
    changed_.wait(lock, [&] { return !starting_.contains(argv); });
    const auto it = waiting_.find(argv);
    if (it != waiting_.end() && it->second && it->second->alive()) {
      taken = std::move(it->second);
      ++stats_.taken_ready;
    } else {
      ++stats_.started_on_demand;
    }
    // The next one starts now, on the starter thread, while this check runs.
    starting_.insert(argv);
    queue_.push_back(argv);
  }
  changed_.notify_all();
  if (!taken) taken = std::make_unique<judge::WorkerProcess>(argv);
  return taken;
}

SpareWorkers::SpareWorkers() : starter_([this] { start_spares(); }) {}

void SpareWorkers::start_spares() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    const std::vector<std::string> argv = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    // Failing to start one is not a check's failure: the next call starts one on demand.
    std::unique_ptr<judge::WorkerProcess> next;
    try {
      next = std::make_unique<judge::WorkerProcess>(argv);
    } catch (const std::exception&) {
    }
    lock.lock();
    waiting_[argv] = std::move(next);
    starting_.erase(argv);
    changed_.notify_all();
  }
}

SpareWorkers::~SpareWorkers() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  starter_.join();
  for (auto& r : retiring_)
    r.wait();
}

void SpareWorkers::retire(std::unique_ptr<judge::WorkerLink> worker) {
  if (!worker) return;
  const std::lock_guard<std::mutex> lock(mutex_);
  std::erase_if(retiring_, [](const std::future<void>& r) {
    return r.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  });
  // The destructor asks the worker to exit and waits for it.
  retiring_.push_back(
      std::async(std::launch::async, [w = std::move(worker)]() mutable { w.reset(); }));
}

SpareWorkerStats SpareWorkers::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::shared_ptr<SpareWorkers> make_spare_workers() { return std::make_shared<SpareWorkers>(); }

SpareWorkerStats spare_worker_stats(const SpareWorkers& spares) { return spares.stats(); }

void KeptWorker::keep(std::unique_ptr<judge::WorkerLink> worker) {
  const std::lock_guard<std::mutex> lock(mutex_);
  held_ = std::move(worker);
}

std::unique_ptr<judge::WorkerLink> KeptWorker::take() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::move(held_);
}

void KeptWorker::count_reuse() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++reuses_;
}

std::uint64_t KeptWorker::reuses() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return reuses_;
}

std::shared_ptr<KeptWorker> make_kept_worker() { return std::make_shared<KeptWorker>(); }

std::uint64_t kept_worker_reuses(const KeptWorker& kept) { return kept.reuses(); }

} // namespace kj
