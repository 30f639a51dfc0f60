// kj::check and `kjudge check` end to end on a GPU: the bundled solutions pass, each trap fails
// with its own reason, and each defence's test switch shows the trap getting through with the
// defence off (docs/design.md "Defences"). Also crash recovery (a fresh worker
// per case after a crash), a failed device assert and a trap (crashes with their quoted text),
// the watchdog, launch errors before and during cases, compile errors,
// --against, --case, --fail-fast, the in-process worker, and the CLI's JSON and exit codes.
// Without a GPU these SKIP (FAIL under KJUDGE_REQUIRE_GPU=1), except the tests of the SKIP
// verdict itself, which need the machine to have no GPU.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpu_test_support.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/test_switches.hpp"
#include "kjudge/report.hpp"
#include "kjudge/serve.hpp"
#include "kjudge/spec.hpp"

extern char** environ;

namespace kj {
namespace {

namespace fs = std::filesystem;

fs::path problem_dir(const std::string& name) {
  return fs::path(KJ_SOURCE_DIR) / "problems" / name;
}

fs::path temp_dir() {
  static const fs::path dir = [] {
    const fs::path d =
        fs::temp_directory_path() / ("kjudge_check_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// A candidate file written for the test.
fs::path write_candidate(const std::string& name, const std::string& text) {
  const fs::path p = temp_dir() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  return p;
}

// Removes the temporary folder when the tests end.
struct TempCleanup : ::testing::Environment {
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(temp_dir(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const cleanup =
    ::testing::AddGlobalTestEnvironment(new TempCleanup);

// A trimmed case plan (one seed, no transforms, a few perturbations; the special values stay,
// some traps need them) so the suite fits a short GPU session; the CLI test runs the full plan.
CheckOptions options() {
  CheckOptions o;
  o.cases.seeds = 1;
  o.cases.transforms = false;
  o.cases.max_perturbed = 8;
  o.self_exe = KJ_KJUDGE_EXE;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cache_dir = temp_dir() / "cache"; // shared by the tests of this process: compiles once
  return o;
}

// Traps need only their first failing case: the rest of the plan is time on a shared GPU.
CheckOptions fail_fast() {
  CheckOptions o = options();
  o.fail_fast = true;
  return o;
}

Verdict judge(const std::string& problem, const fs::path& candidate, CheckOptions o = options()) {
  const Problem p = load_problem(problem_dir(problem));
  const Candidate c = load_candidate(candidate, p);
  return check(p, c, o);
}

std::string describe(const Verdict& v) {
  std::string s = std::string(outcome_name(v.outcome)) + "(" + std::string(reason_name(v.reason)) +
                  "): " + v.message;
  if (v.first_failing_case) s += " [" + *v.first_failing_case + "]";
  return s;
}

// Sets KJ_TEST_DISABLE for one scope.
struct Disabled {
  explicit Disabled(const char* names) {
    ::setenv("KJ_TEST_DISABLE", names, 1);
    kj::allow_test_switches(true);
  }
  ~Disabled() {
    ::unsetenv("KJ_TEST_DISABLE");
    kj::allow_test_switches(false);
  }
};

class Check : public test::GpuTest {
protected:
  void SetUp() override {
    test::GpuTest::SetUp();
    ::unsetenv("KJ_TEST_DISABLE");
  }
};

// vector_add's plan header, for the inline candidates below.
const std::string kVectorAddPlan = R"cu(/* kjudge
[[launch]]
kernel = "k"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
)cu";

// ---- solutions pass ---------------------------------------------------------------------------

TEST_F(Check, VectorAddSolutionsPass) {
  for (const char* file : {"solutions/basic.cu", "solutions/grid_stride.cu"}) {
    const Verdict v = judge("vector_add", problem_dir("vector_add") / file);
    EXPECT_EQ(v.outcome, Outcome::pass) << file << ": " << describe(v);
    EXPECT_GT(v.cases_total, 10);
    EXPECT_EQ(v.cases_passed, v.cases_total);
    EXPECT_EQ(v.manifest.backend, "cuda");
    EXPECT_EQ(v.manifest.trust, "cuda");
    EXPECT_FALSE(v.manifest.gpu.empty());
    EXPECT_FALSE(v.manifest.nvrtc_version.empty());
    EXPECT_EQ(v.manifest.candidate_hash.size(), 64u);
  }
}

TEST_F(Check, SoftmaxSolutionsPass) {
  for (const char* file :
       {"solutions/basic.cu", "solutions/block_reduce.cu", "solutions/warp_shuffle.cu"}) {
    const Verdict v = judge("softmax", problem_dir("softmax") / file);
    EXPECT_EQ(v.outcome, Outcome::pass) << file << ": " << describe(v);
  }
}

// ---- traps and their defences --------------------------------------------------------------

TEST_F(Check, OffByOneIsAnOobWriteAndPassesWithoutRedZones) {
  const fs::path trap = problem_dir("vector_add") / "traps/off_by_one.cu";
  const Verdict v = judge("vector_add", trap, fail_fast());
  EXPECT_EQ(v.reason, Reason::oob_write) << describe(v);
  EXPECT_NE(v.message.find("output 'z'"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("past its end"), std::string::npos) << v.message;
  EXPECT_NE(v.replay_command.find("--case"), std::string::npos);
  const Disabled off("redzone");
  const Verdict without = judge("vector_add", trap);
  EXPECT_EQ(without.outcome, Outcome::pass) << describe(without);
}

TEST_F(Check, InputMutationIsInputModifiedAndPassesWithoutTheCheck) {
  const fs::path trap = problem_dir("vector_add") / "traps/input_mutation.cu";
  const Verdict v = judge("vector_add", trap, fail_fast());
  EXPECT_EQ(v.reason, Reason::input_modified) << describe(v);
  EXPECT_NE(v.message.find("input 'x'"), std::string::npos) << v.message;
  const Disabled off("input_hash");
  EXPECT_EQ(judge("vector_add", trap).outcome, Outcome::pass);
}

TEST_F(Check, AClockReadBehindAMacroIsForbiddenAndPassesWithoutTheScan) {
  const fs::path trap = problem_dir("vector_add") / "traps/clock_gate.cu";
  const Verdict v = judge("vector_add", trap);
  EXPECT_EQ(v.reason, Reason::forbidden_construct) << describe(v);
  EXPECT_NE(v.message.find("reads %globaltimer (a clock) at line 16 in vector_add("),
            std::string::npos)
      << v.message;
  EXPECT_TRUE(v.cases.empty());
  const Disabled off("static_scan");
  EXPECT_EQ(judge("vector_add", trap).outcome, Outcome::pass);
}

TEST_F(Check, MissingKernelIsALaunchError) {
  const Verdict v = judge("vector_add", problem_dir("vector_add") / "traps/missing_kernel.cu");
  EXPECT_EQ(v.reason, Reason::launch_error) << describe(v);
  EXPECT_TRUE(v.cases.empty());
  EXPECT_TRUE(v.compiled);
}

TEST_F(Check, GoldenReaderNeverPasses) {
  const Verdict v =
      judge("vector_add", problem_dir("vector_add") / "traps/golden_reader.cu", fail_fast());
  EXPECT_TRUE(v.reason == Reason::crash || v.reason == Reason::mismatch) << describe(v);
}

TEST_F(Check, SoftmaxTraps) {
  Verdict v = judge("softmax", problem_dir("softmax") / "traps/zeros.cu", fail_fast());
  EXPECT_EQ(v.reason, Reason::mismatch) << describe(v);
  v = judge("softmax", problem_dir("softmax") / "traps/no_max_subtraction.cu", fail_fast());
  EXPECT_EQ(v.reason, Reason::nonfinite) << describe(v);
}

TEST_F(Check, HalfTheOutputUnwrittenIsUnwrittenOutput) {
  const fs::path c = write_candidate("half.cu", kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N && i % 2 == 0) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", c, fail_fast());
  EXPECT_EQ(v.reason, Reason::unwritten_output) << describe(v);
  EXPECT_NE(v.message.find("never written (first at [1])"), std::string::npos) << v.message;
  // Without poison the elements hold whatever the allocation held: never a pass for the
  // checker to rely on, but no longer recognised as unwritten.
  const Disabled off("poison");
  const Verdict without = judge("vector_add", c, fail_fast());
  EXPECT_NE(without.reason, Reason::unwritten_output) << describe(without);
}

TEST_F(Check, ARaceIsNondeterministicAndAMismatchWithoutTheRerun) {
  const fs::path c = write_candidate("race.cu", kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // The clock stands in for a race: which value lands differs from run to run. (Reading it is a
  // forbidden construct, so the static scan is off here.)
  if (i < N) z[i] = x[i] + y[i] + (((clock64() >> 4) & 1) ? 1.0f : 0.0f);
}
)cu");
  const Disabled scan_off("static_scan");
  const Verdict v = judge("vector_add", c, fail_fast());
  EXPECT_EQ(v.reason, Reason::nondeterministic) << describe(v);
  const Disabled off("static_scan,rerun");
  EXPECT_EQ(judge("vector_add", c, fail_fast()).reason, Reason::mismatch);
}

// ---- the GPU comparator inside the check ------------------------------------------------------

// A verdict's cases as the JSON report has them: every finding, message and number.
nlohmann::json cases_of(const Verdict& v) {
  nlohmann::json j = to_json(v);
  return {j["outcome"], j["reason"], j["message"], j["cases"]};
}

// A case whose two runs agree byte for byte is judged on the GPU; the verdict must be the one
// the host comparator gives, case by case and number by number, passing or failing.
TEST_F(Check, TheGpuComparatorsVerdictIsTheHosts) {
  struct Pick {
    const char* problem;
    const char* file;
  };
  for (const Pick& p : {Pick{"softmax", "solutions/warp_shuffle.cu"},
                        Pick{"softmax", "traps/zeros.cu"},
                        Pick{"softmax", "traps/no_max_subtraction.cu"},
                        Pick{"layernorm", "traps/eps_outside_sqrt.cu"},
                        Pick{"matmul", "traps/k_tail_dropped.cu"},
                        Pick{"reduce_sum", "solutions/split_two_pass.cu"},
                        Pick{"relu", "traps/fmax_drops_nan.cu"}}) {
    CheckOptions on_host = options();
    on_host.gpu_comparator = false;
    const fs::path file = problem_dir(p.problem) / p.file;
    const Verdict gpu = judge(p.problem, file);
    const Verdict host = judge(p.problem, file, on_host);
    EXPECT_GT(gpu.cases_total, 5) << p.problem << "/" << p.file;
    EXPECT_EQ(cases_of(gpu).dump(1), cases_of(host).dump(1)) << p.problem << "/" << p.file;
  }
}

// ---- crashes, timeouts, launch and compile errors ---------------------------------------------

const std::string kCrash = kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  float* nowhere = reinterpret_cast<float*>(0x100);
  nowhere[threadIdx.x] = x[0];
}
)cu";

// Two judges on one GPU (`serve --devices 0,0`, issue 29 on a one-GPU machine): a crash and an
// endless kernel take one judge each for a while; every request is answered exactly once, with
// its own verdict and the device that judged it.
TEST_F(Check, TwoJudgesOnOneGpuAnswerEveryRequestOnceThroughACrashAndAHang) {
  const std::string spin = kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  volatile float* out = z;
  for (;;) out[0] = x[0] + y[0];
}
)cu";
  std::ifstream basic_file(problem_dir("vector_add") / "solutions" / "basic.cu");
  const std::string basic(std::istreambuf_iterator<char>(basic_file), {});
  ServeOptions o;
  o.defaults = options();
  o.defaults.backend = Backend::cuda;
  o.defaults.deadline_min_s = 0.2;
  o.devices = {0, 0};
  o.unordered = true;
  const std::string dir = problem_dir("vector_add").string();
  std::string requests;
  auto add = [&](int id, const std::string& source) {
    requests += nlohmann::json{{"id", id}, {"problem", dir}, {"name", "c.cu"},
                               {"source", source + "\n// " + std::to_string(id) + "\n"}}
                    .dump() + "\n";
  };
  add(0, spin);
  add(1, kCrash);
  for (int id = 2; id < 8; ++id)
    add(id, basic);
  std::istringstream in(requests);
  std::ostringstream out;
  ASSERT_EQ(serve(in, out, o), 0);
  std::istringstream lines(out.str());
  std::map<int, nlohmann::json> by_id;
  for (std::string line; std::getline(lines, line);) {
    const nlohmann::json a = nlohmann::json::parse(line);
    EXPECT_TRUE(by_id.emplace(a["id"].get<int>(), a).second) << "answered twice: " << line;
  }
  ASSERT_EQ(by_id.size(), 8u) << out.str().substr(0, 2000);
  EXPECT_EQ(by_id[0]["verdict"]["reason"], "timeout") << by_id[0].dump().substr(0, 400);
  EXPECT_EQ(by_id[1]["verdict"]["reason"], "crash") << by_id[1].dump().substr(0, 400);
  for (int id = 2; id < 8; ++id)
    EXPECT_EQ(by_id[id]["verdict"]["outcome"], "PASS") << by_id[id].dump().substr(0, 400);
  for (const auto& [id, a] : by_id)
    EXPECT_EQ(a["verdict"]["manifest"]["device"], 0) << id;
}

TEST_F(Check, ACrashFailsEveryCaseWithAFreshWorkerEachTime) {
  const fs::path c = write_candidate("crash.cu", kCrash);
  const Verdict v = judge("vector_add", c);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  // One crash does not hide the later cases: each ran (and crashed) in a new worker.
  const Problem p = load_problem(problem_dir("vector_add"));
  EXPECT_EQ(v.cases_total,
            static_cast<std::int64_t>(enumerate_cases(p, options().cases).cases.size()));
  for (const auto& cf : v.cases)
    EXPECT_EQ(cf.reason, Reason::crash) << cf.case_id << cf.message;
  EXPECT_NE(v.message.find("CUDA_ERROR"), std::string::npos) << v.message;
}

// A kept worker (kjudge mutate's, for its own mutants) takes the next candidate's module in
// place of a new process, with verdicts unchanged; a worker that crashed is never kept.
TEST_F(Check, AKeptWorkerLoadsTheNextCandidateAndACrashedOneIsNotKept) {
  CheckOptions o = options();
  o.kept_worker = make_kept_worker();
  EXPECT_EQ(judge("softmax", problem_dir("softmax") / "solutions/basic.cu", o).outcome,
            Outcome::pass);
  EXPECT_EQ(kept_worker_reuses(*o.kept_worker), 0u);
  const Verdict second = judge("softmax", problem_dir("softmax") / "solutions/warp_shuffle.cu", o);
  EXPECT_EQ(second.outcome, Outcome::pass) << describe(second);
  const Verdict trap = judge("softmax", problem_dir("softmax") / "traps/zeros.cu", o);
  EXPECT_EQ(trap.outcome, Outcome::fail) << describe(trap);
  EXPECT_EQ(kept_worker_reuses(*o.kept_worker), 2u);
  // Every case crashes, each in a fresh worker after the first (the kept one): none is left.
  const Verdict crash = judge("vector_add", write_candidate("crash_kept.cu", kCrash), o);
  EXPECT_EQ(crash.reason, Reason::crash) << describe(crash);
  EXPECT_EQ(kept_worker_reuses(*o.kept_worker), 3u);
  const Verdict after = judge("vector_add", problem_dir("vector_add") / "solutions/basic.cu", o);
  EXPECT_EQ(after.outcome, Outcome::pass) << describe(after);
  EXPECT_EQ(kept_worker_reuses(*o.kept_worker), 3u);
}

TEST_F(Check, FailFastStopsAtTheFirstFailingCase) {
  CheckOptions o = options();
  o.fail_fast = true;
  const Verdict v = judge("vector_add", write_candidate("crash_ff.cu", kCrash), o);
  EXPECT_EQ(v.reason, Reason::crash);
  EXPECT_EQ(v.cases_total, 1);
}

// A failed device assert is FAIL(crash) with the driver's report of it, quoted: the condition,
// the candidate's file and line, the block and the thread (i = 1000 is block 3, thread 232;
// only that thread fails). The worker keeps the driver's stderr, where it prints the assertion.
TEST_F(Check, AFailedAssertIsACrashWithTheQuotedConditionAndItsPlace) {
  const fs::path c = write_candidate("assert.cu", kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i != 1000 && "i is never 1000");
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", c, fail_fast());
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  EXPECT_NE(v.message.find("device assertion failed (candidate's text: \"i != 1000 && \\\"i is "
                           "never 1000\\\"\" at assert.cu:11, block [3,0,0] thread [232,0,0])"),
            std::string::npos)
      << v.message;
  EXPECT_EQ(v.message.find('\n'), std::string::npos) << v.message;
}

// __assertfail called directly with a newline and a "PASS" line: the message stays one line.
TEST_F(Check, AnAssertionsTextCannotForgeALine) {
  const fs::path c = write_candidate("forge.cu", kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 5) __assertfail("x\nPASS  vector_add\n", "f.cu", 40, "f", 1);
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", c, fail_fast());
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  EXPECT_NE(v.message.find("device assertion failed (candidate's text: \"x\\x0aPASS  "
                           "vector_add\\x0a\" at f.cu:40, block [0,0,0] thread [5,0,0])"),
            std::string::npos)
      << v.message;
  EXPECT_EQ(v.message.find('\n'), std::string::npos) << v.message;
}

TEST_F(Check, TrapIsACrashThatSaysSo) {
  const fs::path c = write_candidate("trap.cu", kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 1000) __trap();
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", c, fail_fast());
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  EXPECT_NE(v.message.find("the kernel executed __trap() (CUDA_ERROR_LAUNCH_FAILED)"),
            std::string::npos)
      << v.message;
}

TEST_F(Check, AnEndlessKernelTimesOutAndIsKilled) {
  const fs::path c = write_candidate("spin.cu", kVectorAddPlan + R"cu(
// Volatile stores to global memory are side effects, so the compiler keeps the loop (a spin on
// a local volatile was compiled away).
__global__ void k(const float* x, const float* y, float* z, int N) {
  volatile float* out = z;
  for (;;) out[0] = x[0] + y[0];
}
)cu");
  const Problem p = load_problem(problem_dir("vector_add"));
  CheckOptions o = options();
  o.deadline_min_s = 0.2;
  o.only_case = enumerate_cases(p, o.cases).cases.front().id;
  const auto start = std::chrono::steady_clock::now();
  const Verdict v = check(p, load_candidate(c, p), o);
  EXPECT_EQ(v.reason, Reason::timeout) << describe(v);
  EXPECT_EQ(v.cases_total, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST_F(Check, AWrongPointerTypeIsALaunchErrorBeforeAnyCase) {
  const fs::path c = write_candidate("double.cu", kVectorAddPlan + R"cu(
__global__ void k(const double* x, const float* y, float* z, int N) {}
)cu");
  const Verdict v = judge("vector_add", c);
  EXPECT_EQ(v.reason, Reason::launch_error) << describe(v);
  EXPECT_TRUE(v.cases.empty());
  EXPECT_NE(v.message.find("argument 0 'x'"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("tensor 'x' is f32 (float)"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("double"), std::string::npos) << v.message;
}

TEST_F(Check, ABlockOverTheLimitOnAPerturbedShapeIsALaunchErrorThere) {
  // 1 + N % 2048 threads: within 1024 on the public and hidden shapes (N = 2^24 gives 1), 2048
  // on the perturbed N = 2^24 - 1, the first case that exceeds the device's limit.
  const fs::path c = write_candidate("block.cu", R"cu(/* kjudge
[[launch]]
kernel = "k"
grid = ["ceil_div(N, 1 + N % 2048)"]
block = ["1 + N % 2048"]
args = ["x", "y", "z", "N"]
*/
__global__ void k(const float* x, const float* y, float* z, int N) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", c);
  EXPECT_EQ(v.reason, Reason::launch_error) << describe(v);
  ASSERT_TRUE(v.first_failing_case);
  EXPECT_NE(v.first_failing_case->find("~N=16777215"), std::string::npos) << *v.first_failing_case;
  EXPECT_GT(v.cases_passed, 0);
}

TEST_F(Check, ASyntaxErrorIsACompileError) {
  const Verdict v = judge("vector_add", write_candidate("syntax.cu", kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) { this is not C++; }
)cu"));
  EXPECT_EQ(v.reason, Reason::compile_error) << describe(v);
  EXPECT_FALSE(v.compiled);
  EXPECT_TRUE(v.cases.empty());
}

// ---- options ----------------------------------------------------------------------------------

TEST_F(Check, AgainstAnOldKernelIsBitExact) {
  CheckOptions o = options();
  o.against = problem_dir("vector_add") / "solutions/basic.cu";
  Verdict v = judge("vector_add", problem_dir("vector_add") / "solutions/grid_stride.cu", o);
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  EXPECT_TRUE(v.replay_command.empty()); // nothing to replay on a pass
  const fs::path rounded_down = write_candidate("rd.cu", kVectorAddPlan + R"cu(
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = __fadd_rd(x[i], y[i]);
}
)cu");
  v = judge("vector_add", rounded_down, o);
  EXPECT_EQ(v.reason, Reason::mismatch) << describe(v);
  EXPECT_NE(v.replay_command.find("--against"), std::string::npos) << v.replay_command;
  // An old kernel that does not compile makes the check an ERROR, not the candidate's FAIL.
  o.against = write_candidate("old_broken.cu", kVectorAddPlan + "__global__ void k( {\n");
  v = judge("vector_add", problem_dir("vector_add") / "solutions/basic.cu", o);
  EXPECT_EQ(v.reason, Reason::spec_error) << describe(v);
}

TEST_F(Check, OneCaseById) {
  const Problem p = load_problem(problem_dir("vector_add"));
  CheckOptions o = options();
  const CasePlan plan = enumerate_cases(p, o.cases);
  o.only_case = plan.cases.back().id;
  std::vector<std::string> seen;
  o.on_case = [&](const CaseFinding& f) { seen.push_back(f.case_id); };
  const Verdict v =
      check(p, load_candidate(problem_dir("vector_add") / "solutions/basic.cu", p), o);
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  EXPECT_EQ(seen, std::vector<std::string>{plan.cases.back().id});
  o.only_case = "00000000:public0:0:id";
  const Verdict refused =
      check(p, load_candidate(problem_dir("vector_add") / "solutions/basic.cu", p), o);
  EXPECT_EQ(refused.reason, Reason::spec_error) << describe(refused);
}

TEST_F(Check, TheInProcessWorkerOfTheIsolationSwitchJudgesToo) {
  const Disabled off("isolation");
  const Verdict v = judge("vector_add", problem_dir("vector_add") / "solutions/basic.cu");
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  const Verdict oob = judge("vector_add", problem_dir("vector_add") / "traps/off_by_one.cu");
  EXPECT_EQ(oob.reason, Reason::oob_write) << describe(oob);
}

TEST_F(Check, UnknownTestSwitchesAreRefused) {
  const Disabled off("posion");
  const Verdict v = judge("vector_add", problem_dir("vector_add") / "solutions/basic.cu");
  EXPECT_EQ(v.reason, Reason::internal) << describe(v);
  EXPECT_NE(v.message.find("posion"), std::string::npos);
}

// ---- the command line ---------------------------------------------------------------------------

struct CliRun {
  int code = -1;
  std::string out;
};

// `kjudge ARGS...` with stdout captured (posix_spawn: this process may hold a CUDA context),
// with `extra_env` ("NAME=value") added to this process's environment and XDG_CACHE_HOME in
// the test's folder; stderr after stdout in
// `out` with `with_stderr`, else dropped.
CliRun kjudge(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {},
              bool with_stderr = false) {
  const fs::path out = temp_dir() / "stdout.txt";
  std::vector<std::string> argv{KJ_KJUDGE_EXE};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> raw;
  for (auto& a : argv)
    raw.push_back(a.data());
  raw.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (with_stderr)
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  else
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::vector<std::string> env_strings(extra_env);
  // The caches a command line does not name (the case cache's default) in this test's folder,
  // never in the user's home.
  env_strings.push_back("XDG_CACHE_HOME=" + (temp_dir() / "xdg-cache").string());
  for (char** e = environ; *e != nullptr; ++e)
    env_strings.emplace_back(*e); // after extra_env: getenv takes the first of a name
  std::vector<char*> envp;
  for (auto& e : env_strings)
    envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  CliRun r;
  if (posix_spawn(&pid, raw[0], &actions, nullptr, raw.data(), envp.data()) == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  std::ifstream f(out);
  r.out.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return r;
}

TEST_F(Check, CliJsonAndExitCodes) {
  const std::string dir = problem_dir("vector_add").string();
  const std::string cache = "--cache=" + (temp_dir() / "cache").string();
  CliRun r =
      kjudge({"check", dir, "--candidate", dir + "/solutions/basic.cu", "--json", "-", cache});
  EXPECT_EQ(r.code, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outcome"], "PASS");
  EXPECT_EQ(j["correctness"], true);
  EXPECT_EQ(j["manifest"]["backend"], "cuda");
  EXPECT_EQ(j["manifest"]["device"], 0);
  r = kjudge({"check", dir, "--candidate", dir + "/traps/off_by_one.cu", cache});
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL(oob_write)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kjudge check"), std::string::npos) << r.out; // the replay command
}

// The GPU comparator really judges: KJUDGE_TRACE counts one GPU comparison per case of a
// passing candidate (its runs agree), and none with the comparator off.
TEST_F(Check, APassingCandidatesCasesAreJudgedOnTheGpu) {
  const std::string dir = problem_dir("softmax").string();
  const std::string cache = "--cache=" + (temp_dir() / "cache").string();
  const fs::path json_file = temp_dir() / "traced.json";
  const CliRun r = kjudge({"check", dir, "--candidate", dir + "/solutions/block_reduce.cu",
                           "--json", json_file.string(), cache},
                          {"KJUDGE_TRACE=1"}, true);
  EXPECT_EQ(r.code, 0) << r.out;
  std::string gpu_line;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("kjudge-trace comparison (GPU): ", 0) == 0) gpu_line = line;
  const int cases = nlohmann::json::parse(std::ifstream(json_file))["cases_total"].get<int>();
  EXPECT_GT(cases, 10);
  EXPECT_NE(gpu_line.find(" ms in " + std::to_string(cases) + " ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("kjudge-trace outputs copied to the host"), std::string::npos) << r.out;
}

// ---- bench: the GPU timing loop ----------------------------------------------------------------

// A timing loop short enough for the test suite: the same rules, smaller minimums.
BenchOptions quick_bench(CheckOptions o = options()) {
  BenchOptions b;
  b.check = o;
  b.timing.warmup_s = 0.05;
  b.timing.min_time_s = 0.1;
  b.timing.max_time_s = 3;
  b.timing.noise = 0.02;
  return b;
}

// vector_add on one public shape of 2^20 elements and no other shape set, small enough for the
// traps' device-side stashes; `extra` goes at the top of problem.toml.
fs::path small_add_problem(const std::string& name, const std::string& extra = "") {
  const fs::path dir = temp_dir() / name;
  fs::create_directories(dir);
  fs::copy_file(problem_dir("vector_add") / "reference.cu", dir / "reference.cu",
                fs::copy_options::overwrite_existing);
  std::ofstream(dir / "problem.toml") << "name = \"" << name << "\"\n" << extra << R"toml(
summary = "elementwise sum of two vectors, one small public shape"
tier = "exact"
[dims]
public = [{ N = 1048576 }]
[[input]]
name = "x"
dtype = "f32"
shape = ["N"]
dist = "normal(0, 1)"
[[input]]
name = "y"
dtype = "f32"
shape = ["N"]
dist = "normal(0, 1)"
[[output]]
name = "z"
dtype = "f32"
shape = ["N"]
policy = "exact"
[reference]
source = "reference.cu"
[[reference.launch]]
kernel = "vector_add_ref<T>"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
)toml";
  return dir;
}

TEST_F(Check, BenchTimesAPassingCandidateOnTheGpuAgainstTheReference) {
  const Problem p = load_problem(problem_dir("vector_add"));
  const Candidate c = load_candidate(problem_dir("vector_add") / "solutions/basic.cu", p);
  const Verdict v = bench(p, c, quick_bench());
  ASSERT_EQ(v.outcome, Outcome::pass) << describe(v);
  EXPECT_EQ(v.timer, "cuda_events");
  ASSERT_TRUE(v.runtime_ms && v.ref_runtime_ms);
  int timed = 0;
  double medians = 0;
  for (const CaseFinding& f : v.cases) {
    if (!f.timing) continue;
    ++timed;
    const CaseTiming& t = *f.timing;
    EXPECT_GE(t.candidate_ms.size(), 10u) << f.case_id;
    EXPECT_EQ(t.candidate_ms.size(), t.reference_ms.size()) << f.case_id;
    EXPECT_EQ(t.rotation, 8) << f.case_id;
    EXPECT_GT(t.sm_clock_mhz, 100) << f.case_id;
    // 16M and 5M elements: x, y read and z written once, 12 bytes an element.
    EXPECT_GT(t.floor_bytes, 5e6 * 12 - 1) << f.case_id;
    EXPECT_GT(t.bandwidth_gbs, 500) << f.case_id;
    const double median = sample_stats(t.candidate_ms).median;
    EXPECT_GT(median, 0.9 * t.floor_ms) << f.case_id;
    medians += median;
  }
  EXPECT_EQ(timed, 2); // public0 and public1, once each
  EXPECT_DOUBLE_EQ(*v.runtime_ms, medians);
  ASSERT_TRUE(v.fraction_of_floor && v.speedup_low && v.speedup_high);
  EXPECT_GT(*v.fraction_of_floor, 0.05);
  EXPECT_LE(*v.fraction_of_floor, 1 / 0.9);
  EXPECT_LE(*v.speedup_low, *v.ref_runtime_ms / *v.runtime_ms);
  EXPECT_GE(*v.speedup_high, *v.ref_runtime_ms / *v.runtime_ms);
  ASSERT_EQ(v.resources.size(), 1u);
  EXPECT_GT(v.resources[0].registers, 0);
  EXPECT_EQ(v.resources[0].block_threads, 256);
  EXPECT_GT(v.resources[0].blocks_per_sm, 0);
  EXPECT_GT(v.resources[0].occupancy, 0);
  // public0's 65536 blocks fill whole waves but for a sliver of the last.
  EXPECT_LE(v.resources[0].grid_occupancy, v.resources[0].occupancy);
  EXPECT_GT(v.resources[0].grid_occupancy, 0.9 * v.resources[0].occupancy);
  ASSERT_TRUE(v.memory_bytes && v.ref_memory_bytes);
  EXPECT_EQ(*v.memory_bytes, *v.ref_memory_bytes); // no scratch
}

// matmul's cuBLAS baseline (SGEMM, f32 accumulation) timed on every visit beside the reference,
// and its FLOP floor: 2 M N K at the TF32 tensor cores' peak, measured by cuBLAS in this run.
TEST_F(Check, BenchTimesTheCublasBaselineAndTheFlopFloor) {
  const Problem p = load_problem(problem_dir("matmul"));
  ASSERT_TRUE(p.timed_baseline && p.timed_baseline->builtin == "cublas:gemm");
  const Candidate c = load_candidate(problem_dir("matmul") / "solutions/tiled.cu", p);
  const Verdict v = bench(p, c, quick_bench());
  ASSERT_EQ(v.outcome, Outcome::pass) << describe(v);
  ASSERT_TRUE(v.baseline_runtime_ms && v.runtime_ms) << describe(v);
  EXPECT_TRUE(v.baseline_timed);
  EXPECT_EQ(v.baseline, p.timed_baseline->name);
  double baselines = 0;
  for (const CaseFinding& f : v.cases) {
    if (!f.timing) continue;
    const CaseTiming& t = *f.timing;
    EXPECT_EQ(t.baseline_samples_ms.size(), t.candidate_ms.size()) << f.case_id;
    ASSERT_TRUE(t.baseline_ms) << f.case_id;
    EXPECT_DOUBLE_EQ(*t.baseline_ms, sample_stats(t.baseline_samples_ms).median);
    baselines += *t.baseline_ms;
    const double flops = f.case_id.find("public0") != std::string::npos
                             ? 2.0 * 1024 * 768 * 512
                             : 2.0 * 257 * 129 * 1000;
    EXPECT_DOUBLE_EQ(t.floor_flops, flops) << f.case_id;
    // An H200's TF32 tensor cores: about 495 TFLOP/s dense on paper; cuBLAS reaches most.
    EXPECT_GT(t.peak_tflops, 150) << t.peak_unit;
    EXPECT_LT(t.peak_tflops, 1000) << t.peak_unit;
    EXPECT_NE(t.peak_unit.find("tf32"), std::string::npos) << t.peak_unit;
    EXPECT_DOUBLE_EQ(t.floor_ms, std::max(t.floor_bytes_ms, t.floor_flops_ms));
  }
  EXPECT_DOUBLE_EQ(*v.baseline_runtime_ms, baselines);
}

// cublas:gemv on a matrix-vector product: y[M] = A[M, N] x[N], with a candidate that is the
// reference's one-thread-a-row loop.
TEST_F(Check, BenchTimesTheCublasGemvBaseline) {
  const fs::path dir = temp_dir() / "gemv";
  fs::create_directories(dir);
  const std::string kernel = R"cu(
template <class T>
__global__ void gemv(const T* A, const T* x, T* y, int M, int N) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M) return;
  kj::acc_t<T> sum = 0;
  for (int j = 0; j < N; ++j)
    sum += A[(long long)row * N + j] * x[j];
  y[row] = static_cast<T>(sum);
}
)cu";
  std::ofstream(dir / "reference.cu") << "#include \"kjudge/device.cuh\"\n" << kernel;
  std::ofstream(dir / "problem.toml") << R"toml(name = "gemv"
summary = "y[M] = A[M, N] x[N] in f32"
tier = "tolerance"
floor_flops = "2 * M * N"
[dims]
public = [{ M = 8192, N = 4096 }]
[[input]]
name = "A"
dtype = "f32"
shape = ["M", "N"]
[[input]]
name = "x"
dtype = "f32"
shape = ["N"]
[[output]]
name = "y"
dtype = "f32"
shape = ["M"]
[[baseline]]
name = "cuBLAS SGEMV"
builtin = "cublas:gemv"
args = { a = "A", x = "x", y = "y", m = "M", n = "N" }
[reference]
source = "reference.cu"
[[reference.launch]]
kernel = "gemv<T>"
grid = ["ceil_div(M, 128)"]
block = [128]
args = ["A", "x", "y", "M", "N"]
)toml";
  const fs::path c = write_candidate("gemv_rows.cu", R"cu(/* kjudge
[[launch]]
kernel = "gemv_rows"
grid = ["ceil_div(M, 128)"]
block = [128]
args = ["A", "x", "y", "M", "N"]
*/
__global__ void gemv_rows(const float* A, const float* x, float* y, int M, int N) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= M) return;
  float sum = 0;
  for (int j = 0; j < N; ++j)
    sum += A[(long long)row * N + j] * x[j];
  y[row] = sum;
}
)cu");
  const Problem p = load_problem(dir);
  const Verdict v = bench(p, load_candidate(c, p), quick_bench());
  ASSERT_EQ(v.outcome, Outcome::pass) << describe(v);
  ASSERT_TRUE(v.baseline_runtime_ms) << describe(v);
  EXPECT_TRUE(v.baseline_timed);
  EXPECT_EQ(v.baseline, "cuBLAS SGEMV");
  // 128 MiB of A read once: cuBLAS is bandwidth-bound, well under the one-thread-a-row loop.
  EXPECT_GT(*v.baseline_runtime_ms, 0.02);
  EXPECT_LT(*v.baseline_runtime_ms, *v.runtime_ms);
}

// A problem.toml's [[baseline]] launch plan, appended to small_add_problem's.
const std::string kBaselinePlan = R"toml(
[[baseline]]
name = "four per thread"
source = "baseline.cu"
[[baseline.launch]]
kernel = "add4"
grid = ["ceil_div(N, 1024)"]
block = [256]
args = ["x", "y", "z", "N"]
)toml";

// A baseline plan is timed on every visit like the reference; one whose output breaks the
// problem's policy is the problem's fault (spec_error), not a figure to compare against.
TEST_F(Check, BenchTimesABaselinePlanAndRefusesAWrongOne) {
  for (const bool wrong : {false, true}) {
    SCOPED_TRACE(wrong ? "wrong baseline" : "right baseline");
    const fs::path dir = small_add_problem(wrong ? "baseline_wrong" : "baseline_plan");
    std::ofstream(dir / "problem.toml", std::ios::app) << kBaselinePlan;
    std::ofstream(dir / "baseline.cu") << R"cu(
__global__ void add4(const float* x, const float* y, float* z, int N) {
  const int first = 4 * (blockIdx.x * blockDim.x + threadIdx.x);
  for (int i = first; i < first + 4 && i < N; ++i)
    z[i] = x[i] )cu" << (wrong ? "-" : "+")
                                       << R"cu( y[i];
}
)cu";
    const Problem p = load_problem(dir);
    const Candidate c = load_candidate(problem_dir("vector_add") / "solutions/basic.cu", p);
    const Verdict v = bench(p, c, quick_bench());
    if (wrong) {
      EXPECT_EQ(v.reason, Reason::spec_error) << describe(v);
      EXPECT_NE(v.message.find("the baseline 'four per thread' fails"), std::string::npos)
          << v.message;
      continue;
    }
    ASSERT_EQ(v.outcome, Outcome::pass) << describe(v);
    ASSERT_TRUE(v.baseline_runtime_ms) << describe(v);
    EXPECT_TRUE(v.baseline_timed);
    EXPECT_EQ(v.baseline, "four per thread");
    for (const CaseFinding& f : v.cases) {
      if (!f.timing) continue;
      EXPECT_EQ(f.timing->baseline_samples_ms.size(), f.timing->candidate_ms.size());
    }
  }
}

