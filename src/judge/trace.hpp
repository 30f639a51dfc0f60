// Where a check's time goes, for whoever tunes kjudge: with KJUDGE_TRACE=1 in the environment,
// kj::check adds up the wall time of its phases (the oracle's set-up and its cases, the
// candidate's start and runs, the comparisons, the waits for them) and writes one line per
// phase to standard error when it ends: `kjudge-trace PHASE: TOTAL ms in N (MEAN ms each)`.
// Without the variable every call is a branch on a cached flag. Phases may overlap (the
// comparisons run on a pool beside the GPU work), so the totals do not add up to the wall time.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace kj::judge {

class PhaseTrace {
public:
  PhaseTrace() : on_(enabled()) {}
  ~PhaseTrace() {
    if (!on_) return;
    for (const auto& [name, t] : totals_)
      std::fprintf(stderr, "kjudge-trace %s: %.1f ms in %d (%.2f ms each)\n", name.c_str(),
                   t.ms, t.count, t.count > 0 ? t.ms / t.count : 0.0);
  }
  PhaseTrace(const PhaseTrace&) = delete;
  PhaseTrace& operator=(const PhaseTrace&) = delete;

  // Times the scope it lives in as one occurrence of `phase`.
  class Scope {
  public:
    Scope(PhaseTrace& trace, const char* phase) : Scope(&trace, phase) {}
    // No trace (nullptr): nothing is timed.
    Scope(PhaseTrace* trace, const char* phase)
        : trace_(trace != nullptr && trace->on_ ? trace : nullptr), phase_(phase) {
      if (trace_) start_ = std::chrono::steady_clock::now();
    }
    ~Scope() {
      if (!trace_) return;
      const double ms = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start_)
                            .count();
      const std::lock_guard<std::mutex> lock(trace_->mutex_);
      Total& t = trace_->totals_[phase_];
      t.ms += ms;
      ++t.count;
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

  private:
    PhaseTrace* trace_;
    const char* phase_;
    std::chrono::steady_clock::time_point start_;
  };

private:
  static bool enabled() {
    static const bool on = [] {
      const char* v = std::getenv("KJUDGE_TRACE");
      return v != nullptr && std::string(v) == "1";
    }();
    return on;
  }
  struct Total {
    double ms = 0;
    int count = 0;
  };
  bool on_;
  std::mutex mutex_;
  std::map<std::string, Total> totals_;
};

} // namespace kj::judge
