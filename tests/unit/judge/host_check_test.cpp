// kj::check on the host backend (no GPU needed, so it runs in CI): a correct kernel passes with
// trust "host" and its case budget stated; a missing barrier is `nondeterministic` with the
// racing line; a construct the CPU cannot run is a SKIP naming it; a read past every buffer
// crashes on the arena's guard; host shapes replace the public and hidden ones. The
// whole suite's expectations on this backend are data, run by tools/expect (ctest's
// Expectations.HostBackend).
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kj;

fs::path problems() {
  return fs::path(KJ_SOURCE_DIR) / "problems";
}

CheckOptions host_options() {
  CheckOptions o;
  o.backend = Backend::host;
  o.self_exe = KJ_KJUDGE_EXE;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cache_dir = fs::temp_directory_path() / "kjudge_host_check_test_cache";
  return o;
}

Verdict judge(const std::string& problem, const fs::path& candidate, const CheckOptions& o) {
  const Problem p = load_problem(problems() / problem);
  const Candidate c = load_candidate(candidate, p);
  return check(p, c, o);
}

std::string describe(const Verdict& v) {
  std::string s = std::string(outcome_name(v.outcome)) + "(" +
                  std::string(reason_name(v.reason)) + "): " + v.message;
  for (const auto& k : v.skips)
    s += "\n" + k;
  return s;
}

// A candidate written to a temporary file (vector_add's plan).
fs::path write_candidate(const std::string& name, const std::string& body) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << R"cu(/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
)cu" << body;
  return path;
}

TEST(HostCheck, ACorrectKernelPassesWithTrustHostAndItsBudgetStated) {
  const Verdict v = judge("vector_add", problems() / "vector_add/solutions/basic.cu", host_options());
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  EXPECT_EQ(v.manifest.backend, "host");
  EXPECT_EQ(v.manifest.trust, "host");
  EXPECT_NE(v.manifest.case_budget.find("host shapes"), std::string::npos) << v.manifest.case_budget;
  EXPECT_NE(v.manifest.case_budget.find("races screened"), std::string::npos)
      << v.manifest.case_budget;
  ASSERT_FALSE(v.cases.empty());
  // The host shapes (N = 20011, 4096 and their perturbations), never the public 2^24 ones.
  for (const auto& c : v.cases)
    EXPECT_EQ(c.case_id.find("16777216"), std::string::npos) << c.case_id;
  // The race-screened cases (the smallest unperturbed ones) run first, then the perturbed
  // shape sets.
  for (std::size_t k = 0; k < 3; ++k)
    EXPECT_NE(v.cases[k].case_class, "perturbed") << v.cases[k].case_id;
  EXPECT_EQ(v.cases[3].case_class, "perturbed");
}

TEST(HostCheck, AMissingBarrierIsNondeterministicWithTheRacingLine) {
  CheckOptions o = host_options();
  o.fail_fast = true;
  const Verdict v =
      judge("reduce_sum", problems() / "reduce_sum/traps/missing_syncthreads.cu", o);
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::nondeterministic) << describe(v);
  EXPECT_NE(v.message.find("data race"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("missing_syncthreads.cu:"), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("block ("), std::string::npos) << v.message;
}

TEST(HostCheck, WithoutRaceDetectionTheSameTrapIsNotCalledARace) {
  CheckOptions o = host_options();
  o.fail_fast = true;
  o.race_detection = false;
  const Verdict v =
      judge("reduce_sum", problems() / "reduce_sum/traps/missing_syncthreads.cu", o);
  EXPECT_EQ(v.message.find("data race"), std::string::npos) << describe(v);
  bool said = false;
  for (const auto& s : v.skips)
    said = said || s.find("race detection") != std::string::npos;
  EXPECT_TRUE(said) << describe(v);
}

TEST(HostCheck, AConstructTheCpuCannotRunIsASkipNamingIt) {
  const fs::path cand = write_candidate("kjudge_host_asm.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("membar.gl;");
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", cand, host_options());
  EXPECT_EQ(v.outcome, Outcome::skip) << describe(v);
  ASSERT_EQ(v.skips.size(), 1u) << describe(v);
  EXPECT_NE(v.skips[0].find("unsupported on host backend: inline PTX (asm) at kjudge_host_asm.cu:11"),
            std::string::npos)
      << v.skips[0];
  EXPECT_TRUE(v.cases.empty());
}

// 800 KB past x: beyond the arena that holds x, y and z with their red zones (under 700 KB for
// the host shapes), inside the guard behind it.
TEST(HostCheck, AReadPastTheArenaCrashesOnTheGuard) {
  const fs::path cand = write_candidate("kjudge_host_wild.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i] + x[i + 200000];
}
)cu");
  CheckOptions o = host_options();
  o.fail_fast = true;
  o.race_detection = false;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
}

// A read one element past x, multiplied by zero: the uninstrumented build cannot see it (the
// red zone's bytes make a finite float, the outputs are right); the checked build names the
// buffer, the distance, the line and the thread.
TEST(HostCheck, ExactBoundsNamesTheBufferLineAndThreadOfAReadPastAnInput) {
  const fs::path cand = write_candidate("kjudge_host_past_x.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i] + 0.0f * x[i + 1];
}
)cu");
  CheckOptions o = host_options();
  o.fail_fast = true;
  o.race_detection = false;
  const Verdict unchecked = judge("vector_add", cand, o);
  EXPECT_NE(unchecked.reason, Reason::crash) << describe(unchecked);

  o.exact_bounds = true;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  EXPECT_NE(v.message.find("out-of-bounds read of 4 bytes, 0 bytes past the end of input 'x'"),
            std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("at kjudge_host_past_x.cu:11 by block ("), std::string::npos)
      << v.message;
  EXPECT_NE(v.manifest.case_budget.find("every run checked"), std::string::npos)
      << v.manifest.case_budget;
}

// A kernel that tries to create a file never becomes host code: NVRTC (which compiles every
// candidate first) refuses host functions in JIT mode, so no file appears. (What a kernel could
// still do natively meets the worker's seccomp filter: tests/unit/host/sandbox_test.cpp.)
TEST(HostCheck, HostCallsInACandidateNeverReachTheHostCompiler) {
  const fs::path probe = fs::temp_directory_path() / "kjudge_host_confined_probe";
  fs::remove(probe);
  const fs::path cand = write_candidate("kjudge_host_open.cu", R"cu(
extern "C" int open(const char*, int, ...);
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) open(")cu" + probe.string() + R"cu(", 0101, 0600);
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  CheckOptions o = host_options();
  o.fail_fast = true;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::compile_error) << describe(v);
  EXPECT_FALSE(fs::exists(probe));
}

} // namespace