// A kernel that keeps each output pointer's answers and replays them when the pointer comes
// back: right while each set's inputs stay the same (regeneration off), stale_output once they
// are drawn afresh between visits. Its __device__ stash is what the static scan forbids, so the
// scan is off: this is the second line of defence.
TEST_F(Check, APointerKeyedCacheIsStaleOutputOnlyWhenInputsAreRegenerated) {
  const fs::path dir = small_add_problem("bench_cache");
  const fs::path c = write_candidate("pointer_cache.cu", kVectorAddPlan + R"cu(
constexpr int kSlots = 16;
constexpr int kMax = 1 << 20;
__device__ float stash[kSlots][kMax];
__device__ unsigned tags[kSlots][kMax];
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const unsigned long long key = reinterpret_cast<unsigned long long>(z);
  const unsigned tag = static_cast<unsigned>(key >> 8) | 1u;
  const int slot = static_cast<int>(((key >> 16) * 0x9E3779B97F4A7C15ull) >> 60);
  if (N > kMax) {
    z[i] = x[i] + y[i];
  } else if (tags[slot][i] == tag) {
    z[i] = stash[slot][i]; // seen this pointer: replay
  } else {
    z[i] = x[i] + y[i];
    stash[slot][i] = z[i];
    tags[slot][i] = tag;
  }
}
)cu");
  const Problem p = load_problem(dir);
  const Candidate cand = load_candidate(c, p);
  // One case: the special-value cases put other inputs behind the same pointers, and the check
  // alone would catch the replay there.
  CheckOptions o = options();
  o.cases.special_values = false;
  {
    const Disabled off("static_scan,regenerate");
    const Verdict v = bench(p, cand, quick_bench(o));
    EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  }
  const Disabled off("static_scan");
  const Verdict v = bench(p, cand, quick_bench(o));
  EXPECT_EQ(v.reason, Reason::stale_output) << describe(v);
  EXPECT_NE(v.message.find("where the check's runs passed"), std::string::npos) << v.message;
}

