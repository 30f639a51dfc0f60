// The oracle's handling of a worker process, without a GPU: the test binary re-executes itself
// as a fake worker (a static initializer takes over before gtest when the command line says
// --fake-worker MODE FD) that greets, echoes, hangs, crashes, exits, or writes garbage. Each
// way a worker can end must become the right Reply: timeout (and the worker killed), died with
// its exit status or signal, protocol for garbage; and a fresh worker works after a dead one.
// Also worker_main itself, which without a GPU must say why it cannot start and exit 3, and the
// compile-only worker: a module for a good source, a compile_error for a bad one, and a compile
// that cannot fit its memory cap ends in the worker, not in the oracle.
#include <signal.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "judge/check_settings.hpp"
#include "judge/kernel_under_test.hpp"
#include "worker/protocol.hpp"
#include "support/own_command_line.hpp"
#include "worker/spare_workers.hpp"
#include "worker/main/worker_mains.hpp"
#include "worker/worker_process.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/error.hpp"
#include "kjudge/judge.hpp"

extern char** environ;

namespace {

using namespace kj::judge;
using nlohmann::json;

// ---- the fake worker ----------------------------------------------------------------------

using kj::test::own_command_line;

bool fd_is_dev_null(int fd) {
  struct stat a {
  }, b{};
  return ::fstat(fd, &a) == 0 && ::stat("/dev/null", &b) == 0 && a.st_rdev == b.st_rdev &&
         S_ISCHR(a.st_mode);
}

// What the descriptors past the protocol's lead to (the listing's own left out).
std::vector<std::string> inherited_files(int protocol_fd) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const int fd = std::atoi(entry.path().filename().c_str());
    const std::string target = std::filesystem::read_symlink(entry.path(), ec).string();
    if (fd > 2 && fd != protocol_fd && !ec && !target.starts_with("/proc")) out.push_back(target);
  }
  return out;
}

// The names of this process's environment variables.
std::vector<std::string> environment_names() {
  std::vector<std::string> names;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    names.emplace_back(entry.substr(0, entry.find('=')));
  }
  return names;
}

int fake_worker(const std::string& mode, int fd) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL); // as the real workers do
  if (mode == "silent") {
    std::this_thread::sleep_for(std::chrono::hours(1));
    return 0;
  }
  if (mode == "refuse") {
    (void)write_message(fd, {{"error", "internal"}, {"message", "pageable memory access"}});
    return 3;
  }
  (void)write_message(fd, {{"ready", true}, {"pid", static_cast<long long>(::getpid())}});
  if (mode == "deaf") { // never reads again, not even "exit"
    std::this_thread::sleep_for(std::chrono::hours(1));
    return 0;
  }
  FrameDecoder decoder;
  for (;;) {
    const ReadResult got = read_message(fd, decoder);
    if (got.status != ReadResult::Status::message) return 0;
    const json& m = got.message;
    if (m.value("op", "") == "exit") return 0;
    if (mode == "echo") {
      (void)write_message(fd, {{"ok", true},
                               {"echo", m},
                               {"stdout_is_dev_null", fd_is_dev_null(1)},
                               {"stdin_is_dev_null", fd_is_dev_null(0)},
                               {"environment", environment_names()},
                               {"inherited", inherited_files(fd)}});
    } else if (mode == "hang") {
      std::this_thread::sleep_for(std::chrono::hours(1));
    } else if (mode == "segv") {
      ::raise(SIGSEGV);
    } else if (mode == "exit7") {
      std::_Exit(7);
    } else if (mode == "garbage") {
      const std::string frame = std::string("\x05\x00\x00\x00", 4) + "{oops";
      (void)::write(fd, frame.data(), frame.size());
    } else if (mode == "partial") {
      const std::string frame = std::string("\x40\x00\x00\x00", 4) + "{\"ok\":";
      (void)::write(fd, frame.data(), frame.size());
      std::_Exit(0);
    } else if (mode == "crash_reply") {
      (void)write_message(
          fd, {{"error", "crash"}, {"message", "launch[0] 'k': CUDA_ERROR_ILLEGAL_ADDRESS"}});
      return 1;
    } else if (mode == "neither") {
      (void)write_message(fd, {{"hello", "there"}});
    }
  }
}

