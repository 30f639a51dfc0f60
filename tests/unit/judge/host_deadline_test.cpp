// The host backend's run deadline in the worker's CPU time, with a wall-clock backstop
// (docs/design.md "Defences", time budget and per-run deadline). First WorkerProcess alone, with
// this binary re-executed as a fake worker (--cpu-fake-worker MODE FD) that spins, burns a given
// amount of CPU time, or sleeps: a spinning worker passes its CPU deadline and the reply says
// so; a worker that uses no CPU ends at the backstop, called blocked; other busy processes on
// the machine change neither outcome, nor let a worker that needs less CPU than its deadline
// time out. Then kj::check on the host: a spinning candidate is FAIL(timeout) naming its CPU
// deadline, and a worker stopped mid-run (SIGSTOP: nothing a candidate can write blocks the
// emulation without CPU, see the test) ends at the backstop, called blocked.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "judge/defences.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"
#include "support/own_command_line.hpp"
#include "worker/protocol.hpp"
#include "worker/worker_process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kj;
using namespace kj::judge;
using nlohmann::json;

// ---- the fake worker ----------------------------------------------------------------------

double process_cpu_s() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int cpu_fake_worker(const std::string& mode, int fd) {
  (void)write_message(fd, {{"ready", true}});
  FrameDecoder decoder;
  for (;;) {
    const ReadResult got = read_message(fd, decoder);
    if (got.status != ReadResult::Status::message) return 0;
    const json& m = got.message;
    if (m.value("op", "") == "exit") return 0;
    if (mode == "spin") {
      volatile bool forever = true;
      while (forever) {
      }
    } else if (mode == "burn") { // uses cpu_s of its CPU time, then replies
      const double until = process_cpu_s() + m.value("cpu_s", 0.0);
      while (process_cpu_s() < until) {
      }
      (void)write_message(fd, {{"ok", true}});
    } else if (mode == "sleep") {
      std::this_thread::sleep_for(std::chrono::hours(1));
    }
  }
}

const bool cpu_fake_worker_hook = [] {
  const auto args = kj::test::own_command_line();
  if (args.size() >= 4 && args[1] == "--cpu-fake-worker")
    std::_Exit(cpu_fake_worker(args[2], std::stoi(args[3])));
  return true;
}();

std::vector<std::string> fake(const std::string& mode) {
  return {"/proc/self/exe", "--cpu-fake-worker", mode, "{fd}"};
}

// Threads of this process that keep every core busy while they live: the load of a busy CI
// machine, which takes CPU from a worker without taking any of its CPU time.
class BusyMachine {
public:
  BusyMachine() {
    const unsigned n = 2 * std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 0; i < n; ++i)
      threads_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
  }
  ~BusyMachine() {
    stop_ = true;
    for (auto& t : threads_)
      t.join();
  }

private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// ---- WorkerProcess under a CPU-time deadline ----------------------------------------------------

TEST(CpuDeadline, TheBackstopIsFourTimesTheDeadlineAndAtLeastTenSecondsMore) {
  EXPECT_DOUBLE_EQ(host_wall_backstop_s(0.5), 10.5);
  EXPECT_DOUBLE_EQ(host_wall_backstop_s(3.0), 13.0);
  EXPECT_DOUBLE_EQ(host_wall_backstop_s(6.0), 24.0); // the host's shortest deadline, 5 s + 1 s
  EXPECT_DOUBLE_EQ(host_wall_backstop_s(100.0), 400.0);
}

TEST(CpuDeadline, ASpinningWorkerPassesItsCpuDeadlineAndTheReplySaysSo) {
  ASSERT_TRUE(cpu_fake_worker_hook);
  WorkerProcess w(fake("spin"));
  ASSERT_EQ(w.hello(deadline_after(10)).status, Reply::Status::ok);
  const Reply r = w.request_within_cpu_time({{"op", "run"}}, CpuDeadline{0.3, 60});
  EXPECT_EQ(r.status, Reply::Status::timeout);
  EXPECT_EQ(r.limit, Reply::Limit::cpu);
  EXPECT_EQ(r.detail,
            "the run passed its deadline of 0.30 s of the worker's CPU time (all its threads)");
  EXPECT_FALSE(w.alive()); // killed and reaped
}

