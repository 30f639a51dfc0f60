// A fixed set of threads that run submitted tasks in submission order of start, each task's
// result handed back through a future. `kjudge check` compares case k on the host while the GPU
// already runs case k+1, and compares several cases at once on machines with many cores. The
// threads live as long as the pool, so each keeps its thread-local comparator scratch (about a
// gigabyte for a 2^24-element output) from one case to the next instead of faulting it in anew.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace kj::judge {

class TaskPool {
public:
  explicit TaskPool(unsigned threads);
  // Waits for every task already submitted, then joins the threads.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  template <class F>
  auto submit(F task) -> std::future<decltype(task())> {
    using Result = decltype(task());
    auto packaged = std::make_shared<std::packaged_task<Result()>>(std::move(task));
    std::future<Result> result = packaged->get_future();
    enqueue([packaged] { (*packaged)(); });
    return result;
  }

  unsigned size() const { return static_cast<unsigned>(threads_.size()); }
  // Blocks until every task submitted so far has finished: what a caller whose tasks borrow its
  // locals must do before they go, even when it leaves by an exception.
  void wait_idle();

private:
  void enqueue(std::function<void()> job);
  void serve();

  std::mutex mutex_;
  std::condition_variable ready_, idle_;
  std::size_t unfinished_ = 0; // queued or running
  std::deque<std::function<void()>> queue_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

// How many comparison threads a check should use for outputs of `elements_per_case` elements
// in all: the machine's cores less one for the GPU-driving thread, at most `cap`, and no more
// than half the available memory allows (each thread keeps about 100 bytes of scratch and
// in-flight copies per element). At least one.
unsigned comparison_threads(std::uint64_t elements_per_case, unsigned cap = 16);

} // namespace kj::judge
