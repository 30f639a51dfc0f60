// Worker processes started ahead of need (CheckOptions::spare_workers; `kjudge serve` keeps
// them): a check in a long-lived judge takes a worker that is already past its process start
// and, for a CUDA worker, its driver initialisation and context (about 150 ms on an H200), and
// another is started in its place to get ready while the check runs. A spare has never seen a
// candidate, and each is used by one check only: no candidate's state reaches the next. Used
// workers end off the judge's path too (retire): a CUDA worker's exit, which tears down its
// context, takes tens of milliseconds nobody needs to wait for.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "worker/worker_process.hpp"
#include "kjudge/judge.hpp"

namespace kj {

class SpareWorkers {
public:
  SpareWorkers() = default;
  ~SpareWorkers(); // waits for the retiring workers to end
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
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<judge::WorkerProcess>> waiting_;
  SpareWorkerStats stats_;
  std::vector<std::future<void>> retiring_;
};

} // namespace kj
