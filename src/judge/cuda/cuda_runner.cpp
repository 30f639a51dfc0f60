// Driving an untrusted kernel through its CUDA worker (cuda_runner.hpp). Everything the worker
// says is checked against what was asked (buffer names and sizes) before its memory is read; the
// verdict-relevant facts (red zones, inputs, outputs) are read by the oracle from the worker's
// allocations, never taken from the reply.
#include "judge/cuda/cuda_runner.hpp"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <map>

#include <fmt/format.h>

#include "judge/findings.hpp"
#include "judge/defences.hpp"
#include "worker/messages.hpp"
#include "kjudge/device_compare.hpp"
#include "kjudge/error.hpp"
#include "kjudge/static_scan.hpp"
#include "kjudge/validate.hpp"

namespace kj::judge {

CudaKernelRunner::CudaKernelRunner(std::string role, const Candidate& kernel,
                                   const Problem& problem, const CudaOracle& oracle,
                                   const CheckSettings& settings)
    : role_(std::move(role)), kernel_(kernel), problem_(problem), oracle_(oracle),
      settings_(settings) {
  launches_ = kernel.source.launches;
  context_ = candidate_plan_context(role_, problem, kernel, oracle.context().info());
}

CudaKernelRunner::~CudaKernelRunner() {
  // A worker still here answered its last request: the next runner may load into it.
  if (settings_.asked.kept_worker && link_ && link_->alive() && !settings_.in_process()) {
    for (MappedSet& set : sets_)
      set = {};
    settings_.asked.kept_worker->keep(std::move(link_));
  }
  drop_worker();
}

void CudaKernelRunner::drop_worker() {
  for (MappedSet& set : sets_)
    set = {};
  if (settings_.asked.spare_workers && !settings_.in_process())
    settings_.asked.spare_workers->retire(std::move(link_));
  link_.reset();
}

std::optional<StartFailure> CudaKernelRunner::start() {
  const DeviceInfo& device = oracle_.context().info();
  // sm_90a and later: the architecture-specific instructions (wgmma, setmaxnreg) fast Hopper
  // kernels use. The CUBIN runs on exactly this device, which is the one it is compiled for.
  {
    const PhaseTrace::Scope timed(settings_.trace, "start: compile (compile-only worker)");
    if (auto failed = compile_in_worker(role_, kernel_, problem_, settings_,
                                        device.cc_major * 10 + device.cc_minor,
                                        device.cc_major >= 9, index_of_launch_, module_))
      return failed;
  }
  const PhaseTrace::Scope timed(settings_.trace, "start: worker, module loaded");
  return spawn_and_load(true);
}

std::optional<StartFailure> CudaKernelRunner::spawn_and_load(bool first) {
  drop_worker();
  auto fail = [&](Reason reason, std::string message) {
    drop_worker();
    return StartFailure{reason, std::move(message)};
  };
  // A kept worker is past its start and greeting; loading replaces its module and buffers.
  const bool reused = settings_.asked.kept_worker &&
                      (link_ = settings_.asked.kept_worker->take()) != nullptr;
  if (!reused) {
    try {
      if (settings_.in_process())
        link_ = make_in_process_worker(settings_.asked.device);
      else
        link_ = start_worker(settings_, cuda_worker_command(settings_.asked.device));
    } catch (const std::exception& e) {
      return fail(Reason::internal, fmt::format("cannot start a worker: {}", e.what()));
    }
    const Reply hello = link_->hello(deadline_after(settings_.asked.startup_deadline_s));
    if (hello.status != Reply::Status::ok)
      return fail(Reason::internal,
                  fmt::format("the worker did not start: {}", hello.status == Reply::Status::error
                                                                  ? hello.error.message
                                                                  : hello.detail));
  }

  const Reply reply =
      link_->request(to_json(module_, "load"), deadline_after(settings_.asked.startup_deadline_s));
  if (reused && (reply.status == Reply::Status::died || reply.status == Reply::Status::timeout)) {
    drop_worker(); // it ended since its last run: start a fresh one
    return spawn_and_load(first);
  }
  if (reused) settings_.asked.kept_worker->count_reuse();
  switch (reply.status) {
  case Reply::Status::ok:
    break;
  case Reply::Status::error:
    // The driver refuses the CUBIN (more static shared memory than the device has, ...).
    if (reply.error.error == "compile_error")
      return fail(Reason::compile_error, reply.error.message);
    return fail(Reason::internal,
                fmt::format("the worker failed to load the {}: {}", role_, reply.error.message));
  case Reply::Status::timeout:
  case Reply::Status::died:
    return fail(Reason::internal,
                fmt::format("the worker did not load the {}: {}", role_,
                            reply.status == Reply::Status::timeout ? "no reply in time"
                                                                   : reply.detail));
  case Reply::Status::protocol:
    return fail(Reason::internal, fmt::format("worker protocol: {}", reply.detail));
  }
  if (!first) return std::nullopt; // a restart loads the same module: the plan is checked

  try {
    const LoadReply loaded = load_reply_from_json(reply.message);
    if (loaded.kernels.size() != module_.kernels.size())
      return fail(Reason::internal, "the worker's load reply lists the wrong number of kernels");
    kernels_.clear();
    for (const KernelInfo& info : loaded.kernels)
      kernels_.push_back(plan_kernel(info, kernel_param_types(info, kernel_.source.text)));
    infos_ = loaded.kernels;
    per_launch_.clear();
    for (const std::size_t i : index_of_launch_)
      per_launch_.push_back(&kernels_[i]);
    check_plan_types(launches_, per_launch_, context_);
  } catch (const PlanError& e) {
    return fail(Reason::launch_error, e.what());
  } catch (const ProtocolError& e) {
    return fail(Reason::internal, e.what());
  }
  return std::nullopt;
}

int CudaKernelRunner::set_holding(const RunRequest& request) const {
  for (int s = 0; s < kBufferSets; ++s)
    if (set_holds(s, request)) return s;
  return -1;
}

int CudaKernelRunner::set_for_new_buffers(RunRequest& request) {
  // The memory kept beyond the run's own buffers: a check's shapes are few, and most fit many
  // times over; a problem with huge tensors keeps its current set only.
  constexpr std::uint64_t kKeptBudget = std::uint64_t{2} << 30;
  auto last_run = [&](int s) { return sets_[static_cast<std::size_t>(s)].last_run; };
  auto by_age = [&](int a, int b) { return last_run(a) < last_run(b); };
  std::vector<int> held;
  int chosen = -1;
  for (int s = 0; s < kBufferSets; ++s) {
    if (!sets_[static_cast<std::size_t>(s)].buffers.empty())
      held.push_back(s);
    else if (chosen < 0)
      chosen = s;
  }
  std::sort(held.begin(), held.end(), by_age);
  if (chosen < 0) {
    chosen = held.front();
    held.erase(held.begin());
  }
  std::uint64_t needed = 0;
  for (const BufferRequest& b : request.buffers)
    needed += b.bytes + 2 * request.redzone_bytes;
  std::uint64_t kept = 0;
  for (const int s : held)
    kept += sets_[static_cast<std::size_t>(s)].held_bytes;
  for (std::size_t i = 0; i < held.size() && kept + needed > kKeptBudget; ++i) {
    MappedSet& old = sets_[static_cast<std::size_t>(held[i])];
    kept -= old.held_bytes;
    old = {};
    request.release.push_back(held[i]);
  }
  sets_[static_cast<std::size_t>(chosen)] = {}; // the worker frees them for the new ones
  return chosen;
}

void CudaKernelRunner::refill_mapped(int set, const RunRequest& request, const CaseData& data) {
  const CUstream stream = oracle_.context().stream();
  const std::uint64_t rz = request.redzone_bytes;
  const std::vector<Mapped>& mapped = sets_[static_cast<std::size_t>(set)].buffers;
  for (std::size_t k = 0; k < mapped.size(); ++k) {
    const BufferRequest& b = request.buffers[k];
    const CUdeviceptr inner = mapped[k].base + rz;
    if (b.role == BufferRole::input)
      copy_device(inner, data.master[k].ptr(), b.bytes, stream);
    else if (b.fill.kind == Fill::Kind::initial)
      copy_device(inner, data.device_initial[k - problem_.inputs.size()].ptr(), b.bytes, stream);
    else if (b.fill.kind == Fill::Kind::zero)
      fill_bytes(inner, 0, b.bytes, stream);
    else if (b.fill.kind == Fill::Kind::pattern)
      oracle_.builtins().fill_pattern(inner, b.bytes, b.fill.pattern, stream);
    fill_bytes(mapped[k].base, request.redzone_byte, rz, stream);
    fill_bytes(inner + b.bytes, request.redzone_byte, rz, stream);
  }
  oracle_.context().synchronize();
}

RunOutcome CudaKernelRunner::run_on_set(const Case& c, const CaseData& data, int run_index,
                                    int chosen_set) {
  RunOutcome out;
  if (!link_ || !link_->alive()) {
    if (!restartable()) {
      out.reason = Reason::internal;
      out.message = "the in-process worker is gone (isolation is disabled)";
      return out;
    }
    if (auto failed = spawn_and_load(false)) {
      out.reason = Reason::internal;
      out.message = fmt::format("cannot replace the {}'s worker: {}", role_, failed->message);
      return out;
    }
  }

  RunRequest request;
  request.case_id = c.id;
  if (!plan_run(role_, kernel_, problem_, launches_, per_launch_, context_, data, run_index,
                settings_, request, out))
    return out;

  const CUstream stream = oracle_.context().stream();
  std::optional<PhaseTrace::Scope> phase;
  // Buffers the worker keeps from an earlier run in the same shapes: they stay, refilled here
  // through the mappings. Otherwise the worker makes new ones and copies the inputs from
  // staging copies (never from the master, which no other process ever maps).
  const int held = chosen_set < 0                      ? set_holding(request)
                   : set_holds(chosen_set, request) ? chosen_set
                                                    : -1;
  request.prepared = held >= 0;
  if (request.prepared) {
    request.buffer_set = held;
  } else if (chosen_set < 0) {
    request.buffer_set = set_for_new_buffers(request);
  } else {
    sets_[static_cast<std::size_t>(chosen_set)] = {}; // the worker frees them for the new ones
    request.buffer_set = chosen_set;
  }
  MappedSet& set = sets_[static_cast<std::size_t>(request.buffer_set)];
  set.last_run = ++runs_;
  std::vector<DeviceBuffer> staging;
  if (request.prepared) {
    phase.emplace(settings_.trace, "run: kept buffers refilled");
    refill_mapped(request.buffer_set, request, data);
  } else {
    phase.emplace(settings_.trace, "run: staging copies, exported");
    // The inputs, then the initial values of in-out outputs.
    std::vector<std::size_t> staged;
    for (std::size_t k = 0; k < request.buffers.size(); ++k) {
      const BufferRequest& b = request.buffers[k];
      const bool initial = b.role == BufferRole::output && b.fill.kind == Fill::Kind::initial;
      if (b.role != BufferRole::input && !initial) continue;
      const CUdeviceptr from = initial ? data.device_initial[k - problem_.inputs.size()].ptr()
                                       : data.master[k].ptr();
      staging.emplace_back(std::max<std::size_t>(b.bytes, 1));
      copy_device(staging.back().ptr(), from, b.bytes, stream);
      staged.push_back(k);
    }
    oracle_.context().synchronize();
    for (std::size_t i = 0; i < staging.size(); ++i) {
      BufferRequest& b = request.buffers[staged[i]];
      if (settings_.in_process())
        b.source_ptr = staging[i].ptr();
      else
        b.source_ipc = ipc_handle_to_hex(export_ipc(staging[i].ptr()));
    }
  }

  phase.emplace(settings_.trace, "run: the worker's request");
  const Reply reply = link_->request(to_json(request), deadline_after(out.deadline_s));
  phase.reset();
  staging.clear();
  if (reply.status != Reply::Status::ok) {
    set = {};
    return failed(reply, out, data);
  }

  RunReply got;
  try {
    got = run_reply_from_json(reply.message);
  } catch (const ProtocolError& e) {
    drop_worker();
    out.reason = Reason::internal;
    out.message = e.what();
    return out;
  }
  out.wall_ms = got.elapsed_ms; // the launches to their end, on the worker's GPU
  // Trust nothing: the reply must describe exactly the buffers asked for (and, for a prepared
  // run, the very allocations already mapped).
  bool matches = names_the_buffers(request, got.buffers);
  for (std::size_t k = 0; matches && k < got.buffers.size(); ++k)
    matches = got.buffers[k].redzone_bytes == request.redzone_bytes &&
              (!request.prepared || (got.buffers[k].ipc == set.buffers[k].ipc &&
                                     got.buffers[k].ptr == set.buffers[k].ptr));
  if (!matches) {
    drop_worker();
    out.reason = Reason::internal;
    out.message = "the worker's reply does not describe the buffers it was given";
    return out;
  }
  if (!request.prepared) {
    phase.emplace(settings_.trace, "run: new worker buffers mapped");
    set.redzone = request.redzone_bytes;
    for (const BufferHandle& h : got.buffers) {
      Mapped m{h.name, h.bytes, h.ipc, h.ptr, nullptr, h.ptr};
      if (!settings_.in_process()) {
        m.mapping = std::make_unique<IpcMapping>(ipc_handle_from_hex(h.ipc));
        m.base = m.mapping->ptr();
      }
      set.buffers.push_back(std::move(m));
      set.held_bytes += h.bytes + 2 * h.redzone_bytes;
    }
  }

  read_back(request.buffer_set, request, data, out);
  return out;
}

// What a run left, read where it lies: red zones, inputs against the master, the outputs copied
// into the oracle's own memory (the worker's are refilled by its next run), and to the host only
// when the check needs them there (outputs_to_host).
void CudaKernelRunner::read_back(int set_index, const RunRequest& request, const CaseData& data,
                             RunOutcome& out) {
  // One synchronisation for all of it: the counts of damaged red-zone bytes and changed input
  // bytes, and the outputs' copies, queued together; the red zones themselves are read only
  // where they were damaged, for the message.
  const PhaseTrace::Scope phase(settings_.trace, "run: red zones, inputs and outputs read");
  const CUstream stream = oracle_.context().stream();
  const MappedSet& set = sets_[static_cast<std::size_t>(set_index)];
  const std::uint64_t rz = request.redzone_bytes;
  const std::uint32_t redzone_pattern = 0x01010101u * request.redzone_byte;
  std::vector<BuiltinKernels::ByteCount> counts;
  for (std::size_t k = 0; k < request.buffers.size(); ++k) {
    const BufferRequest& asked = request.buffers[k];
    const CUdeviceptr base = set.buffers[k].base;
    const CUdeviceptr inner = base + rz;
    counts.push_back(BuiltinKernels::not_pattern(base, rz, redzone_pattern));
    counts.push_back(BuiltinKernels::not_pattern(inner + asked.bytes, rz, redzone_pattern));
    const bool input_checked = asked.role == BufferRole::input && settings_.defences.input_hash;
    counts.push_back(input_checked ? BuiltinKernels::mismatched_bytes(
                                         inner, data.master[k].ptr(), asked.bytes)
                                   : BuiltinKernels::ByteCount{}); // nothing to count
    if (asked.role == BufferRole::output) {
      out.device_outputs.push_back(oracle_.output_pool().take(asked.bytes));
      copy_device(out.device_outputs.back().ptr(), inner, asked.bytes, stream);
    }
  }
  const std::vector<std::uint64_t> counted = oracle_.builtins().count_all(counts, stream);
  std::vector<std::byte> before(rz), behind(rz);
  for (std::size_t k = 0; k < request.buffers.size(); ++k) {
    const BufferRequest& asked = request.buffers[k];
    if (counted[3 * k] + counted[3 * k + 1] > 0) {
      const CUdeviceptr base = set.buffers[k].base;
      copy_to_host(before.data(), base, rz, stream);
      copy_to_host(behind.data(), base + rz + asked.bytes, rz, stream);
      out.oob.push_back(redzone_message(role_name(asked.role), asked.name,
                                        scan_redzones(before, behind, request.redzone_byte)));
    }
    if (const std::uint64_t changed = counted[3 * k + 2]; changed > 0)
      out.inputs_modified.push_back(
          fmt::format("input '{}': {} of {} bytes changed", asked.name, changed, asked.bytes));
  }
  reason_from_damage(out);
}

RunOutcome CudaKernelRunner::failed(const Reply& reply, const RunOutcome& planned,
                                const CaseData& data) {
  bool lost = false;
  RunOutcome out = failed_run(reply, planned, kernel_, data.reference_s, settings_, lost);
  if (lost) drop_worker();
  return out;
}

bool CudaKernelRunner::set_holds(int set, const RunRequest& request) const {
  if (!link_ || !link_->alive()) return false;
  const MappedSet& held = sets_[static_cast<std::size_t>(set)];
  return !held.buffers.empty() && held.redzone == request.redzone_bytes &&
         names_the_buffers(request, held.buffers);
}

TimedRound CudaKernelRunner::timed_round(const Case& c, const std::vector<const CaseData*>& visits,
                                     int run_index, std::uint64_t flush_bytes) {
  TimedRound round;
  auto fail = [&](Reason reason, std::string message) {
    round.reason = reason;
    round.message = std::move(message);
    round.runs.clear();
    round.ms.clear();
    return std::move(round);
  };
  KJ_EXPECTS(visits.size() <= static_cast<std::size_t>(kBufferSets), "a set per visit");
  std::vector<RunRequest> requests(visits.size());
  round.runs.resize(visits.size());
  TimeRequest time;
  time.flush_bytes = flush_bytes;
  double deadline_s = 0;
  for (std::size_t j = 0; j < visits.size(); ++j) {
    RunRequest& request = requests[j];
    request.case_id = c.id;
    const int set = static_cast<int>(j);
    if (!plan_run(role_, kernel_, problem_, launches_, per_launch_, context_, *visits[j],
                  run_index, settings_, request, round.runs[j]))
      return fail(round.runs[j].reason, round.runs[j].message);
    if (!set_holds(set, request))
      return fail(Reason::internal, fmt::format("timed run on buffer set {}, which holds other "
                                                "buffers (or none)", set));
    request.prepared = true;
    request.buffer_set = set;
    sets_[j].last_run = ++runs_;
    refill_mapped(set, request, *visits[j]);
    time.sets.push_back(set);
    deadline_s += round.runs[j].deadline_s;
  }
  time.launches = requests.front().launches;
  const Reply reply = [&] {
    const PhaseTrace::Scope phase(settings_.trace, "bench: the worker's timed runs");
    return link_->request(to_json(time), deadline_after(deadline_s));
  }();
  if (reply.status != Reply::Status::ok) {
    for (MappedSet& set : sets_)
      set = {};
    RunOutcome planned;
    planned.deadline_s = deadline_s;
    const RunOutcome out = failed(reply, planned, *visits.front());
    return fail(out.reason, out.message);
  }
  TimeReply got;
  try {
    got = time_reply_from_json(reply.message);
  } catch (const ProtocolError& e) {
    drop_worker();
    return fail(Reason::internal, e.what());
  }
  if (got.ms.size() != visits.size() || got.blocks_per_sm.size() != time.launches.size()) {
    drop_worker();
    return fail(Reason::internal, "the worker's timing reply does not match its request");
  }
  round.ms = got.ms;
  for (std::size_t j = 0; j < visits.size(); ++j)
    read_back(static_cast<int>(j), requests[j], *visits[j], round.runs[j]);
  for (const BufferRequest& b : requests.front().buffers)
    round.memory_bytes += b.bytes;
  const DeviceInfo& device = oracle_.context().info();
  for (std::size_t k = 0; k < time.launches.size(); ++k) {
    const LaunchRequest& l = time.launches[k];
    const KernelInfo& info = infos_[index_of_launch_[k]];
    LaunchResources r;
    r.launch = l.label;
    r.registers = info.registers;
    r.static_shared = info.static_shared;
    r.dynamic_shared = static_cast<int>(l.dims.shared_bytes);
    r.local_bytes = info.local_bytes;
    r.block_threads = static_cast<int>(l.dims.block[0] * l.dims.block[1] * l.dims.block[2]);
    r.blocks_per_sm = got.blocks_per_sm[k];
    if (device.max_threads_per_sm > 0)
      r.occupancy = static_cast<double>(r.blocks_per_sm) * r.block_threads /
                    static_cast<double>(device.max_threads_per_sm);
    const double blocks = static_cast<double>(l.dims.grid[0]) *
                          static_cast<double>(l.dims.grid[1]) * static_cast<double>(l.dims.grid[2]);
    const double slots = static_cast<double>(device.sm_count) * r.blocks_per_sm;
    if (slots > 0 && blocks > 0)
      r.grid_occupancy = r.occupancy * blocks / (std::ceil(blocks / slots) * slots);
    round.resources.push_back(std::move(r));
  }
  return round;
}

void outputs_to_host(RunOutcome& run, const Problem& problem, const std::vector<Shape>& shapes,
                     CUstream stream) {
  if (run.device_outputs.empty() || !run.outputs.empty()) return;
  for (std::size_t o = 0; o < run.device_outputs.size(); ++o)
    run.outputs.push_back(
        to_host({run.device_outputs[o].ptr(), problem.outputs[o].dtype}, shapes[o], stream));
  run.device_outputs.clear();
}

} // namespace kj::judge
