// The worker (cuda_worker.hpp) and `kjudge --worker`'s main loop. Buffer layout: one
// allocation per tensor, [red zone | tensor | red zone], the tensor at a 256-byte aligned
// offset (the oracle sends red zones in multiples of 256), so a candidate that reads float4 or
// uses TMA still sees the alignment cuMemAlloc gives.
#include "worker/main/cuda_worker.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

#include "launch/launch.hpp"
#include "worker/driver_assertion.hpp"
#include "worker/main/worker_mains.hpp"
#include "worker/protocol.hpp"
#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj::judge {

using nlohmann::json;

namespace {

// A pattern fill of any length from any 4-byte aligned start: whole words, then the tail bytes
// as the same little-endian word would have them, never past `bytes` (with no red zone behind
// the buffer, writing the whole last word would leave the allocation).
void fill_pattern(CUdeviceptr dst, std::uint32_t pattern, std::size_t bytes, CUstream stream) {
  const std::size_t words = bytes / 4;
  fill_u32(dst, pattern, words, stream);
  for (std::size_t j = 0; j < bytes % 4; ++j)
    fill_bytes(dst + words * 4 + j, static_cast<std::uint8_t>((pattern >> (8 * j)) & 0xFFu), 1,
               stream);
}

} // namespace

WorkerSession::WorkerSession(int device, bool in_process) : ctx_(device), in_process_(in_process) {}

WorkerSession::~WorkerSession() {
  // Buffers and the library go before the context is released.
  release_buffers();
  functions_.clear();
  library_.reset();
}

json WorkerSession::greeting() const {
  const DeviceInfo& d = ctx_.info();
  return {{"ready", true},
          {"pid", static_cast<long long>(::getpid())},
          {"device", d.name},
          {"cc", d.cc_major * 10 + d.cc_minor}};
}

std::optional<json> WorkerSession::handle(const json& request) {
  try {
    if (!request.is_object() || !request.contains("op") || !request["op"].is_string())
      return error_json("internal", "a request without an \"op\"");
    const std::string op = request["op"].get<std::string>();
    if (op == "exit") {
      finished_ = true;
      return std::nullopt;
    }
    if (op == "release") {
      release_buffers();
      return json{{"ok", true}};
    }
    if (op == "load") return load(module_message_from_json(request));
    if (op == "run") return run(run_request_from_json(request));
    if (op == "time") return time(time_request_from_json(request));
    return error_json("internal", fmt::format("unknown op \"{}\"", op));
  } catch (const CudaError& e) {
    // Outside the candidate's launches (allocation, copies, IPC): kjudge's side failed, unless
    // the context was already poisoned, which only the candidate can do.
    if (e.sticky()) {
      finished_ = true;
      const std::string stop = kernel_stop(e);
      return error_json("crash", stop.empty() ? std::string(e.what()) : stop);
    }
    return error_json("internal", e.what());
  } catch (const std::exception& e) {
    return error_json("internal", e.what());
  }
}

json WorkerSession::load(const ModuleMessage& module) {
  release_buffers();
  functions_.clear();
  library_.reset();
  LoadReply reply;
  try {
    library_ = std::make_unique<CudaLibrary>(module.cubin);
  } catch (const CudaError& e) {
    // NVRTC accepted it but the driver will not load it (too much static shared memory, ...).
    return error_json("compile_error",
                      fmt::format("the compiled module does not load: {}", e.what()));
  }
  for (const KernelSymbol& k : module.kernels) {
    const CUfunction f = library_->function(k.lowered);
    functions_[k.lowered] = f;
    reply.kernels.push_back(kernel_info(k, kernel_attributes(f)));
  }
  reply.log = module.log;
  reply.from_cache = module.from_cache;
  return to_json(reply);
}

bool WorkerSession::holds_buffers_of(const RunRequest& r) const {
  const std::vector<Allocation>& held = sets_[static_cast<std::size_t>(r.buffer_set)];
  return names_the_buffers(r, held) &&
         std::all_of(held.begin(), held.end(),
                     [&](const Allocation& a) { return a.redzone == r.redzone_bytes; });
}