// Runs before gtest's main when this binary is started as a fake worker.
// Also the real compile-only worker: `--compile-worker MIB FD` runs compile_worker_main, which
// needs no GPU (NVRTC only), as `kjudge --worker --compile-only` would.
const bool fake_worker_hook = [] {
  const auto args = own_command_line();
  if (args.size() >= 4 && args[1] == "--fake-worker")
    std::_Exit(fake_worker(args[2], std::stoi(args[3])));
  if (args.size() >= 4 && args[1] == "--compile-worker")
    std::_Exit(kj::compile_worker_main(std::stoi(args[3]), std::stoull(args[2]) << 20));
  return true;
}();

std::vector<std::string> fake(const std::string& mode) {
  return {"/proc/self/exe", "--fake-worker", mode, "{fd}"};
}

Clock::time_point in_ms(int ms) {
  return Clock::now() + std::chrono::milliseconds(ms);
}

// ---- tests --------------------------------------------------------------------------------

TEST(WorkerProcess, GreetsAndAnswersRequests) {
  ASSERT_TRUE(fake_worker_hook);
  WorkerProcess w(fake("echo"));
  const Reply hello = w.hello(in_ms(10000));
  ASSERT_EQ(hello.status, Reply::Status::ok) << hello.detail;
  EXPECT_EQ(hello.message["pid"].get<long long>(), static_cast<long long>(w.pid()));
  for (int i = 0; i < 3; ++i) {
    const Reply r = w.request({{"op", "ping"}, {"n", i}}, in_ms(10000));
    ASSERT_EQ(r.status, Reply::Status::ok) << r.detail;
    EXPECT_EQ(r.message["echo"]["n"], i);
  }
  EXPECT_TRUE(w.alive());
}

TEST(WorkerProcess, StdoutAndStdinAreDevNull) {
  // Device printf output of a candidate must never reach a JSON report on stdout.
  WorkerProcess w(fake("echo"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "ping"}}, in_ms(10000));
  ASSERT_EQ(r.status, Reply::Status::ok);
  EXPECT_TRUE(r.message["stdout_is_dev_null"].get<bool>());
  EXPECT_TRUE(r.message["stdin_is_dev_null"].get<bool>());
}

TEST(WorkerProcess, TheWorkerGetsOnlyTheEnvironmentItNeeds) {
  // It runs the candidate: the secret hidden shapes are drawn with, and anything else of the
  // judge's (the attack: a token in the environment, read by the candidate and printed back in
  // its verdict), stays with the oracle; what the driver and NVRTC read goes with it.
  ::setenv("KJUDGE_SECRET", "0123456789abcdef", 1);
  ::setenv("KJUDGE_TEST_TOKEN", "s3cr3t", 1);
  ::setenv("HOME", "/root", 0);
  ::setenv("CUDA_VISIBLE_DEVICES", "0", 0);
  WorkerProcess w(fake("echo"));
  ::unsetenv("KJUDGE_SECRET");
  ::unsetenv("KJUDGE_TEST_TOKEN");
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "ping"}}, in_ms(10000));
  ASSERT_EQ(r.status, Reply::Status::ok);
  const auto names = r.message["environment"].get<std::vector<std::string>>();
  auto has = [&](const char* name) { return std::ranges::find(names, name) != names.end(); };
  EXPECT_FALSE(has("KJUDGE_SECRET"));
  EXPECT_FALSE(has("KJUDGE_TEST_TOKEN"));
  EXPECT_TRUE(has("HOME"));
  EXPECT_TRUE(has("CUDA_VISIBLE_DEVICES"));
}