TEST(CpuDeadline, AWorkerUsingNoCpuEndsAtTheBackstopAsBlocked) {
  WorkerProcess w(fake("sleep"));
  ASSERT_EQ(w.hello(deadline_after(10)).status, Reply::Status::ok);
  const Reply r = w.request_within_cpu_time({{"op", "run"}}, CpuDeadline{0.3, 0.6});
  EXPECT_EQ(r.status, Reply::Status::timeout);
  EXPECT_EQ(r.limit, Reply::Limit::backstop);
  EXPECT_EQ(r.detail, "the run used 0.00 s of its 0.30 s of CPU time in the 0.60 s of wall-clock "
                      "time of its backstop: it was blocked (waiting or stopped, not computing) "
                      "for most of that time");
  EXPECT_FALSE(w.alive());
}

TEST(CpuDeadline, AWorkerWithinItsCpuDeadlineAnswersAndStaysAlive) {
  WorkerProcess w(fake("burn"));
  ASSERT_EQ(w.hello(deadline_after(10)).status, Reply::Status::ok);
  for (int i = 0; i < 2; ++i) {
    const Reply r =
        w.request_within_cpu_time({{"op", "run"}, {"cpu_s", 0.1}}, CpuDeadline{2.0, 120});
    EXPECT_EQ(r.status, Reply::Status::ok) << r.detail;
  }
  EXPECT_TRUE(w.alive());
}

// The outcomes are the unloaded machine's whatever the load: a worker needing 0.4 s of CPU
// meets a 1 s CPU deadline (a 1 s wall-clock deadline would not, once it gets less than 40% of a
// core), and a spinning one still ends at its CPU deadline, not at the backstop. Only outcomes
// are asserted, no durations.
TEST(CpuDeadline, OtherBusyProcessesChangeNoOutcome) {
  const BusyMachine busy;
  {
    WorkerProcess w(fake("burn"));
    ASSERT_EQ(w.hello(deadline_after(60)).status, Reply::Status::ok);
    const Reply r =
        w.request_within_cpu_time({{"op", "run"}, {"cpu_s", 0.4}}, CpuDeadline{1.0, 120});
    EXPECT_EQ(r.status, Reply::Status::ok) << r.detail;
  }
  {
    WorkerProcess w(fake("spin"));
    ASSERT_EQ(w.hello(deadline_after(60)).status, Reply::Status::ok);
    const Reply r = w.request_within_cpu_time({{"op", "run"}}, CpuDeadline{0.3, 120});
    EXPECT_EQ(r.status, Reply::Status::timeout);
    EXPECT_EQ(r.limit, Reply::Limit::cpu) << r.detail;
  }
}

// A wall-clock deadline is what the CUDA worker keeps (its GPU time is not its CPU time): the
// timeout says so, as before.
TEST(CpuDeadline, AWallClockDeadlineStaysWallClock) {
  WorkerProcess w(fake("sleep"));
  ASSERT_EQ(w.hello(deadline_after(10)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "run"}}, deadline_after(0.3));
  EXPECT_EQ(r.status, Reply::Status::timeout);
  EXPECT_EQ(r.limit, Reply::Limit::wall);
  EXPECT_EQ(r.detail, "no reply before the deadline; the worker was killed");
}

// ---- kj::check on the host --------------------------------------------------------------------

CheckOptions host_options() {
  CheckOptions o;
  o.backend = Backend::host;
  o.self_exe = KJ_KJUDGE_EXE;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cache_dir = fs::temp_directory_path() / "kjudge_host_deadline_test_cache";
  o.race_detection = false; // one worker, the plain build's
  return o;
}

// A vector_add candidate whose every thread spins forever.
fs::path spinning_candidate(const std::string& name) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << R"cu(/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  volatile int spin = 1;
  while (spin) {
  }
}
)cu";
  return path;
}

