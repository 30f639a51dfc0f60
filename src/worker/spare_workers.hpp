// Worker processes started ahead of need (CheckOptions::spare_workers; `kjudge serve` keeps
// them): a check in a long-lived judge takes a worker that is already past its process start
// and, for a CUDA worker, its driver initialisation and context (about 150 ms on an H200), and
// another is started in its place to get ready while the check runs. A spare has never seen a
// candidate, and each is used by one check only: no candidate's state reaches the next. Used
// workers end off the judge's path too (retire): a CUDA worker's exit, which tears down its
// context, takes tens of milliseconds nobody needs to wait for. Spares are started by a thread
// of this object's own: a worker dies with the thread that started it (PR_SET_PDEATHSIG), and
// the thread that takes one may end before the spare it caused is used (a campaign's threads).
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "worker/worker_process.hpp"
#include "kjudge/judge.hpp"

namespace kj {

class SpareWorkers {
public:
  SpareWorkers();
  ~SpareWorkers(); // stops the starter, waits for the retiring workers to end
  SpareWorkers(const SpareWorkers&) = delete;
  SpareWorkers& operator=(const SpareWorkers&) = delete;

  // A worker started with `argv` (WorkerProcess's): the one waiting, or a new one; either way
  // another with the same `argv` is started to wait for the next call.
  std::unique_ptr<judge::WorkerProcess> take(const std::vector<std::string>& argv);
  // Ends a used worker on another thread (asked to exit, reaped, killed if it lingers).
  void retire(std::unique_ptr<judge::WorkerLink> worker);
  // How many calls found a worker waiting, and how many did not.
  SpareWorkerStats stats() const;

private:
  void start_spares(); // the starter thread's loop

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<std::string>> queue_; // argv of spares for the starter, in order
  std::set<std::vector<std::string>> starting_; // queued or being started
  bool stopping_ = false;
  std::map<std::vector<std::string>, std::unique_ptr<judge::WorkerProcess>> waiting_;
  SpareWorkerStats stats_;
  std::vector<std::future<void>> retiring_;
  std::thread starter_; // last: it starts once the members above exist
};

// A worker left by one runner for the next (CheckOptions::kept_worker, kjudge/judge.hpp).
class KeptWorker {
public:
  void keep(std::unique_ptr<judge::WorkerLink> worker); // a healthy worker, after its last run
  std::unique_ptr<judge::WorkerLink> take();            // null when none is kept
  void count_reuse();
  std::uint64_t reuses() const;

private:
  mutable std::mutex mutex_;
  std::unique_ptr<judge::WorkerLink> held_;
  std::uint64_t reuses_ = 0;
};

} // namespace kj