// Fresh allocations for the request's buffers, filled as it asks: the inputs copied from the
// oracle's staging copies, outputs and scratch with their fills, red zones with their byte.
// Null when they all fit, else the out_of_memory reply.
json WorkerSession::allocate(const RunRequest& r) {
  std::vector<Allocation>& set = sets_[static_cast<std::size_t>(r.buffer_set)];
  set.clear();
  const CUstream stream = ctx_.stream();
  for (const BufferRequest& b : r.buffers) {
    Allocation a;
    a.name = b.name;
    a.redzone = r.redzone_bytes;
    a.bytes = b.bytes;
    try {
      // Never 0 bytes: an empty tensor still needs an allocation to export.
      a.buffer = DeviceBuffer(std::max<std::size_t>(b.bytes + 2 * r.redzone_bytes, 1));
    } catch (const CudaError& e) {
      if (e.code() != CUDA_ERROR_OUT_OF_MEMORY) throw;
      ErrorReply err;
      err.error = "out_of_memory";
      err.buffer = b.name;
      err.message = fmt::format("{} '{}' of {} bytes does not fit in device memory",
                                role_name(b.role), b.name, b.bytes);
      set.clear();
      return to_json(err);
    }
    if (b.role == BufferRole::input || b.fill.kind == Fill::Kind::initial) {
      if (in_process_) {
        copy_device(a.inner(), b.source_ptr, b.bytes, stream);
      } else {
        // Mapped only for the copy: the candidate's kernels never run while the oracle's
        // staging copy is addressable here.
        const IpcMapping source(ipc_handle_from_hex(b.source_ipc));
        copy_device(a.inner(), source.ptr(), b.bytes, stream);
        ctx_.synchronize();
      }
    } else if (b.fill.kind == Fill::Kind::zero) {
      fill_bytes(a.inner(), 0, b.bytes, stream);
    } else if (b.fill.kind == Fill::Kind::pattern) {
      fill_pattern(a.inner(), b.fill.pattern, b.bytes, stream);
    }
    fill_bytes(a.buffer.ptr(), r.redzone_byte, a.redzone, stream);
    fill_bytes(a.inner() + a.bytes, r.redzone_byte, a.redzone, stream);
    set.push_back(std::move(a));
  }
  ctx_.synchronize();
  return nullptr;
}

json WorkerSession::run(const RunRequest& r) {
  for (const int released : r.release)
    sets_[static_cast<std::size_t>(released)].clear();
  std::vector<Allocation>& set = sets_[static_cast<std::size_t>(r.buffer_set)];
  if (r.prepared) {
    if (!holds_buffers_of(r))
      return error_json("internal", "a prepared run names buffers this worker does not hold");
  } else if (json failed = allocate(r); !failed.is_null()) {
    return failed;
  }
  const CUstream stream = ctx_.stream();
  const std::map<std::string, CUdeviceptr> pointers = pointers_of(r.buffer_set);
  const auto start = std::chrono::steady_clock::now();
  std::size_t failed = 0;
  bool launched = false;
  try {
    launch_all(r.launches, functions_, pointers, stream, &failed);
    launched = true;
    ctx_.synchronize();
  } catch (const CudaError& e) {
    return launch_failure(e, launched || failed >= r.launches.size() ? "after the launches"
                                                                     : r.launches[failed].label);
  }
  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  RunReply reply;
  reply.elapsed_ms = elapsed_ms;
  for (auto& a : set) {
    BufferHandle h;
    h.name = a.name;
    h.redzone_bytes = a.redzone;
    h.bytes = a.bytes;
    if (in_process_) {
      h.ptr = a.buffer.ptr();
    } else {
      if (a.ipc.empty()) a.ipc = ipc_handle_to_hex(export_ipc(a.buffer.ptr()));
      h.ipc = a.ipc;
    }
    reply.buffers.push_back(std::move(h));
  }
  return to_json(reply);
}

std::map<std::string, CUdeviceptr> WorkerSession::pointers_of(int set) const {
  std::map<std::string, CUdeviceptr> pointers;
  for (const auto& a : sets_[static_cast<std::size_t>(set)])
    pointers[a.name] = a.inner();
  return pointers;
}