TEST(WorkerProcess, TheWorkerInheritsNoDescriptorOfTheOracles) {
  // A file the oracle holds open without close-on-exec (a results file, a client's socket)
  // never reaches the process that runs the candidate, which could write to it.
  const std::string path = ::testing::TempDir() + "kjudge-inherited-results.jsonl";
  const int held = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(held, 0);
  WorkerProcess w(fake("echo"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "ping"}}, in_ms(10000));
  ::close(held);
  ::unlink(path.c_str());
  ASSERT_EQ(r.status, Reply::Status::ok);
  EXPECT_EQ(r.message["inherited"], json::array());
}

TEST(WorkerProcess, BigMessagesCrossIntact) {
  WorkerProcess w(fake("echo"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const std::string big(3 << 20, 'x'); // larger than any socket buffer
  const Reply r = w.request({{"op", "ping"}, {"blob", big}}, in_ms(20000));
  ASSERT_EQ(r.status, Reply::Status::ok) << r.detail;
  EXPECT_EQ(r.message["echo"]["blob"].get<std::string>(), big);
}

TEST(WorkerProcess, AHangingWorkerTimesOutAndIsKilled) {
  WorkerProcess w(fake("hang"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const pid_t pid = w.pid();
  const auto start = Clock::now();
  const Reply r = w.request({{"op", "run"}}, in_ms(300));
  const auto waited = Clock::now() - start;
  EXPECT_EQ(r.status, Reply::Status::timeout);
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  EXPECT_LT(waited, std::chrono::seconds(5));
  EXPECT_FALSE(w.alive());
  EXPECT_NE(::kill(pid, 0), 0); // reaped: no such process any more
}

TEST(WorkerProcess, ASilentWorkerTimesOutAtStartUp) {
  WorkerProcess w(fake("silent"));
  const Reply r = w.hello(in_ms(300));
  EXPECT_EQ(r.status, Reply::Status::timeout);
  EXPECT_FALSE(w.alive());
}

TEST(WorkerProcess, ASegfaultIsDeathBySignal) {
  WorkerProcess w(fake("segv"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "run"}}, in_ms(10000));
  EXPECT_EQ(r.status, Reply::Status::died);
  EXPECT_NE(r.detail.find("killed by signal 11 (SIGSEGV)"), std::string::npos) << r.detail;
  EXPECT_FALSE(w.alive());
  // A dead worker answers every later request as dead, at once.
  const Reply again = w.request({{"op", "run"}}, in_ms(10000));
  EXPECT_EQ(again.status, Reply::Status::died);
}

TEST(WorkerProcess, AnExitIsDeathWithItsStatus) {
  WorkerProcess w(fake("exit7"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "run"}}, in_ms(10000));
  EXPECT_EQ(r.status, Reply::Status::died);
  EXPECT_NE(r.detail.find("exited with status 7"), std::string::npos) << r.detail;
}

TEST(WorkerProcess, DeathInsideAMessageIsDeath) {
  WorkerProcess w(fake("partial"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "run"}}, in_ms(10000));
  EXPECT_EQ(r.status, Reply::Status::died);
  EXPECT_NE(r.detail.find("inside a message"), std::string::npos) << r.detail;
}

TEST(WorkerProcess, GarbageIsAProtocolFailure) {
  WorkerProcess w(fake("garbage"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "run"}}, in_ms(10000));
  EXPECT_EQ(r.status, Reply::Status::protocol);
  EXPECT_NE(r.detail.find("not JSON"), std::string::npos) << r.detail;
  EXPECT_FALSE(w.alive()); // a worker that breaks the protocol is not trusted further
}

TEST(WorkerProcess, AReplyThatIsNeitherOkNorErrorIsAProtocolFailure) {
  WorkerProcess w(fake("neither"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "run"}}, in_ms(10000));
  EXPECT_EQ(r.status, Reply::Status::protocol);
}