Verdict judge_vector_add(const fs::path& candidate) {
  const Problem p = load_problem(fs::path(KJ_SOURCE_DIR) / "problems" / "vector_add");
  return check(p, load_candidate(candidate, p), host_options());
}

// The host's shortest deadline: 5 s (the host's floor), 1 s of allowance and the bytes of the
// first case's copies (under 1 MB: a thousandth of a second); 24 s its backstop.
constexpr const char* kDeadlineTail =
    " s of CPU time, 5 s) plus the copies' allowance; the worker was killed";

TEST(HostCpuDeadline, ASpinningCandidateIsATimeoutNamingItsCpuDeadline) {
  const Verdict v = judge_vector_add(spinning_candidate("kjudge_cpu_spin.cu"));
  EXPECT_EQ(v.reason, Reason::timeout) << v.message;
  ASSERT_FALSE(v.cases.empty());
  const std::string& m = v.cases.front().message;
  EXPECT_EQ(m.rfind("run 1 of 2: the run passed its deadline of 6.00 s of the worker's CPU time "
                    "(all its threads); the deadline is max(20 x the reference's ",
                    0),
            0u)
      << m;
  EXPECT_TRUE(m.ends_with(kDeadlineTail)) << m;
}

// Nothing a candidate can write blocks the host emulation without using CPU: a __syncthreads or
// warp operation that not every thread reaches is a launch error, not a wait (HostKernels.
// ThreadsAtDifferentBarriersAreALaunchErrorNotAHang), a thread waiting on a flag spins (as on
// the GPU), __nanosleep is refused, and cuda/barrier and cuda/atomic are not on the host's
// include path. What the backstop ends is a worker that the machine stops running (a stopped or
// starved process, or a wait inside the emulation itself): here a SIGSTOP once the run is under
// way.
std::vector<pid_t> host_workers_of_this_process() {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const std::size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    long long ppid = 0;
    rest >> state >> ppid;
    if (ppid != ::getpid()) continue;
    std::ifstream cmd(entry.path() / "cmdline", std::ios::binary);
    const std::string args((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (args.find(std::string("--host") + '\0') != std::string::npos)
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

std::optional<double> cpu_s_of(pid_t pid) {
  clockid_t clock;
  timespec t{};
  if (::clock_getcpuclockid(pid, &clock) != 0 || ::clock_gettime(clock, &t) != 0)
    return std::nullopt;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

TEST(HostCpuDeadline, AWorkerThatStopsRunningEndsAtTheBackstopCalledBlocked) {
  std::future<Verdict> verdict = std::async(std::launch::async, [] {
    return judge_vector_add(spinning_candidate("kjudge_cpu_stopped.cu"));
  });
  // Once the worker has used 1 s of CPU, it is in the first run (its start and load take a
  // fraction of that) and 5 s short of its deadline: stopped there, it never reaches it.
  bool stopped = false;
  while (!stopped && verdict.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready)
    for (const pid_t pid : host_workers_of_this_process())
      if (cpu_s_of(pid).value_or(0) >= 1.0 && ::kill(pid, SIGSTOP) == 0) stopped = true;
  const Verdict v = verdict.get();
  ASSERT_TRUE(stopped) << v.message;
  EXPECT_EQ(v.reason, Reason::timeout) << v.message;
  ASSERT_FALSE(v.cases.empty());
  const std::string& m = v.cases.front().message;
  EXPECT_EQ(m.rfind("run 1 of 2: the run used ", 0), 0u) << m;
  EXPECT_NE(m.find(" s of its 6.00 s of CPU time in the 24.00 s of wall-clock time of its "
                   "backstop: it was blocked (waiting or stopped, not computing) for most of "
                   "that time; the deadline is max(20 x the reference's "),
            std::string::npos)
      << m;
  EXPECT_TRUE(m.ends_with(kDeadlineTail)) << m;
}

} // namespace
