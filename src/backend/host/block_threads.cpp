// kjudge's block threads (kjudge/host_backend.hpp): a fixed set of CPU threads per process that
// the emulation's launches run their blocks on, so a module never starts a thread itself and the
// host worker can refuse `clone` once they exist.
#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "kjudge/host_backend.hpp"

namespace kj {

namespace {

class BlockThreads {
public:
  explicit BlockThreads(unsigned count) {
    for (unsigned i = 0; i < count; ++i)
      threads_.emplace_back([this] { serve(); });
  }
  ~BlockThreads() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_)
      t.join();
  }

  unsigned size() const { return static_cast<unsigned>(threads_.size()); }

  void run(unsigned count, void (*work)(void*), void* context) {
    const std::lock_guard one_launch(launch_);
    std::unique_lock lock(mutex_);
    work_ = work;
    context_ = context;
    wanted_ = std::min(count, size());
    taken_ = finished_ = 0;
    ++generation_;
    lock.unlock();
    wake_.notify_all();
    lock.lock();
    done_.wait(lock, [&] { return finished_ == wanted_; });
  }

private:
  void serve() {
    unsigned long long seen = 0;
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || (generation_ != seen && taken_ < wanted_); });
      if (stopping_) return;
      seen = generation_; // this thread takes part in a launch once
      ++taken_;
      void (*work)(void*) = work_;
      void* context = context_;
      lock.unlock();
      work(context);
      lock.lock();
      if (++finished_ == wanted_) done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex launch_, mutex_;
  std::condition_variable wake_, done_;
  void (*work_)(void*) = nullptr;
  void* context_ = nullptr;
  unsigned wanted_ = 0, taken_ = 0, finished_ = 0;
  unsigned long long generation_ = 0;
  bool stopping_ = false;
};

std::mutex g_mutex;
std::unique_ptr<BlockThreads> g_threads; // lives until exit

// The child of a fork has none of the parent's threads: it forgets the parent's set (leaked, as
// its threads and locks are not there to release) and starts its own on first use.
void forget_threads_in_child() {
  (void)g_threads.release();
  new (&g_mutex) std::mutex;
}

BlockThreads& block_threads(unsigned count) {
  static const bool registered = ::pthread_atfork(nullptr, nullptr, forget_threads_in_child) == 0;
  (void)registered;
  const std::lock_guard lock(g_mutex);
  if (!g_threads) g_threads = std::make_unique<BlockThreads>(std::max(1u, count));
  return *g_threads;
}

} // namespace

void start_block_threads(unsigned count) { (void)block_threads(count); }

void run_on_block_threads(unsigned count, void (*work)(void*), void* context) {
  if (count <= 1) {
    work(context);
    return;
  }
  block_threads(std::min(64u, std::max(1u, std::thread::hardware_concurrency()))).run(count, work, context);
}

} // namespace kj