TEST(WorkerProcess, ACrashReplyIsAnErrorThenTheWorkerIsGone) {
  WorkerProcess w(fake("crash_reply"));
  ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
  const Reply r = w.request({{"op", "run"}}, in_ms(10000));
  ASSERT_EQ(r.status, Reply::Status::error);
  EXPECT_EQ(r.error.error, "crash");
  EXPECT_NE(r.error.message.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
  const Reply next = w.request({{"op", "run"}}, in_ms(10000));
  EXPECT_EQ(next.status, Reply::Status::died);
  EXPECT_NE(next.detail.find("exited with status 1"), std::string::npos) << next.detail;
}

TEST(WorkerProcess, ARefusalAtStartUpIsAnErrorReply) {
  WorkerProcess w(fake("refuse"));
  const Reply r = w.hello(in_ms(10000));
  ASSERT_EQ(r.status, Reply::Status::error);
  EXPECT_EQ(r.error.error, "internal");
  EXPECT_EQ(r.error.message, "pageable memory access");
}

TEST(WorkerProcess, AFreshWorkerServesAfterADeadOne) {
  // The judge replaces a crashed worker and carries on with the next case.
  {
    WorkerProcess dead(fake("segv"));
    ASSERT_EQ(dead.hello(in_ms(10000)).status, Reply::Status::ok);
    EXPECT_EQ(dead.request({{"op", "run"}}, in_ms(10000)).status, Reply::Status::died);
  }
  WorkerProcess fresh(fake("echo"));
  ASSERT_EQ(fresh.hello(in_ms(10000)).status, Reply::Status::ok);
  EXPECT_EQ(fresh.request({{"op", "run"}}, in_ms(10000)).status, Reply::Status::ok);
}

// A long-lived judge's spares: the first call starts its worker on demand and one more to wait;
// the next call gets that one (a process of its own, greeted, never asked anything before) and
// another starts in its place. Workers of another command line are not interchangeable.
TEST(SpareWorkers, HandsOutTheWaitingWorkerAndStartsTheNext) {
  kj::SpareWorkers spares;
  const std::unique_ptr<WorkerProcess> first = spares.take(fake("echo"));
  const std::unique_ptr<WorkerProcess> second = spares.take(fake("echo"));
  kj::SpareWorkerStats stats = kj::spare_worker_stats(spares);
  EXPECT_EQ(stats.started_on_demand, 1u);
  EXPECT_EQ(stats.taken_ready, 1u);
  ASSERT_NE(first->pid(), second->pid());
  for (WorkerProcess* w : {first.get(), second.get()}) {
    const Reply hello = w->hello(in_ms(10000));
    ASSERT_EQ(hello.status, Reply::Status::ok) << hello.detail;
    EXPECT_EQ(hello.message["pid"].get<long long>(), static_cast<long long>(w->pid()));
    EXPECT_EQ(w->request({{"op", "ping"}}, in_ms(10000)).status, Reply::Status::ok);
  }
  const std::unique_ptr<WorkerProcess> other = spares.take(fake("segv"));
  stats = kj::spare_worker_stats(spares);
  EXPECT_EQ(stats.started_on_demand, 2u);
  EXPECT_EQ(stats.taken_ready, 1u);
  EXPECT_EQ(other->hello(in_ms(10000)).status, Reply::Status::ok);
}

// A worker dies with the thread that started it (PR_SET_PDEATHSIG): a spare caused by a take on
// a thread that has ended since (a mutation campaign's per-problem threads) must still answer.
// The fake worker sets the death signal as the real ones do.
TEST(SpareWorkers, ASpareOutlivesTheThreadWhoseTakeCausedIt) {
  kj::SpareWorkers spares;
  std::thread([&] { (void)spares.take(fake("echo")); }).join();
  const std::unique_ptr<WorkerProcess> spare = spares.take(fake("echo"));
  EXPECT_EQ(kj::spare_worker_stats(spares).taken_ready, 1u);
  const Reply hello = spare->hello(in_ms(10000));
  ASSERT_EQ(hello.status, Reply::Status::ok) << hello.detail;
  EXPECT_EQ(spare->request({{"op", "ping"}}, in_ms(10000)).status, Reply::Status::ok);
}

TEST(WorkerProcess, AShellThatExitsAtOnceIsDeadAtHello) {
  WorkerProcess w({"/bin/sh", "-c", "exit 5", "{fd}"});
  const Reply r = w.hello(in_ms(10000));
  EXPECT_EQ(r.status, Reply::Status::died);
  EXPECT_NE(r.detail.find("exited with status 5"), std::string::npos) << r.detail;
}

TEST(WorkerProcess, TheFdPlaceholderNamesAnOpenSocket) {
  // sh checks that the fd it was given is open (the oracle's own end is close-on-exec and
  // must not be; the worker's end must be inherited).
  WorkerProcess w({"/bin/sh", "-c", "test -S /proc/self/fd/$0 && exit 0 || exit 9", "{fd}"});
  const Reply r = w.hello(in_ms(10000));
  EXPECT_EQ(r.status, Reply::Status::died);
  EXPECT_NE(r.detail.find("exited with status 0"), std::string::npos) << r.detail;
}

TEST(WorkerProcess, AMissingExecutableIsAnInternalError) {
  EXPECT_THROW(WorkerProcess({"/nonexistent/kjudge", "--worker", "--fd", "{fd}"}),
               kj::InternalError);
}

TEST(WorkerProcess, TheDestructorEndsAHangingWorker) {
  pid_t pid = -1;
  const auto start = Clock::now();
  {
    WorkerProcess w(fake("deaf")); // the polite "exit" is never read
    ASSERT_EQ(w.hello(in_ms(10000)).status, Reply::Status::ok);
    pid = w.pid();
  }
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
  EXPECT_NE(::kill(pid, 0), 0);
}

TEST(ExitStatus, Describes) {
  const ExitStatus exited{true, 3, 0}, killed{false, 0, SIGKILL}, other{false, 0, 64};
  EXPECT_EQ(exited.describe(), "exited with status 3");
  EXPECT_EQ(killed.describe(), "killed by signal 9 (SIGKILL)");
  EXPECT_EQ(other.describe(), "killed by signal 64 (signal 64)");
}

TEST(WorkerMain, WithoutAGpuItSaysWhyAndExits3) {
  std::string why;
  if (kj::cuda_available(&why)) GTEST_SKIP() << "a GPU is usable here; gpu_tests cover the worker";
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  int rc = -1;
  std::thread worker([&] { rc = kj::worker_main(fds[1], 0); });
  FrameDecoder decoder;
  const ReadResult got = read_message(fds[0], decoder, in_ms(30000));
  worker.join();
  ::close(fds[0]);
  ::close(fds[1]);
  ASSERT_EQ(got.status, ReadResult::Status::message) << got.error;
  EXPECT_EQ(got.message["error"], "internal");
  EXPECT_NE(got.message["message"].get<std::string>().find("cannot start"), std::string::npos);
  EXPECT_EQ(rc, 3);
}

// ---- the compile-only worker ----------------------------------------------------------------

std::vector<std::string> compile_worker(int memory_mib) {
  return {"/proc/self/exe", "--compile-worker", std::to_string(memory_mib), "{fd}"};
}

json compile_request(const std::string& source) {
  CompileRequest r;
  r.source = source;
  r.file_name = "cand.cu";
  r.expressions = {"scale<float>"};
  r.kjudge_include = KJ_SOURCE_DIR "/include";
  r.arch = 90;
  return to_json(r);
}

const char* const kTemplateKernel =
    "template <class T> __global__ void scale(T* x, T a, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) x[i] *= a;\n"
    "}\n";

TEST(CompileWorker, RepliesWithTheModule) {
  WorkerProcess w(compile_worker(4096));
  const Reply hello = w.hello(in_ms(30000));
  ASSERT_EQ(hello.status, Reply::Status::ok) << hello.detail;
  EXPECT_EQ(hello.message["compiler"], true);
  const Reply r = w.request(compile_request(kTemplateKernel), in_ms(120000));
  ASSERT_EQ(r.status, Reply::Status::ok) << r.detail << r.error.message;
  const ModuleMessage m = module_message_from_json(r.message);
  ASSERT_GE(m.cubin.size(), 4u);
  EXPECT_EQ(std::string(m.cubin.data() + 1, 3), "ELF");
  ASSERT_EQ(m.kernels.size(), 1u);
  EXPECT_EQ(m.kernels[0].param_types, (std::vector<std::string>{"float*", "float", "int"}));
  // One request per process: the worker has exited after replying.
  EXPECT_EQ(w.wait(std::chrono::milliseconds(10000)).describe(), "exited with status 0");
}

TEST(CompileWorker, ACompileErrorIsItsReply) {
  WorkerProcess w(compile_worker(4096));
  ASSERT_EQ(w.hello(in_ms(30000)).status, Reply::Status::ok);
  const Reply r = w.request(compile_request("this is not C++;"), in_ms(120000));
  ASSERT_EQ(r.status, Reply::Status::error) << r.detail;
  EXPECT_EQ(r.error.error, "compile_error");
}

TEST(CompileWorker, ACompileOverItsMemoryCapEndsInTheWorker) {
  // 64 MiB of address space cannot even hold NVRTC: the compile fails in the worker (an
  // out-of-memory reply, or the worker dies), and this process goes on unharmed.
  WorkerProcess w(compile_worker(64));
  const Reply hello = w.hello(in_ms(30000));
  if (hello.status != Reply::Status::ok) {
    EXPECT_EQ(hello.status, Reply::Status::died) << hello.detail;
    return;
  }
  const Reply r = w.request(compile_request(kTemplateKernel), in_ms(120000));
  if (r.status == Reply::Status::died) return; // an abort inside NVRTC: the worker's alone
  ASSERT_EQ(r.status, Reply::Status::error) << r.detail;
  EXPECT_EQ(r.error.error, "compile_error");
  EXPECT_NE(r.error.message.find("capped at 64 MiB"), std::string::npos) << r.error.message;
}

} // namespace

