// TaskPool (task_pool.hpp) and the sizing rule of the comparison threads.
#include "judge/task_pool.hpp"

#include <algorithm>
#include <fstream>
#include <string>

namespace kj::judge {

TaskPool::TaskPool(unsigned threads) {
  threads = std::max(threads, 1u);
  for (unsigned i = 0; i < threads; ++i)
    threads_.emplace_back([this] { serve(); });
}

TaskPool::~TaskPool() {
  {
    const std::lock_guard lock(mutex_);
    closing_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_)
    t.join();
}

void TaskPool::enqueue(std::function<void()> job) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(job));
    ++unfinished_;
  }
  ready_.notify_one();
}

void TaskPool::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return unfinished_ == 0; });
}

void TaskPool::serve() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return; // closing, and nothing left to run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job(); // a packaged_task: an exception lands in its future
    {
      const std::lock_guard lock(mutex_);
      if (--unfinished_ == 0) idle_.notify_all();
    }
  }
}

namespace {

// MemAvailable of /proc/meminfo in bytes; 0 when unknown.
std::uint64_t available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

} // namespace

unsigned comparison_threads(std::uint64_t elements_per_case, unsigned cap) {
  const unsigned cores = std::max(std::thread::hardware_concurrency(), 2u);
  unsigned threads = std::min(cores - 1, cap);
  const std::uint64_t memory = available_memory();
  constexpr std::uint64_t bytes_per_element = 100;
  if (memory > 0 && elements_per_case > 0) {
    const std::uint64_t fit = memory / 2 / (bytes_per_element * elements_per_case);
    threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, fit));
  }
  return std::max(threads, 1u);
}

} // namespace kj::judge