// A kernel wrong on one run only, its fortieth (each element counts its own launches): past the
// check's runs, long before the bench's last. Only a bench that judges every timed output sees
// it; one that checks the last output only would pass it.
TEST_F(Check, OneWrongTimedRunAmongManyIsStaleOutput) {
  const fs::path dir = small_add_problem("bench_once");
  const fs::path c = write_candidate("wrong_once.cu", kVectorAddPlan + R"cu(
__device__ unsigned launches_seen[1 << 20];
__global__ void k(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const unsigned seen = i < (1 << 20) ? launches_seen[i]++ : 0u;
  z[i] = x[i] + y[i] + (seen == 40u ? 1.0f : 0.0f);
}
)cu");
  const Problem p = load_problem(dir);
  const Candidate cand = load_candidate(c, p);
  const Disabled off("static_scan");
  CheckOptions o = options();
  o.cases.special_values = false; // keeps the check's runs well under forty
  const Verdict v = bench(p, cand, quick_bench(o));
  EXPECT_EQ(v.reason, Reason::stale_output) << describe(v);
  EXPECT_EQ(v.cases_passed, v.cases_total - 1) << describe(v);
}

// A floor the problem declares far above what the kernel moves: a median under 0.9 of it is
// impossible_speed (the check itself passes).
TEST_F(Check, AMedianUnderTheFloorIsImpossibleSpeed) {
  const fs::path dir = small_add_problem("bench_floor", "floor_bytes = \"N * 4000\"");
  const Problem p = load_problem(dir);
  const Verdict v =
      bench(p, load_candidate(problem_dir("vector_add") / "solutions/basic.cu", p), quick_bench());
  EXPECT_EQ(v.reason, Reason::impossible_speed) << describe(v);
  EXPECT_NE(v.message.find("physical floor"), std::string::npos) << v.message;
}

