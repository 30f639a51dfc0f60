// One check's options resolved once: what the caller asked (CheckOptions, held by reference and
// never copied field by field) and what the check decided from it and from the machine: the
// backend, the defences in force, where kjudge/device.cuh lives, and the limits a run is held to.
// Every part of a check (backends, runners, the case loop, the timing loop) reads its options
// here.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "judge/defences.hpp"
#include "judge/trace.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/verdict.hpp"

namespace kj::judge {

class KernelUnderTest;

struct CheckSettings {
  explicit CheckSettings(const CheckOptions& options) : asked(options) {}

  const CheckOptions& asked;
  Backend backend = Backend::cuda; // never automatic
  Defences defences;
  std::filesystem::path kjudge_include; // the folder holding kjudge/device.cuh
  // Per run: its deadline is max(factor x the reference's time x slowdown, deadline_min_s) plus
  // the copies' allowance (run_deadline_s); its buffers may hold at most memory_cap bytes (the
  // device's memory, or half the host's; 0: no cap), past which the plan is a launch_error.
  double deadline_min_s = 1;
  double slowdown = 1; // host backend: its checked build over the uninstrumented reference
  std::uint64_t memory_cap = 0;
  double time_budget_s = 0; // the candidate's run time over the check (0: none)
  PhaseTrace* trace = nullptr;
  // The check's start: the GPU bench's warm-up counts busy time from here (the check's own runs
  // keep the GPU busy).
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  // The --against kernel once started (null without --against): the GPU bench's timing loop
  // times it beside the candidate (TimingLoop::against), as the case loop does on the host.
  KernelUnderTest* against_kernel = nullptr;

  // The isolation switch: the CUDA worker's session runs inside the oracle's process.
  bool in_process() const { return !defences.isolation; }
};

// The test switches in force, the device header's folder, the worker executable, and the
// backend's per-run limits and time budget, from `settings.asked` (settings.backend already
// chosen). Returns why a check cannot go on (ERROR(internal)); `v` gets the defences disabled.
std::optional<std::string> resolve_check_settings(CheckSettings& settings, Verdict& v);

} // namespace kj::judge
