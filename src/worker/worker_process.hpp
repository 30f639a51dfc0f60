// The oracle's side of a candidate worker: start it with posix_spawn (never fork() after
// cuInit: the child of a CUDA process must exec before touching the driver), talk to it over a
// socketpair, and turn each way a request can end into a Reply the judge maps to a verdict:
// a message, an error reply, a timeout (the worker is SIGKILLed at the deadline: wall-clock, or
// the worker's CPU time with a wall-clock backstop), or death
// (end of stream; the exit status says how). The same interface has an in-process
// implementation for the isolation test switch (worker/main/cuda_worker.hpp), so the judge does
// not care where its worker runs. Nothing here needs a GPU; the unit tests drive it with fake
// workers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/messages.hpp"
#include "worker/protocol.hpp"

namespace kj::judge {

// How a process ended: "exited with status 1", "killed by signal 11 (SIGSEGV)".
struct ExitStatus {
  bool exited = false; // normal exit (code valid)
  int code = 0;
  int signal = 0; // killed by this signal when !exited
  std::string describe() const;
};
ExitStatus exit_status_from_wait(int wait_status);

struct Reply {
  enum class Status {
    ok,       // `message` is a success reply
    error,    // the worker replied with an error (`error`)
    timeout,  // no reply by the deadline; the worker was killed
    died,     // end of stream before a reply; `detail` says how it ended
    protocol, // a reply that is not a protocol message (kjudge's fault)
  };
  Status status = Status::protocol;
  // A timeout's limit: a wall-clock deadline, the worker's CPU time past a CPU-time deadline, or
  // the wall-clock backstop of a CPU-time deadline (the worker waited instead of computing).
  // `detail` says which in words.
  enum class Limit { wall, cpu, backstop };
  Limit limit = Limit::wall;
  nlohmann::json message;
  ErrorReply error;
  std::string detail;
};

// A deadline `seconds` from now.
Clock::time_point deadline_after(double seconds);

// A request's deadline in the worker's CPU time, all its threads (the host backend, whose
// candidate runs on the CPU: a loaded machine stretches wall-clock time, not the CPU time a run
// needs), with a wall-clock backstop for a worker that uses no CPU (blocked or stopped) and so
// would never reach it.
struct CpuDeadline {
  double cpu_s = 0;      // CPU seconds the worker may use on the request
  double backstop_s = 0; // wall-clock seconds after which it is killed whatever it used
};
// How often the wait for a reply under a CpuDeadline reads the worker's CPU time: a run passes
// its CPU deadline by at most this much wall-clock time.
inline constexpr std::chrono::milliseconds kCpuDeadlineSlice{50};

class WorkerLink {
public:
  virtual ~WorkerLink() = default;
  // The worker's greeting after start-up ({"ready": true, ...} or an error reply).
  virtual Reply hello(std::optional<Clock::time_point> deadline) = 0;
  // Send a request and wait for its reply until `deadline`.
  virtual Reply request(const nlohmann::json& message,
                        std::optional<Clock::time_point> deadline) = 0;
  // Send a request and wait for its reply until the worker has used `limit.cpu_s` seconds of CPU
  // time on it, or `limit.backstop_s` seconds of wall-clock time have passed. A link without a
  // process of its own has no CPU clock to read: it waits `limit.cpu_s` of wall-clock time.
  virtual Reply request_within_cpu_time(const nlohmann::json& message, const CpuDeadline& limit) {
    return request(message, deadline_after(limit.cpu_s));
  }
  // Whether the worker can take another request (not dead, not killed).
  virtual bool alive() const = 0;
  // The CPU time the worker's process has used so far, read from outside it (a candidate's
  // code in the worker cannot change it); nullopt where there is no such process.
  virtual std::optional<double> cpu_seconds() const { return std::nullopt; }
};

// The CUDA worker's session inside this process, as a link (the `isolation` test switch: no
// watchdog, no address space of its own; a sticky error takes the oracle's context with it).
// Defined with the CUDA worker (worker/main/cuda_worker.cpp), which the oracle never includes.
std::unique_ptr<WorkerLink> make_in_process_worker(int device);

// What a worker gets beyond the socket (the host worker: its shared buffers, its stderr kept
// for the oracle).
struct SpawnExtras {
  int stderr_fd = -1;                   // the worker's stderr; -1: inherited
  int shared_fd = -1;                   // passed on as the number "{shared_fd}" in argv names
};

// A worker process. `argv[0]` is the executable; an argument equal to "{fd}" is replaced by
// the number of the worker's end of the socketpair. The worker's stdin and stdout are
// /dev/null (device printf output must not mix with a JSON report on stdout); stderr is
// inherited unless `extras` says otherwise. The destructor asks the worker to exit, then kills
// it if it lingers.
class WorkerProcess final : public WorkerLink {
public:
  explicit WorkerProcess(std::vector<std::string> argv, const SpawnExtras& extras = {});
  ~WorkerProcess() override;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  Reply hello(std::optional<Clock::time_point> deadline) override;
  Reply request(const nlohmann::json& message, std::optional<Clock::time_point> deadline) override;
  Reply request_within_cpu_time(const nlohmann::json& message, const CpuDeadline& limit) override;
  bool alive() const override { return pid_ > 0; }
  std::optional<double> cpu_seconds() const override;
  pid_t pid() const { return pid_; }

  // SIGKILL and reap; safe to call twice.
  void kill();
  // Wait up to `grace` for the worker to exit on its own, then kill it; the status either way.
  ExitStatus wait(std::chrono::milliseconds grace);

private:
  Reply receive(std::optional<Clock::time_point> deadline);
  // What a read that did not time out means: a reply, or the worker's death or garbage.
  Reply reply_from(ReadResult got);
  // Sends `message`; false (with `dead` the reply saying how the worker ended) when it cannot.
  bool send(const nlohmann::json& message, Reply& dead);

  pid_t pid_ = -1;
  int fd_ = -1;
  FrameDecoder decoder_;
  std::optional<ExitStatus> status_;
};

// A reply read off the wire, classified: an object with "error" is an error reply, anything
// else must be a success ({"ok": true} or the greeting {"ready": true}).
Reply classify_reply(const nlohmann::json& message);

} // namespace kj::judge