std::string WorkerSession::take_output() {
  if (output_fd_ < 0) return {};
  std::fflush(stdout);
  std::fflush(stderr);
  std::string text(64 * 1024, '\0');
  const ssize_t n = ::pread(output_fd_, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  // fd 1 and 2 share the memory file's offset: both start again at its beginning.
  if (::ftruncate(output_fd_, 0) == 0) (void)::lseek(output_fd_, 0, SEEK_SET);
  return text;
}

std::string WorkerSession::kernel_stop(const CudaError& e) {
  if (e.code() == CUDA_ERROR_ASSERT) {
    if (const auto a = parse_driver_assertion(take_output())) return device_assertion_message(*a);
    return output_fd_ < 0 ? "device assertion failed (CUDA_ERROR_ASSERT; its text is not kept "
                            "when the worker runs inside kjudge's own process)"
                          : "device assertion failed (CUDA_ERROR_ASSERT; the driver printed no "
                            "assertion)";
  }
  // What the driver reports for __trap() (and asm("trap;")): a fault it does not name gives
  // the same code, but device code compiled by NVRTC has no other way to it.
  if (e.code() == CUDA_ERROR_LAUNCH_FAILED)
    return "the kernel executed __trap() (CUDA_ERROR_LAUNCH_FAILED)";
  return "";
}

json WorkerSession::launch_failure(const CudaError& e, const std::string& where) {
  if (e.sticky()) {
    finished_ = true;
    const std::string stop = kernel_stop(e);
    return error_json("crash", fmt::format("{}: {}", where, stop.empty() ? e.name() : stop));
  }
  // The launches before the failing one may still run; let them finish before replying.
  try {
    ctx_.synchronize();
  } catch (const CudaError& late) {
    if (late.sticky()) {
      finished_ = true;
      const std::string stop = kernel_stop(late);
      return error_json("crash",
                        fmt::format("after the launches: {}", stop.empty() ? late.name() : stop));
    }
  }
  return error_json("launch_error", fmt::format("{}: {} ({})", where, e.name(), e.what()));
}

json WorkerSession::time(const TimeRequest& r) {
  for (const int set : r.sets)
    if (sets_[static_cast<std::size_t>(set)].empty())
      return error_json("internal",
                        fmt::format("a timed run on buffer set {}, which is empty", set));
  const CUstream stream = ctx_.stream();
  if (flush_.bytes() < r.flush_bytes) {
    flush_ = DeviceBuffer();
    flush_ = DeviceBuffer(r.flush_bytes);
  }
  std::vector<CudaEvent> starts(r.sets.size()), ends(r.sets.size());
  std::size_t sample = 0, failed = 0;
  bool launched = false;
  try {
    for (; sample < r.sets.size(); ++sample) {
      const auto pointers = pointers_of(r.sets[sample]);
      // The flush keeps the GPU busy while this thread queues the launches, so their host-side
      // latency stays out of the timed span.
      if (r.flush_bytes >= 4) fill_u32(flush_.ptr(), static_cast<std::uint32_t>(sample),
                                       r.flush_bytes / 4, stream);
      starts[sample].record(stream);
      launch_all(r.launches, functions_, pointers, stream, &failed);
      ends[sample].record(stream);
    }
    launched = true;
    ctx_.synchronize();
  } catch (const CudaError& e) {
    return launch_failure(
        e, launched || failed >= r.launches.size()
               ? "after the launches"
               : fmt::format("timed run {}: {}", sample + 1, r.launches[failed].label));
  }
  TimeReply reply;
  for (std::size_t k = 0; k < r.sets.size(); ++k)
    reply.ms.push_back(CudaEvent::elapsed_ms(starts[k], ends[k]));
  for (const LaunchRequest& l : r.launches) {
    const int threads = static_cast<int>(l.dims.block[0] * l.dims.block[1] * l.dims.block[2]);
    reply.blocks_per_sm.push_back(
        max_blocks_per_sm(functions_.at(l.lowered), threads, l.dims.shared_bytes));
  }
  return to_json(reply);
}

namespace {

// The worker as an in-process WorkerLink (the `isolation` test switch): no watchdog, no
// separate address space; a sticky error takes the oracle's context with it.
class InProcessWorker final : public WorkerLink {
public:
  explicit InProcessWorker(int device);
  Reply hello(std::optional<Clock::time_point> deadline) override;
  Reply request(const nlohmann::json& message, std::optional<Clock::time_point> deadline) override;
  bool alive() const override { return !session_.finished(); }

private:
  WorkerSession session_;
};

} // namespace

InProcessWorker::InProcessWorker(int device) : session_(device, true) {}

Reply InProcessWorker::hello(std::optional<Clock::time_point>) {
  return classify_reply(session_.greeting());
}

Reply InProcessWorker::request(const json& message, std::optional<Clock::time_point>) {
  auto reply = session_.handle(message);
  if (!reply) {
    Reply r;
    r.status = Reply::Status::died;
    r.detail = "the in-process worker exited";
    return r;
  }
  return classify_reply(*reply);
}

std::unique_ptr<WorkerLink> make_in_process_worker(int device) {
  return std::make_unique<InProcessWorker>(device);
}

} // namespace kj::judge

