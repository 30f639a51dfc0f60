// SpareWorkers (spare_workers.hpp).
#include "worker/spare_workers.hpp"

#include <chrono>

namespace kj {

std::unique_ptr<judge::WorkerProcess> SpareWorkers::take(const std::vector<std::string>& argv) {
  std::unique_ptr<judge::WorkerProcess> taken;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto it = waiting_.find(argv);
    if (it != waiting_.end() && it->second->alive()) {
      taken = std::move(it->second);
      ++stats_.taken_ready;
    } else {
      ++stats_.started_on_demand;
    }
  }
  if (!taken) taken = std::make_unique<judge::WorkerProcess>(argv);
  // The next one starts now, in its own process, while this check runs. Failing to start it is
  // not this check's failure: the next call starts one on demand.
  std::unique_ptr<judge::WorkerProcess> next;
  try {
    next = std::make_unique<judge::WorkerProcess>(argv);
  } catch (const std::exception&) {
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  waiting_[argv] = std::move(next);
  return taken;
}

SpareWorkers::~SpareWorkers() {
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

} // namespace kj