// ---- what a worker's failed reply means, by backend ------------------------------------------

namespace {

kj::judge::RunOutcome outcome_of(const Reply& reply, kj::Backend backend) {
  kj::CheckOptions options;
  kj::judge::CheckSettings settings(options);
  settings.backend = backend;
  const kj::Candidate kernel;
  bool lost = false;
  return kj::judge::failed_run(reply, kj::judge::RunOutcome{}, kernel, 0.001, settings, lost);
}

} // namespace

TEST(WorkerProcess, AReplyTheHostWorkerNeverGivesIsTheCandidatesCrash) {
  // The host worker runs the candidate's native code, which can write to the judge's socket:
  // a forged "internal" or a reply off the protocol is its FAIL, never kjudge's ERROR (the
  // attack: one forged line turned a FAIL into ERROR(internal)). A CUDA worker runs none of
  // the candidate's host code: there it stays kjudge's fault.
  Reply forged;
  forged.status = Reply::Status::error;
  forged.error.error = "internal";
  forged.error.message = "the worker's own fault, it says";
  const kj::judge::RunOutcome on_host = outcome_of(forged, kj::Backend::host);
  EXPECT_EQ(on_host.reason, kj::Reason::crash);
  EXPECT_EQ(on_host.message, "the host worker, which runs the candidate's code, answered what the "
                             "worker itself never does (the worker failed: the worker's own "
                             "fault, it says): the candidate's fault");
  EXPECT_EQ(outcome_of(forged, kj::Backend::cuda).reason, kj::Reason::internal);
  Reply garbage;
  garbage.status = Reply::Status::protocol;
  garbage.detail = "not JSON";
  EXPECT_EQ(outcome_of(garbage, kj::Backend::host).reason, kj::Reason::crash);
  EXPECT_EQ(outcome_of(garbage, kj::Backend::cuda).reason, kj::Reason::internal);
}