TEST_F(Check, CliBenchPrintsTheTableAndTheJson) {
  const std::string dir = problem_dir("vector_add").string();
  const std::string cache = "--cache=" + (temp_dir() / "cache").string();
  const fs::path json_file = temp_dir() / "bench.json";
  const CliRun r = kjudge({"bench", dir, "--candidate", dir + "/solutions/basic.cu", "--json",
                           json_file.string(), "--min-time", "0.1", cache});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("timed case"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of the physical floor"), std::string::npos) << r.out;
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(json_file));
  EXPECT_EQ(j["timer"], "cuda_events");
  EXPECT_GT(j["runtime"].get<double>(), 0);
  EXPECT_GT(j["ref_runtime"].get<double>(), 0);
  EXPECT_EQ(j["speedup_ci"].size(), 2u);
  EXPECT_GT(j["fraction_of_floor"].get<double>(), 0);
  EXPECT_EQ(j["resources"].size(), 1u);
  EXPECT_TRUE(j["baseline_runtime"].is_null());
}

// ---- without a GPU ------------------------------------------------------------------------------

// With every device hidden (CUDA_VISIBLE_DEVICES empty) the CLI asked for the CUDA backend must
// end in SKIP and exit 3, never PASS; this runs on GPU machines too, so it is never skipped
// itself. (`--backend auto` would judge on the host backend there.)
TEST(CheckWithoutGpu, IsASkipThatNeverPasses) {
  const std::string dir = problem_dir("vector_add").string();
  const CliRun r =
      kjudge({"check", dir, "--candidate", dir + "/solutions/basic.cu", "--backend", "cuda"},
             {"CUDA_VISIBLE_DEVICES="});
  EXPECT_EQ(r.code, 3) << r.out;
  EXPECT_NE(r.out.find("SKIP(no usable GPU"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("PASS"), std::string::npos) << r.out;
}

// The library's side of the same: check() returns a SKIP verdict with its reason. Only a
// process that never saw a device can show it, so on a GPU machine the CLI test above stands
// in for it and this one checks the opposite: a usable GPU judges the cases.
TEST(CheckWithoutGpu, TheLibraryVerdictIsASkipWithItsReason) {
  std::string why;
  if (cuda_available(&why)) {
    CheckOptions o = fail_fast();
    o.only_case = enumerate_cases(load_problem(problem_dir("vector_add")), o.cases).cases[0].id;
    const Verdict v = judge("vector_add", problem_dir("vector_add") / "solutions/basic.cu", o);
    EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
    EXPECT_EQ(v.cases.size(), 1u);
    return;
  }
  CheckOptions cuda_only = options();
  cuda_only.backend = Backend::cuda;
  const Verdict v = judge("vector_add", problem_dir("vector_add") / "solutions/basic.cu", cuda_only);
  EXPECT_EQ(v.outcome, Outcome::skip);
  ASSERT_EQ(v.skips.size(), 1u);
  EXPECT_EQ(v.skips[0].rfind("SKIP(no usable GPU: ", 0), 0u) << v.skips[0];
  EXPECT_TRUE(v.cases.empty());
}

} // namespace
} // namespace kj
