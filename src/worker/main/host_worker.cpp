// `kjudge --worker --host`: the host backend's candidate worker. On the host a candidate is
// native code in this process, so this process holds nothing the oracle keeps secret: its
// buffers live in a shared arena the oracle laid out and filled (inputs, poison, red zones),
// and it only maps the arena, loads the candidate's shared object and launches. It confines
// itself before greeting (confine_host_worker) and seals itself once the object is loaded. Its
// stderr is a file the oracle reads when it dies (a checked build's finding). Its CPU time is
// read by the oracle from outside, never reported by this process.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <map>
#include <memory>

#include <fmt/format.h>

#include "launch/launch.hpp"
#include "worker/main/worker_mains.hpp"
#include "worker/messages.hpp"
#include "worker/protocol.hpp"
#include "kjudge/host_backend.hpp"
#include "kjudge/judge.hpp"

namespace kj {

namespace {

using nlohmann::json;
using namespace kj::judge;

class HostWorker {
public:
  explicit HostWorker(int arena_fd) : arena_fd_(arena_fd) {}
  ~HostWorker() { unmap(); }

  json load(const json& request) {
    const std::string path = request.at("shared_object").get<std::string>();
    const auto lowered = request.at("lowered").get<std::vector<std::string>>();
    module_ = std::make_unique<HostModule>(path);
    seal_host_worker();
    check_races_ = request.value("check_races", false);
    if (static_cast<std::size_t>(module_->kernel_count()) != lowered.size())
      return error_json("internal", fmt::format("the shared object holds {} kernels, not {}",
                                                module_->kernel_count(), lowered.size()));
    for (std::size_t k = 0; k < lowered.size(); ++k)
      index_[lowered[k]] = static_cast<int>(k);
    return {{"ok", true}, {"kernels", lowered.size()}};
  }

  json run(const RunRequest& request) {
    if (!module_) return error_json("internal", "run before load");
    if (!map(request.arena_bytes))
      return error_json("internal", fmt::format("cannot map the arena of {} bytes: {}",
                                                request.arena_bytes, std::strerror(errno)));
    std::map<std::string, void*> pointers;
    for (const BufferRequest& b : request.buffers) {
      if (b.arena_offset + 2 * request.redzone_bytes + b.bytes > request.arena_bytes)
        return error_json("internal", fmt::format("buffer '{}' lies outside the arena", b.name));
      pointers[b.name] = arena_ + b.arena_offset + request.redzone_bytes;
    }
    if (module_->checked()) {
      // The checked build watches the arena with its guards; only the buffers may be touched.
      std::vector<unsigned long> spans;
      for (const BufferRequest& b : request.buffers)
        spans.insert(spans.end(), {kGuardBytes + b.arena_offset + request.redzone_bytes, b.bytes});
      const std::string failed = module_->track(reservation_, request.arena_bytes + 2 * kGuardBytes,
                                                arena_, spans, check_races_);
      if (!failed.empty()) return error_json("internal", "checked build: " + failed);
    }
    const std::string failed = launch_on_host(*module_, index_, request.launches, pointers);
    if (!failed.empty()) return error_json("crash", failed);
    return {{"ok", true}};
  }

  // A coverage build's counters so far, as hex (kj_host_coverage's output).
  json coverage() const {
    if (!module_) return error_json("internal", "coverage before load");
    const std::optional<std::vector<std::byte>> counters = module_->coverage(kMaxCoverageBytes);
    if (!counters) return {{"ok", true}, {"coverage", nullptr}};
    return {{"ok", true}, {"coverage", to_hex(*counters)}};
  }

private:
  static constexpr std::size_t kMaxCoverageBytes = 8u << 20; // as hex, within a message
  // The arena between two inaccessible guard regions: a kernel that reads or writes past the
  // arena (beyond the red zones) faults there, as it would on unmapped device memory, instead of
  // wandering into whatever this process mapped next to it.
  static constexpr std::uint64_t kGuardBytes = 1u << 20;
  bool map(std::uint64_t bytes) {
    if (bytes == mapped_bytes_) return true;
    unmap();
    void* reserved = ::mmap(nullptr, bytes + 2 * kGuardBytes, PROT_NONE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED) return false;
    reservation_ = static_cast<std::byte*>(reserved);
    void* p = ::mmap(reservation_ + kGuardBytes, bytes, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_FIXED, arena_fd_, 0);
    if (p == MAP_FAILED) {
      unmap();
      return false;
    }
    arena_ = static_cast<std::byte*>(p);
    mapped_bytes_ = bytes;
    return true;
  }
  void unmap() {
    if (reservation_) ::munmap(reservation_, mapped_bytes_ + 2 * kGuardBytes);
    reservation_ = arena_ = nullptr;
    mapped_bytes_ = 0;
  }

  int arena_fd_;
  std::byte* reservation_ = nullptr; // guard, arena, guard
  std::byte* arena_ = nullptr;
  std::uint64_t mapped_bytes_ = 0;
  std::unique_ptr<HostModule> module_;
  bool check_races_ = false; // a checked build looks for races too, not only out-of-bounds
  std::map<std::string, int> index_; // lowered name -> the module's kernel index
};

} // namespace

int host_worker_main(int socket_fd, int arena_fd, const std::string& module_dir) {
  // The worker must not outlive the oracle.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  std::vector<std::filesystem::path> readable;
  if (!module_dir.empty()) readable.emplace_back(module_dir);
  if (const std::string gap = confine_host_worker(host_worker_sandbox(readable, cpu_threads()));
      !gap.empty()) {
    (void)write_message(socket_fd,
                        error_json("internal", "the host worker's sandbox is incomplete: " + gap));
    return 3;
  }
  HostWorker worker(arena_fd);
  if (!write_message(socket_fd, {{"ready", true}, {"pid", ::getpid()}, {"host", true}})) return 0;
  FrameDecoder decoder;
  for (;;) {
    const ReadResult got = read_message(socket_fd, decoder);
    if (got.status == ReadResult::Status::eof) return 0;
    if (got.status != ReadResult::Status::message) {
      (void)write_message(socket_fd, error_json("internal", got.error));
      return 3;
    }
    const json& m = got.message;
    const std::string op = m.is_object() && m.contains("op") && m["op"].is_string()
                               ? m["op"].get<std::string>()
                               : std::string();
    json reply;
    try {
      if (op == "exit") return 0;
      if (op == "load")
        reply = worker.load(m);
      else if (op == "run")
        reply = worker.run(run_request_from_json(m));
      else if (op == "coverage")
        reply = worker.coverage();
      else if (op == "release")
        reply = {{"ok", true}};
      else
        reply = error_json("internal", fmt::format("unknown op '{}'", op));
    } catch (const std::exception& e) {
      reply = error_json("internal", e.what());
    }
    if (!write_message(socket_fd, reply)) return 0;
  }
}

} // namespace kj