namespace kj {

namespace {

// The driver prints a failed device assertion, the candidate's text, on the process's stderr
// (stdout with some older drivers): while the worker runs both go to a memory file the session
// reads after the error (WorkerSession::kernel_stop), so that text reaches the oracle only
// quoted in a message, never its stderr as it is. Given back when worker_main returns, for a
// caller in its own process (a test).
struct CapturedOutput {
  int fd = -1, saved_out = -1, saved_err = -1;
  CapturedOutput() {
    fd = ::memfd_create("kjudge-worker-output", MFD_CLOEXEC);
    if (fd < 0) return;
    std::fflush(stdout);
    std::fflush(stderr);
    saved_out = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    saved_err = ::fcntl(2, F_DUPFD_CLOEXEC, 3);
    (void)::dup2(fd, 1);
    (void)::dup2(fd, 2);
  }
  ~CapturedOutput() {
    if (fd < 0) return;
    std::fflush(stdout);
    std::fflush(stderr);
    for (const auto& [saved, target] : {std::pair{saved_out, 1}, std::pair{saved_err, 2}}) {
      if (saved < 0) continue;
      (void)::dup2(saved, target);
      ::close(saved);
    }
    ::close(fd);
  }
  CapturedOutput(const CapturedOutput&) = delete;
  CapturedOutput& operator=(const CapturedOutput&) = delete;
};

} // namespace

int worker_main(int socket_fd, int device) {
  // The worker must not outlive the oracle: an orphan would hold the GPU.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  using namespace kj::judge;
  // Before the context exists, which may keep the descriptors it found; the session goes
  // before the output is given back.
  const CapturedOutput output;
  std::unique_ptr<WorkerSession> session;
  try {
    session = std::make_unique<WorkerSession>(device, false);
    session->capture_output(output.fd);
  } catch (const std::exception& e) {
    (void)write_message(
        socket_fd, error_json("internal", fmt::format("the worker cannot start: {}", e.what())));
    return 3;
  }
  if (session->device().pageable_memory_access) {
    // docs/design.md "The processes and what each may touch": with pageable memory access a kernel
    // can read host memory through plain pointers, and the worker's separate address space is the
    // defence.
    (void)write_message(
        socket_fd,
        error_json("internal",
                   fmt::format("device {} ({}) can access pageable host memory "
                               "(pageableMemoryAccess = 1); the worker refuses to run candidates "
                               "on it",
                               device, session->device().name)));
    return 3;
  }
  if (!write_message(socket_fd, session->greeting())) return 0;
  FrameDecoder decoder;
  for (;;) {
    const ReadResult got = read_message(socket_fd, decoder);
    if (got.status == ReadResult::Status::eof) return 0; // the oracle is done with us
    if (got.status != ReadResult::Status::message) {
      (void)write_message(socket_fd, error_json("internal", got.error));
      return 3;
    }
    const std::optional<json> reply = session->handle(got.message);
    if (!reply) return 0;
    if (!write_message(socket_fd, *reply)) return 0;
    if (session->finished()) return 1;
  }
}

} // namespace kj
