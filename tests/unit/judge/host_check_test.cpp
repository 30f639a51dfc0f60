// kj::check on the host backend (no GPU needed, so it runs in CI): a correct kernel passes with
// trust "host" and its case budget stated; a missing barrier is `nondeterministic` with the
// racing line, and the fenced "last block done" passes while without its fence its store and
// load race; a construct the CPU cannot run is a SKIP naming it; a read past every buffer
// crashes on the arena's guard, and --exact-bounds names a read one element past an input;
// host shapes replace the public and hidden ones; a write to a __device__ variable is a
// forbidden construct (the static scan) unless its test switch is off; a failed assert and a
// trap are crashes, the assertion's text quoted so that it forges no line or JSON field of the
// reports. `kjudge bench` times public cases in CPU time, says so, and fails a kernel whose
// timed outputs go stale.
// KJUDGE_TRACE=1 writes where a check's time went. The whole suite's expectations on this
// backend are data, run by tools/expect (ctest's Expectations.HostBackend).
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <map>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kjudge/host_backend.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/test_switches.hpp"
#include "kjudge/nvrtc.hpp"
#include "kjudge/report.hpp"
#include "kjudge/spec.hpp"
#include "kjudge/validate.hpp"

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

// A candidate written to a temporary file (vector_add's plan, and `more_plan` after it).
fs::path write_candidate(const std::string& name, const std::string& body,
                         const std::string& more_plan = "") {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << R"cu(/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
)cu" << more_plan << "*/\n" << body;
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

TEST(HostCheck, KjudgeTraceWritesWhereTheTimeWent) {
  // In a child (the switch is read once a process): a check that stops at its first case.
  const std::string command =
      "KJUDGE_TRACE=1 XDG_CACHE_HOME=" + (fs::temp_directory_path() / "kjudge_host_check_test_cache").string() +
      " " + KJ_KJUDGE_EXE + " check " + (problems() / "reduce_sum").string() + " --candidate " +
      (problems() / "reduce_sum/traps/missing_syncthreads.cu").string() +
      " --backend host --fail-fast --case-cache-dir off 2>&1 >/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string err;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe) != nullptr)
    err += buf.data();
  const int status = pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 1) << err; // FAIL(nondeterministic)
  for (const char* phase : {"kjudge-trace check (all of it): ", "kjudge-trace candidate start",
                            "kjudge-trace oracle case", "kjudge-trace candidate run",
                            "kjudge-trace comparison"})
    EXPECT_NE(err.find(phase), std::string::npos) << phase << " in:\n" << err;
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

// problems/reduce_all's one-launch sum: the race screen orders each block's fenced partial
// before the last block's reads. Without the fence (and the PTX check that would name it first
// off) the last block's read and block 0's store race, at their lines.
TEST(HostCheck, TheFencedLastBlockDonePassesAndWithoutItsFenceIsARaceAtItsLines) {
  const Verdict fenced =
      judge("reduce_all", problems() / "reduce_all/solutions/last_block.cu", host_options());
  EXPECT_EQ(fenced.outcome, Outcome::pass) << describe(fenced);
  CheckOptions o = host_options();
  o.fail_fast = true;
  ::setenv("KJ_TEST_DISABLE", "static_scan", 1);
  allow_test_switches(true);
  const Verdict unfenced = judge("reduce_all", problems() / "reduce_all/traps/missing_fence.cu", o);
  ::unsetenv("KJ_TEST_DISABLE");
  allow_test_switches(false);
  EXPECT_EQ(unfenced.reason, Reason::nondeterministic) << describe(unfenced);
  EXPECT_NE(unfenced.message.find("data race on 4 bytes of scratch 'partial' (byte 0): a read at "
                                  "missing_fence.cu:42 by block (63,0,0) thread (0,0,0), and an "
                                  "earlier write at missing_fence.cu:35 by block (0,0,0) thread "
                                  "(0,0,0)"),
            std::string::npos)
      << unfenced.message;
}

// A candidate past the size limit is its own FAIL before anything runs (the attack: 120 MB of
// comment made a message too large for the worker's protocol, the judge's ERROR(internal)).
TEST(HostCheck, ACandidateOverTheSizeLimitIsItsFail) {
  const fs::path cand = write_candidate("kjudge_host_huge.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
}
// )cu" + std::string(kMaxCandidateBytes, 'x') + "\n");
  const Verdict v = judge("vector_add", cand, host_options());
  fs::remove(cand);
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::compile_error) << describe(v);
  EXPECT_EQ(v.message.find("the candidate's source is "), 0u) << v.message;
  EXPECT_NE(v.message.find(fmt::format("bytes, over the {} a candidate may have",
                                       kMaxCandidateBytes)),
            std::string::npos)
      << v.message;
}

// A FAIL, never a SKIP: a SKIP carries no penalty, so a dead asm line would otherwise turn any
// wrong kernel's FAIL into one.
TEST(HostCheck, AConstructTheCpuCannotRunIsAFailNamingIt) {
  const fs::path cand = write_candidate("kjudge_host_asm.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  asm volatile("membar.gl;");
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", cand, host_options());
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::forbidden_construct) << describe(v);
  EXPECT_TRUE(v.skips.empty()) << describe(v);
  EXPECT_EQ(v.message, "unsupported on host backend: inline PTX (asm) at kjudge_host_asm.cu:11 "
                       "(the host backend cannot judge it; a GPU can: --backend cuda)");
  EXPECT_TRUE(v.cases.empty());
}

// What NVRTC accepts and the host compiler refuses is the emulation's gap: a FAIL whose message
// is the host compiler's own error, named at the candidate's file and line, not the first lines
// of its log.
TEST(HostCheck, WhatOnlyTheHostCompilerRefusesIsAFailWithItsErrorAtTheCandidatesLine) {
  const fs::path cand = write_candidate("kjudge_host_gap.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned b = __byte_perm(0u, 0u, 0u);
  if (i < N) z[i] = x[i] + y[i] + static_cast<float>(b);
}
)cu");
  const Verdict v = judge("vector_add", cand, host_options());
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::forbidden_construct) << describe(v);
  EXPECT_NE(v.message.find("unsupported on host backend: the host compiler refuses what NVRTC "
                           "accepts: kjudge_host_gap.cu:11:22: error: "),
            std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("error: '__byte_perm' was not declared in this scope"),
            std::string::npos)
      << v.message;
}

// One source, two programs: each trap below passed on the host while its GPU code writes zeros
// (an overload only g++ saw, a macro only g++ defined, a feature probe or a function name each
// compiler answers its own way). With the host compiling the program NVRTC compiled, each is the
// GPU's FAIL; with the `one_program` test switch off, each passes again.
TEST(HostCheck, TheHostCompilesTheProgramNvrtcCompiled) {
  const std::pair<const char*, Reason> traps[] = {
      {"host_overload_std", Reason::mismatch},
      {"host_overload_libm", Reason::mismatch},
      {"host_overload_time", Reason::mismatch},
      {"counter_probe", Reason::mismatch},
      {"preprocessor_probe", Reason::forbidden_construct},
      {"pretty_function", Reason::forbidden_construct},
      {"pasted_probe", Reason::forbidden_construct},
      {"text_probe", Reason::forbidden_construct}};
  // The plain build and one seed of the plain cases: each trap writes zeros everywhere or not
  // at all, and no race is at stake.
  CheckOptions o = host_options();
  o.race_detection = false;
  o.cases.seeds = 1;
  o.cases.transforms = false;
  o.cases.special_values = false;
  for (const auto& [trap, reason] : traps) {
    SCOPED_TRACE(trap);
    const fs::path cand = problems() / "vector_add" / "traps" / (std::string(trap) + ".cu");
    const Verdict v = judge("vector_add", cand, o);
    EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
    EXPECT_EQ(v.reason, reason) << describe(v);
    ::setenv("KJ_TEST_DISABLE", "one_program", 1);
    allow_test_switches(true);
    const Verdict without = judge("vector_add", cand, o);
    ::unsetenv("KJ_TEST_DISABLE");
    allow_test_switches(false);
    EXPECT_EQ(without.outcome, Outcome::pass) << describe(without);
  }
}

// A right answer that also counts its calls in a __device__ variable: state kept between
// launches, found in the PTX before anything runs; with the scan's test switch off it passes.
TEST(HostCheck, AWriteToADeviceVariableIsForbiddenAndPassesWithoutTheScan) {
  const fs::path cand = write_candidate("kjudge_host_counter.cu", R"cu(
__device__ unsigned calls;
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) atomicAdd(&calls, 1u);
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", cand, host_options());
  EXPECT_EQ(v.reason, Reason::forbidden_construct) << describe(v);
  EXPECT_NE(v.message.find("makes an atomic on the __device__ variable calls"), std::string::npos)
      << v.message;
  EXPECT_NE(v.message.find("at line 12 in vector_add("), std::string::npos) << v.message;
  EXPECT_TRUE(v.compiled);
  EXPECT_TRUE(v.cases.empty());
  ::setenv("KJ_TEST_DISABLE", "static_scan", 1);
  allow_test_switches(true);
  const Verdict without = judge("vector_add", cand, host_options());
  ::unsetenv("KJ_TEST_DISABLE");
  allow_test_switches(false);
  EXPECT_EQ(without.outcome, Outcome::pass) << describe(without);
  EXPECT_EQ(without.defences_disabled, std::vector<std::string>{"static_scan"});
}

// A file name reaches generated code (NVRTC's program name and the PTX's .file, the host
// build's #line) as code_name: a quote once made a correct kernel FAIL(compile_error).
TEST(HostCheck, AQuoteOrANewlineInTheFileNameChangesNothing) {
  const std::string body = R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
}
)cu";
  for (const char* name : {"kjudge_quo\"te.cu", "kjudge_new\nline.cu", "kjudge_back\\slash.cu"}) {
    const Verdict v = judge("vector_add", write_candidate(name, body), host_options());
    EXPECT_EQ(v.outcome, Outcome::pass) << name << ": " << describe(v);
  }
  EXPECT_EQ(code_name("quo\"te\n\\.cu"), "quo_te__.cu");
}

// Every plan limit walked to its overflow is the candidate's FAIL, never ERROR: a scratch of
// 2^40 floats once gave ERROR(internal) ("cannot size the host arena"), so a sample became
// reward-ineligible instead of penalised.
TEST(HostCheck, EveryPlanLimitOverflowedIsTheCandidatesFail) {
  const std::string body = R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
}
__global__ void spare(float* t) {}
)cu";
  auto plan = [](const std::string& launch, const std::string& more = "") {
    return "[[launch]]\nkernel = \"spare\"\n" + launch + "\n" + more;
  };
  const struct {
    const char* what;
    std::string more_plan;
  } limits[] = {
      {"scratch of 2^40 f32",
       plan("grid = [1]\nblock = [1]\nargs = [\"t\"]",
            "[[scratch]]\nname = \"t\"\ndtype = \"f32\"\nshape = [1099511627776]\n")},
      {"scratch of 2^60 f64",
       plan("grid = [1]\nblock = [1]\nargs = [\"t\"]",
            "[[scratch]]\nname = \"t\"\ndtype = \"f64\"\nshape = [1152921504606846976]\n")},
      {"dynamic shared memory of 2^31 bytes",
       plan("grid = [1]\nblock = [1]\nshared = 2147483648\nargs = [\"z\"]")},
      {"a grid of 2^40 blocks", plan("grid = [1099511627776]\nblock = [1]\nargs = [\"z\"]")},
      {"a block of 2048 threads", plan("grid = [1]\nblock = [2048]\nargs = [\"z\"]")},
      {"a negative grid", plan("grid = [\"0 - N\"]\nblock = [1]\nargs = [\"z\"]")},
      {"a repeat of 2^40", plan("grid = [1]\nblock = [1]\nrepeat = 1099511627776\nargs = [\"z\"]")},
  };
  const Problem p = load_problem(problems() / "vector_add");
  for (const auto& l : limits) {
    const fs::path file = write_candidate("kjudge_limit.cu", body, l.more_plan);
    // Caught as the plan loads (what `check` and `serve` then report) or as it runs.
    Verdict v;
    try {
      v = check(p, load_candidate(file, p), host_options());
    } catch (const SpecError& e) {
      v = unloadable_candidate_verdict(p, file.string(), e.what());
    }
    EXPECT_EQ(v.outcome, Outcome::fail) << l.what << ": " << describe(v);
    EXPECT_EQ(v.reason, Reason::launch_error) << l.what << ": " << describe(v);
  }
}

// The host build sees the program NVRTC saw: a branch behind any macro that tells the host from
// NVRTC (the host compiler's, the emulation's, a host header's) is taken as NVRTC takes it. Each
// kernel here is right, with a wrong store only the host would have compiled.
TEST(HostCheck, NoMacroHidesCodeFromNvrtcOnTheHost) {
  for (const char* hiding :
       {"#ifndef __CUDACC_RTC__", "#ifdef __GNUC__", "#ifdef __x86_64__", "#ifdef __linux__",
        "#ifdef __unix__", "#if !defined(__CUDA_ARCH__)", "#ifdef KJ_HOST_BACKEND",
        "#ifdef _GLIBCXX_RELEASE", "#ifdef __GLIBC__", "#if __cplusplus > 201703L",
        "#ifdef __STDC_UTF_16__", "#ifdef __OPTIMIZE__", "#ifndef __CUDACC__",
        "#if defined(__clang__) || defined(__GNUG__)"}) {
    const std::string body = std::string(R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
)cu") + hiding + "\n  if (i == 0) z[0] = 12345.0f;\n#endif\n}\n";
    const Verdict v = judge("vector_add", write_candidate("kjudge_hiding.cu", body), host_options());
    EXPECT_EQ(v.outcome, Outcome::pass) << hiding << ": " << describe(v);
  }
}

// The preprocessing's macros are NVRTC's, name for name and value for value, over every macro
// the host compiler predefines and those NVRTC documents.
TEST(HostCheck, TheHostBuildsPreprocessingHasNvrtcsMacrosExactly) {
  HostCompileOptions host;
  host.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  host.cuda_include = "/usr/local/cuda/include";
  host.cache_dir = fs::temp_directory_path() / "kjudge_host_check_test_cache";
  const std::vector<std::string> names = predefined_macro_names(host);
  ASSERT_GT(names.size(), 200u);
  CompileOptions nvrtc;
  nvrtc.kjudge_include = host.kjudge_include;
  nvrtc.cache_dir = host.cache_dir;
  host.device_macros = nvrtc_predefined_macros(names, nvrtc);
  std::map<std::string, std::string> expected(host.device_macros.begin(), host.device_macros.end());
  EXPECT_EQ(expected.at("__CUDA_ARCH__"), "900");
  EXPECT_EQ(expected.at("__CUDACC_RTC__"), "1");
  EXPECT_EQ(expected.at("__cplusplus"), "201703L");
  for (const char* absent : {"__GNUC__", "__x86_64__", "__linux__", "KJ_HOST_BACKEND"})
    EXPECT_FALSE(expected.contains(absent)) << absent;
  // Every name through the host build's preprocessing: defined or not, and what it expands to.
  std::string probe;
  for (std::size_t i = 0; i < names.size(); ++i)
    probe += "#ifdef " + names[i] + "\nkj_defined_" + std::to_string(i) + " = KJ_STR(" + names[i] +
             ")\n#endif\n";
  const std::string seen = preprocess_as_nvrtc(
      "#define KJ_STR2(...) #__VA_ARGS__\n#define KJ_STR(...) KJ_STR2(__VA_ARGS__)\n" + probe,
      "probe.cu", host);
  std::map<std::string, std::string> got;
  std::istringstream lines(seen);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find("kj_defined_");
    if (at == std::string::npos) continue;
    const std::size_t eq = line.find(" = ", at);
    const std::string name = names.at(std::stoul(line.substr(at + 11, eq - at - 11)));
    std::string value = line.substr(eq + 3);
    got[name] = value.size() >= 2 ? value.substr(1, value.size() - 2) : value; // unquoted
  }
  EXPECT_EQ(got, expected);
  // A directive that only a macro's expansion made would be obeyed by the host build: refused.
  try {
    (void)preprocess_as_nvrtc("#define H #\nH include \"/etc/hostname\"\n", "made.cu", host);
    ADD_FAILURE() << "accepted";
  } catch (const UnsupportedOnHost& e) {
    EXPECT_STREQ(e.what(),
                 "unsupported on host backend: a directive made by macro expansion at made.cu:2");
  }
}

// A slow candidate costs a bounded time: once its run time passes the budget, the cases not run
// fail as timeouts and are named (the attack: a correct serial kernel held a GPU for minutes).
TEST(HostCheck, TheTimeBudgetEndsASlowCandidatesCheck) {
  const fs::path cand = write_candidate("kjudge_serial.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  for (int i = 0; i < N; ++i) z[i] = x[i] + y[i];
}
)cu");
  CheckOptions o = host_options();
  o.race_detection = false;
  o.time_budget_s = 1e-6;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.reason, Reason::timeout) << describe(v);
  ASSERT_EQ(v.cases.size(), static_cast<std::size_t>(v.cases_total));
  EXPECT_TRUE(v.cases.front().pass()) << v.cases.front().message;
  EXPECT_EQ(v.cases.back().message.rfind("not run: the check's time budget of 1e-06 s of the "
                                         "candidate's run time ran out (", 0),
            0u)
      << v.cases.back().message;
  EXPECT_EQ(v.cases_passed, 1);
  ASSERT_FALSE(v.skips.empty());
  EXPECT_EQ(v.skips.back().rfind(fmt::format("SKIP(timeout) {} cases not run: ", v.cases_total - 1), 0), 0u)
      << v.skips.back();
  o.time_budget_s = 0; // no budget: the same kernel passes
  EXPECT_EQ(judge("vector_add", cand, o).outcome, Outcome::pass);
}

// Hidden shapes drawn from ranges with a secret: not judged without one (and said so), judged
// with one, and named in no redacted report, whether console, JSON or JUnit.
TEST(HostCheck, HiddenShapesDrawnFromTheSecretAreJudgedAndRedacted) {
  Problem p = load_problem(problems() / "vector_add");
  p.dims.host_sets.clear();
  p.dims.public_sets = {DimSet{{{"N", 1000}}, {}}};
  p.dims.hidden_sets.clear();
  p.dims.vary.clear();
  p.dims.hidden_ranges = {DimRange{{{"N", {60000, 90000}}}, {}}};
  // Right below N = 50000 only: the public set passes, every drawn one fails.
  const Candidate c = load_candidate(write_candidate("kjudge_small_only.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = i < 50000 ? x[i] + y[i] : 0.0f;
}
)cu"), p);
  CheckOptions o = host_options();
  o.cases.seeds = 1;
  o.cases.transforms = false;
  o.cases.special_values = false;
  const Verdict without = check(p, c, o);
  EXPECT_EQ(without.outcome, Outcome::pass) << describe(without);
  EXPECT_NE(std::find(without.skips.begin(), without.skips.end(),
                      "SKIP(no secret: give --secret-file or KJUDGE_SECRET) 2 hidden shape sets "
                      "drawn from dims.hidden_ranges"),
            without.skips.end())
      << describe(without);

  const std::string secret = "0123456789abcdef";
  o.cases.secret = secret;
  const Verdict v = check(p, c, o);
  EXPECT_EQ(v.reason, Reason::mismatch) << describe(v);
  ASSERT_EQ(v.cases.size(), 3u);
  const DrawnSets drawn = draw_hidden_sets(p, secret);
  ASSERT_EQ(drawn.sets.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(v.cases[k + 1].case_id, fmt::format("{}:{}:0:id", p.short_hash(), drawn.sets[k].id));
    EXPECT_TRUE(v.cases[k + 1].hidden);
    EXPECT_EQ(v.cases[k + 1].reason, Reason::mismatch);
  }
  auto reports = [&](bool redact) {
    ReportOptions r;
    r.redact_hidden = redact;
    std::ostringstream all;
    make_console_reporter(all, r)->report(v);
    make_json_reporter(all, r)->report(v);
    auto junit = make_junit_reporter(all, r);
    junit->report(v);
    junit->finish();
    return all.str();
  };
  const std::string open = reports(false), redacted = reports(true);
  for (const std::string& text : {std::string("drawn0."), secret_tag(secret)}) {
    EXPECT_NE(open.find(text), std::string::npos) << text;
    EXPECT_EQ(redacted.find(text), std::string::npos) << text << "\n" << redacted;
  }
  for (const ShapeSet& s : drawn.sets)
    EXPECT_EQ(redacted.find(std::to_string(s.dims.at("N"))), std::string::npos)
        << s.dims.at("N") << "\n" << redacted;
}

// A run that times out once is the verdict: the cases after it are not given a deadline each.
TEST(HostCheck, AfterATimeoutTheLaterCasesAreNotRun) {
  const fs::path cand = write_candidate("kjudge_spin.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  volatile int spin = 1;
  while (spin) {
  }
}
)cu");
  CheckOptions o = host_options();
  o.race_detection = false;
  o.deadline_min_s = 0.5;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.reason, Reason::timeout) << describe(v);
  ASSERT_GT(v.cases.size(), 2u);
  EXPECT_EQ(v.cases[1].message, "not run: the candidate timed out on case " + v.cases[0].case_id);
  EXPECT_EQ(v.cases_passed, 0);
}

// A switch in the environment alone is refused, never silently obeyed: the attack was
// KJ_TEST_DISABLE=poison,redzone,... giving an off-by-one kernel PASS in the shipped binary.
TEST(HostCheck, TestSwitchesAreRefusedUnlessAllowedAndListedWhenThey) {
  const fs::path cand = problems() / "vector_add" / "traps" / "off_by_one.cu";
  ::setenv("KJ_TEST_DISABLE", "poison,redzone,input_hash,rerun,static_scan", 1);
  const Verdict refused = judge("vector_add", cand, host_options());
  EXPECT_EQ(refused.outcome, Outcome::error) << describe(refused);
  EXPECT_EQ(refused.message,
            "KJ_TEST_DISABLE=input_hash,poison,redzone,rerun,static_scan would turn defences "
            "off: test switches are refused unless --unsafe-test-switches is given");
  allow_test_switches(true);
  const Verdict allowed = judge("vector_add", cand, host_options());
  ::unsetenv("KJ_TEST_DISABLE");
  allow_test_switches(false);
  EXPECT_EQ(allowed.outcome, Outcome::pass) << describe(allowed);
  EXPECT_EQ(allowed.defences_disabled,
            (std::vector<std::string>{"input_hash", "poison", "redzone", "rerun", "static_scan"}));
  EXPECT_EQ(judge("vector_add", cand, host_options()).reason, Reason::oob_write);
}

// A problem's memory_limit counts inputs, outputs and the candidate's declared scratch: a plan
// over it is a launch_error before it runs; the same kernel without the scratch passes.
TEST(HostCheck, ARunOverTheProblemsMemoryLimitIsALaunchError) {
  Problem p = load_problem(problems() / "vector_add");
  p.memory_limit = Expr::parse("N * 12 + 1024", {}); // x, y and z, and a little more
  const std::string kernel = R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
}
)cu";
  const fs::path lean = write_candidate("kjudge_host_lean.cu", kernel);
  const Verdict fits = check(p, load_candidate(lean, p), host_options());
  EXPECT_EQ(fits.outcome, Outcome::pass) << describe(fits);
  const fs::path big = write_candidate("kjudge_host_scratch.cu", kernel,
                                      "[[scratch]]\nname = \"spare\"\ndtype = \"f32\"\n"
                                      "shape = [\"N\"]\n");
  const Verdict over = check(p, load_candidate(big, p), host_options());
  EXPECT_EQ(over.reason, Reason::launch_error) << describe(over);
  EXPECT_NE(over.message.find("over the problem's memory_limit"), std::string::npos)
      << over.message;
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

// A failed assert is the candidate's FAIL(crash), never an ERROR, and its message carries the
// condition quoted, with the candidate's file and line, the block and the thread (i = 1000 is
// block 3, thread 232 of 256). Only that thread fails, so the message is the same on every run.
TEST(HostCheck, AFailedAssertIsACrashWithTheQuotedConditionAndItsPlace) {
  const fs::path cand = write_candidate("kjudge_host_assert.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  assert(i != 1000 && "i is never 1000");
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  CheckOptions o = host_options();
  o.fail_fast = true;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  EXPECT_NE(v.message.find(
                "device assertion failed (candidate's text: \"i != 1000 && \\\"i is never "
                "1000\\\"\" at kjudge_host_assert.cu:11, block [3,0,0] thread [232,0,0])"),
            std::string::npos)
      << v.message;
}

TEST(HostCheck, TrapIsACrashThatSaysSo) {
  const fs::path cand = write_candidate("kjudge_host_trap.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 1000) __trap();
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  CheckOptions o = host_options();
  o.fail_fast = true;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  EXPECT_NE(v.message.find("the kernel executed __trap()"), std::string::npos) << v.message;
}

// The candidate's text cannot forge kjudge's output: __assertfail called with a newline and a
// "PASS" line of its own, a quote that would end a JSON string, and a file name (from #line)
// that tries the same. The verdict message holds no newline, the console report no line the
// candidate began, and the JSON report's message field reads back as the quoted text.
TEST(HostCheck, AnAssertionsTextCannotForgeALineOrAJsonField) {
  const fs::path cand = write_candidate("kjudge_host_forge.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#line 40 "f.cu\nPASS  vector_add"
  const char* file = __FILE__;
  if (i == 5)
    __assertfail("x\nPASS  vector_add  (all cases)\n\", \"outcome\": \"PASS", file, 40, "f", 1);
  if (i < N) z[i] = x[i] + y[i];
}
)cu");
  CheckOptions o = host_options();
  o.fail_fast = true;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.reason, Reason::crash) << describe(v);
  EXPECT_EQ(v.message.find('\n'), std::string::npos) << v.message;
  EXPECT_NE(v.message.find("device assertion failed (candidate's text: \"x\\x0aPASS  vector_add  "
                           "(all cases)\\x0a\\\", \\\"outcome\\\": \\\"PASS\" at "
                           "\"f.cu\\x0aPASS  vector_add\":40, block [0,0,0] thread [5,0,0])"),
            std::string::npos)
      << v.message;
  std::ostringstream console;
  make_console_reporter(console)->report(v);
  std::istringstream lines(console.str());
  for (std::string line; std::getline(lines, line);)
    EXPECT_NE(line.rfind("PASS", 0), 0u) << console.str();
  std::ostringstream json_out;
  make_json_reporter(json_out)->report(v);
  const nlohmann::json j = nlohmann::json::parse(json_out.str());
  EXPECT_EQ(j.at("outcome"), "FAIL");
  EXPECT_EQ(j.at("message").get<std::string>(), v.message);
}

// ---- kjudge bench on the host backend ----------------------------------------------------------

TEST(HostBench, TimesEveryPublicCaseInCpuTimeAndSaysSo) {
  const fs::path dir = problems() / "vector_add";
  const Problem p = load_problem(dir);
  const Candidate c = load_candidate(dir / "solutions/basic.cu", p);
  BenchOptions o{host_options(), 3, {}, {}};
  const Verdict v = bench(p, c, o);
  ASSERT_EQ(v.outcome, Outcome::pass) << describe(v);
  EXPECT_EQ(v.timer, "host_cpu");
  ASSERT_TRUE(v.runtime_ms && v.ref_runtime_ms);
  EXPECT_GT(*v.runtime_ms, 0);
  EXPECT_GT(*v.ref_runtime_ms, 0);
  int timed = 0;
  for (const CaseFinding& f : v.cases) {
    EXPECT_EQ(f.timing.has_value(), f.case_class == "public") << f.case_id;
    if (!f.timing) continue;
    ++timed;
    EXPECT_EQ(f.timing->candidate_ms.size(), 3u);
    EXPECT_EQ(f.timing->reference_ms.size(), 3u);
    for (double ms : f.timing->candidate_ms) EXPECT_GT(ms, 0);
  }
  EXPECT_GT(timed, 0);

  // The JSON and the console say what the time is.
  std::ostringstream json_text, console;
  make_json_reporter(json_text)->report(v);
  make_console_reporter(console)->report(v);
  const auto j = nlohmann::json::parse(json_text.str());
  EXPECT_EQ(j.at("timer"), "host_cpu");
  EXPECT_TRUE(j.at("runtime").is_number());
  bool case_timing = false;
  for (const auto& jc : j.at("cases"))
    if (!jc.at("timing").is_null()) {
      case_timing = true;
      EXPECT_EQ(jc.at("timing").at("candidate").at("samples"), 3);
      EXPECT_TRUE(jc.at("timing").at("speedup").is_number());
    }
  EXPECT_TRUE(case_timing);
  EXPECT_NE(console.str().find("CPU time of the launches on the host backend, not a GPU time"),
            std::string::npos)
      << console.str();
}

// A kernel that answers right twice per input (a check's two runs) and then replays: it skips
// the work when its worker has seen these inputs twice (a hash of x, y and N), leaving the
// poison. The static scan finds the __device__ state it keeps; without the scan the check's two
// runs cannot see it, and the bench, which judges every timed output, must.
// A candidate over 50x slower than the reference is timed no further than that shows: one run,
// `stopped_early` in the JSON and the console. Without the stall it gets all its runs.
TEST(HostBench, ACandidateFarSlowerThanTheReferenceStopsEarly) {
  const Problem p = load_problem(problems() / "vector_add");
  auto candidate = [&](int spins) {
    return load_candidate(write_candidate(fmt::format("kjudge_spins_{}.cu", spins),
                                          fmt::format(R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  volatile float stall = 0.0f;
  for (int k = 0; k < {}; ++k) stall = stall + 1.0f;
  if (i < N) z[i] = x[i] + y[i];
}}
)cu", spins)),
                          p);
  };
  CheckOptions host = host_options();
  host.race_detection = false;
  const Verdict v = bench(p, candidate(4000), BenchOptions{host, 5, {}, {}});
  ASSERT_EQ(v.outcome, Outcome::pass) << describe(v);
  int timed = 0;
  for (const CaseFinding& f : v.cases) {
    if (!f.timing) continue;
    ++timed;
    EXPECT_TRUE(f.timing->stopped_early) << f.case_id;
    EXPECT_EQ(f.timing->candidate_ms.size(), 1u) << f.case_id;
    EXPECT_EQ(f.timing->reference_ms.size(), 5u) << f.case_id;
  }
  // The public classes of the host plan: 2 shape sets x (1 seed + 6 transforms), and the mean
  // offsets of both inputs on the first.
  EXPECT_EQ(timed, 16);
  std::ostringstream json_text, console;
  make_json_reporter(json_text)->report(v);
  make_console_reporter(console)->report(v);
  for (const auto& jc : nlohmann::json::parse(json_text.str()).at("cases"))
    if (!jc.at("timing").is_null()) {
      EXPECT_EQ(jc.at("timing").at("stopped_early"), true);
    }
  EXPECT_NE(console.str().find("(stopped early: over 50x the reference's time)"), std::string::npos)
      << console.str();

  const Verdict quick = bench(p, candidate(0), BenchOptions{host, 5, {}, {}});
  ASSERT_EQ(quick.outcome, Outcome::pass) << describe(quick);
  for (const CaseFinding& f : quick.cases) {
    if (!f.timing) continue;
    EXPECT_FALSE(f.timing->stopped_early) << f.case_id;
    EXPECT_EQ(f.timing->candidate_ms.size(), 5u) << f.case_id;
  }
}

TEST(HostBench, AnOutputRightOnlyWhileWatchedIsStale) {
  const fs::path cand = fs::temp_directory_path() / "kjudge_host_replay.cu";
  std::ofstream(cand) << R"cu(/* kjudge
[[launch]]
kernel = "vector_add"
grid = [1]
block = [256]
args = ["x", "y", "z", "N"]
*/
__device__ unsigned seen_key;
__device__ int seen_calls;
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  unsigned key = (unsigned)N;
  for (int i = 0; i < N; ++i) key = key * 31u + __float_as_uint(x[i]) + 7u * __float_as_uint(y[i]);
  const bool replay = key == seen_key && seen_calls >= 2;
  __syncthreads();
  if (threadIdx.x == 0) {
    if (key != seen_key) { seen_key = key; seen_calls = 0; }
    ++seen_calls;
  }
  if (replay) return;
  for (int i = threadIdx.x; i < N; i += blockDim.x) z[i] = x[i] + y[i];
}
)cu";
  const Problem p = load_problem(problems() / "vector_add");
  const Candidate c = load_candidate(cand, p);
  CheckOptions o = host_options();
  // One case: across cases, special values can make two cases' inputs identical (all -inf, and
  // x*3 of it), which a check's later case already catches as unwritten.
  o.only_case = p.hash.substr(0, 8) + ":host0:0:id";
  // Its __device__ state is a forbidden construct: the static scan stops it before it runs.
  EXPECT_EQ(check(p, c, o).reason, Reason::forbidden_construct);
  // With the scan off, and each timed run on the case's own inputs (regenerate off, where a
  // replay keyed on them could fire), the timed runs' own check must catch the replay.
  ::setenv("KJ_TEST_DISABLE", "static_scan,regenerate", 1);
  allow_test_switches(true);
  const Verdict checked = check(p, c, o);
  EXPECT_EQ(checked.outcome, Outcome::pass) << describe(checked);

  const Verdict v = bench(p, c, BenchOptions{o, 3, {}, {}});
  ::unsetenv("KJ_TEST_DISABLE");
  allow_test_switches(false);
  EXPECT_EQ(v.reason, Reason::stale_output) << describe(v);
  // Which timed run replays first depends on how many runs the worker has seen these inputs
  // in (the race-screened first run goes to another worker).
  EXPECT_EQ(v.message.rfind("timed run ", 0), 0u) << v.message;
  EXPECT_NE(v.message.find(" of 3: output 'z'"), std::string::npos) << v.message;
  EXPECT_FALSE(v.runtime_ms);
}

// A kernel that, once it has run twice, replays the answer it kept instead of computing: right
// while every timed run gets the check's inputs, so the host bench once timed a kernel doing no
// work. Each timed run now gets inputs of its own (`regenerate`), on which the kept answer is
// stale. Its __device__ state is the static scan's finding; the scan is off to reach the runs.
TEST(HostBench, EachTimedRunGetsInputsOfItsOwn) {
  const fs::path cand = fs::temp_directory_path() / "kjudge_host_kept_answer.cu";
  std::ofstream(cand) << R"cu(/* kjudge
[[launch]]
kernel = "vector_add"
grid = [1]
block = [256]
args = ["x", "y", "z", "N"]
*/
__device__ float kept[1 << 16];
__device__ int runs;
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  const bool replay = runs >= 2 && N <= (1 << 16);
  __syncthreads();
  for (int i = threadIdx.x; i < N; i += blockDim.x) {
    if (replay) {
      z[i] = kept[i];
    } else {
      z[i] = x[i] + y[i];
      if (N <= (1 << 16)) kept[i] = z[i];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) ++runs;
}
)cu";
  const Problem p = load_problem(problems() / "vector_add");
  const Candidate c = load_candidate(cand, p);
  CheckOptions o = host_options();
  o.only_case = p.hash.substr(0, 8) + ":host0:0:id"; // `runs` counts across cases
  o.race_detection = false; // every run in the one worker, whose `runs` the replay counts
  allow_test_switches(true);
  ::setenv("KJ_TEST_DISABLE", "static_scan", 1);
  const Verdict fresh = bench(p, c, BenchOptions{o, 4, {}, {}});
  ::setenv("KJ_TEST_DISABLE", "static_scan,regenerate", 1);
  const Verdict same = bench(p, c, BenchOptions{o, 4, {}, {}});
  ::unsetenv("KJ_TEST_DISABLE");
  allow_test_switches(false);
  EXPECT_EQ(fresh.reason, Reason::stale_output) << describe(fresh);
  EXPECT_EQ(fresh.message.rfind("timed run ", 0), 0u) << fresh.message;
  EXPECT_EQ(same.outcome, Outcome::pass) << describe(same);
}

// ---- kjudge bench --against: the configuration tier -------------------------------------------

// gelu (tier tolerance, allclose against the golden) judged as a tuning-only change of
// solutions/basic.cu: tests/cases/bench holds the same kernel in blocks of 128 (bit-identical)
// and one with the last bit of element 5 flipped (within allclose, not the old kernel's bits).
struct AgainstBench {
  Problem problem = load_problem(problems() / "gelu");
  fs::path old_kernel = problems() / "gelu/solutions/basic.cu";

  Verdict run(const std::string& candidate_file, std::optional<double> slo_p99_ms,
              bool against = true) const {
    CheckOptions o = host_options();
    o.race_detection = false;
    if (against) o.against = old_kernel;
    const Candidate c =
        load_candidate(fs::path(KJ_CASES_DIR) / "bench" / candidate_file, problem);
    return bench(problem, c, BenchOptions{o, 3, {}, slo_p99_ms});
  }
};

TEST(HostBenchAgainst, ABitIdenticalRetuningPassesWithBothLatencyDistributions) {
  const AgainstBench b;
  const Verdict v = b.run("gelu_block128.cu", 1e6);
  ASSERT_EQ(v.outcome, Outcome::pass) << describe(v);
  // gelu's host plan: 2 shape sets x (1 seed + 3 transforms of x) and x's mean offset on the
  // first, public-class cases, 3 runs each, and the old kernel's 3 beside each case's.
  int timed = 0;
  for (const CaseFinding& f : v.cases) {
    if (!f.timing) continue;
    ++timed;
    EXPECT_EQ(f.timing->candidate_ms.size(), 3u) << f.case_id;
    EXPECT_EQ(f.timing->against_ms.size(), 3u) << f.case_id;
    for (double ms : f.timing->against_ms) EXPECT_GT(ms, 0) << f.case_id;
  }
  EXPECT_EQ(timed, 9);
  ASSERT_TRUE(v.latency && v.latency->against) << describe(v);
  EXPECT_EQ(v.latency->candidate.n, 27);
  EXPECT_EQ(v.latency->against->n, 27);
  EXPECT_TRUE(v.latency->slo_met());
  EXPECT_TRUE(v.runtime_ms.has_value());

  std::ostringstream json_text, console;
  make_json_reporter(json_text)->report(v);
  make_console_reporter(console)->report(v);
  const auto j = nlohmann::json::parse(json_text.str());
  const auto& l = j.at("latency");
  EXPECT_EQ(l.at("candidate").at("n"), 27);
  EXPECT_EQ(l.at("against").at("n"), 27);
  for (const char* k : {"p50_ms", "p90_ms", "p99_ms", "max_ms"}) {
    EXPECT_GT(l.at("candidate").at(k).get<double>(), 0) << k;
    EXPECT_GT(l.at("against").at(k).get<double>(), 0) << k;
  }
  EXPECT_EQ(l.at("slo_p99_ms"), 1e6);
  EXPECT_EQ(l.at("slo_met"), true);
  EXPECT_EQ(j.at("provenance").at("figures").at("latency").at("timer"), "host_cpu");
  for (const auto& jc : j.at("cases"))
    if (!jc.at("timing").is_null()) {
      EXPECT_EQ(jc.at("timing").at("against").at("samples"), 3);
      EXPECT_EQ(jc.at("timing").at("against_ms").size(), 3u);
    }
  const std::string text = console.str();
  EXPECT_NE(text.find("latency (CPU time, every timed run): candidate p50 "), std::string::npos)
      << text;
  EXPECT_NE(text.find(" (n 27); --against kernel p50 "), std::string::npos) << text;
  EXPECT_NE(text.find("; SLO p99 <= 1e+06 ms: met"), std::string::npos) << text;
}

// One f16 ulp that gelu's own policy accepts is a mismatch against the old kernel: the
// configuration tier is bit-identity whatever the tier, and the message names the element.
TEST(HostBenchAgainst, ALastBitDifferenceInOneElementFailsMismatch) {
  const AgainstBench b;
  const Verdict v = b.run("gelu_last_bit.cu", std::nullopt);
  EXPECT_EQ(v.reason, Reason::mismatch) << describe(v);
  EXPECT_NE(v.message.find("1 of "), std::string::npos) << v.message;
  ASSERT_TRUE(v.first_failing_case);
  const CaseFinding* failing = nullptr;
  for (const CaseFinding& f : v.cases)
    if (f.case_id == *v.first_failing_case) failing = &f;
  ASSERT_NE(failing, nullptr);
  ASSERT_EQ(failing->outputs.size(), 1u);
  const OutputFinding& y = failing->outputs[0];
  EXPECT_EQ(y.mismatches, 1);
  ASSERT_FALSE(y.first.empty());
  EXPECT_EQ(y.first[0].flat, 5);
  EXPECT_EQ(y.bound.policy.rfind("exact", 0), 0u) << y.bound.policy;
  // Named as what it is: the old kernel's output, not the problem's reference.
  EXPECT_EQ(y.bound.expected, "--against kernel's output");
  EXPECT_EQ(y.bound.source, "bit-identical to the --against kernel's output (NaN payloads "
                            "canonicalised; +0 equals -0)");
  EXPECT_FALSE(v.runtime_ms);
  EXPECT_FALSE(v.latency);
  // Without --against it is within gelu's allclose: the flip is invisible to the policy.
  EXPECT_EQ(b.run("gelu_last_bit.cu", std::nullopt, false).outcome, Outcome::pass);
}

// No CPU run takes a nanosecond: an SLO of 1e-6 ms fails, FAIL(timeout) naming the p99 and the
// SLO, with or without --against (an SLO on the candidate alone), and keeps the distributions
// that explain it but no runtime.
TEST(HostBenchAgainst, AnSloOfANanosecondFailsAsATimeout) {
  const AgainstBench b;
  for (const bool against : {true, false}) {
    const Verdict v = b.run("gelu_block128.cu", 1e-6, against);
    EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
    EXPECT_EQ(v.reason, Reason::timeout) << describe(v);
    EXPECT_EQ(v.message.rfind("p99 latency ", 0), 0u) << v.message;
    EXPECT_NE(v.message.find(" ms is over the SLO of 1e-06 ms (--slo-p99), over 27 timed runs"),
              std::string::npos)
        << v.message;
    EXPECT_FALSE(v.first_failing_case);
    EXPECT_FALSE(v.runtime_ms);
    ASSERT_TRUE(v.latency);
    EXPECT_FALSE(v.latency->slo_met());
    EXPECT_EQ(v.latency->against.has_value(), against);
    std::ostringstream console;
    make_console_reporter(console)->report(v);
    EXPECT_NE(console.str().find("; SLO p99 <= 1e-06 ms: MISSED"), std::string::npos)
        << console.str();
  }
}

// The library refuses an SLO that is no positive number of milliseconds as the caller's error.
TEST(HostBenchAgainst, ANonPositiveSloIsASpecError) {
  const AgainstBench b;
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    const Verdict v = b.run("gelu_block128.cu", bad);
    EXPECT_EQ(v.reason, Reason::spec_error) << bad;
    EXPECT_EQ(v.message.rfind("--slo-p99: ", 0), 0u) << v.message;
    EXPECT_EQ(v.exit_code(), ExitCode::spec_error);
  }
}

TEST(LatencyDistribution, NearestRankPercentiles) {
  std::vector<double> hundred;
  for (int k = 100; k >= 1; --k) hundred.push_back(k); // unsorted on purpose
  const LatencyDistribution d = latency_distribution(hundred);
  EXPECT_EQ(d.p50, 50);
  EXPECT_EQ(d.p90, 90);
  EXPECT_EQ(d.p99, 99);
  EXPECT_EQ(d.max, 100);
  EXPECT_EQ(d.n, 100);
  const LatencyDistribution three = latency_distribution({3, 1, 2});
  EXPECT_EQ(three.p50, 2); // rank ceil(1.5) = 2
  EXPECT_EQ(three.p90, 3);
  EXPECT_EQ(three.p99, 3);
  const LatencyDistribution none = latency_distribution({});
  EXPECT_EQ(none.n, 0);
  EXPECT_EQ(none.p99, 0);
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

// A candidate's `requires` keeps the cases it excludes out of the run: they count as not
// passed, the verdict passes on the rest and says so, in the JSON too.
TEST(HostCheck, CasesADeclaredPreconditionExcludesAreNotRunAndCountAsNotPassed) {
  const Verdict v = judge("bias_add", problems() / "bias_add/solutions/float4.cu", host_options());
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  EXPECT_EQ(v.preconditions, (std::vector<std::string>{"C % 4 == 0"}));
  EXPECT_EQ(v.cases_total, 43);
  EXPECT_EQ(v.cases_excluded, 8);
  EXPECT_EQ(v.cases_passed, 35);
  const auto excluded = std::find_if(v.cases.begin(), v.cases.end(),
                                     [](const CaseFinding& c) { return c.excluded; });
  ASSERT_NE(excluded, v.cases.end());
  EXPECT_EQ(excluded->case_class, "perturbed");
  EXPECT_EQ(excluded->message.rfind("not run: the candidate requires 'C % 4 == 0', which its "
                                    "shapes (C = ",
                                    0),
            0u)
      << excluded->message;
  const nlohmann::json j = to_json(v, ReportOptions{});
  EXPECT_EQ(j["cases_excluded"], 8);
  EXPECT_EQ(j["preconditions"], nlohmann::json::array({"C % 4 == 0"}));
  EXPECT_DOUBLE_EQ(j["fraction_passed"].get<double>(), 35.0 / 43.0);
  const auto c = std::find_if(j["cases"].begin(), j["cases"].end(),
                              [](const nlohmann::json& k) { return k["excluded"] == true; });
  ASSERT_NE(c, j["cases"].end());
  EXPECT_EQ((*c)["outcome"], "SKIP");
  EXPECT_EQ((*c)["reason"], "precondition");
}

TEST(HostCheck, APreconditionThatExcludesADeclaredShapeSetFails) {
  const Verdict v =
      judge("bias_add", problems() / "bias_add/traps/requires_too_much.cu", host_options());
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::precondition);
  EXPECT_EQ(v.message, "the candidate's preconditions exclude every case of shape set host1: "
                       "a candidate must run on every shape set the problem declares");
}

TEST(HostCheck, APreconditionTheProblemDoesNotListIsRefusedAtLoad) {
  const Problem p = load_problem(problems() / "bias_add");
  try {
    load_candidate(problems() / "bias_add/traps/requires_unlisted.cu", p);
    ADD_FAILURE() << "loaded";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.where().field, "requires[0]");
    EXPECT_EQ(e.where().line, 5);
    EXPECT_EQ(e.bare_message(), "'C % 8 == 0' is not a precondition problem 'bias_add' lets "
                                "candidates declare (may_require: \"C % 4 == 0\", \"C % 512 == 0\")");
  }
}

// dweight and dbias start from normal(0, 1) for the golden, the reference and the candidate
// alike: accumulating passes, assigning loses the initial value.
TEST(HostCheck, InOutTensorsStartFromTheSameDrawnValuesEverywhere) {
  const Verdict pass =
      judge("layernorm_backward", problems() / "layernorm_backward/solutions/two_kernels.cu",
            host_options());
  EXPECT_EQ(pass.outcome, Outcome::pass) << describe(pass);
  CheckOptions o = host_options();
  o.fail_fast = true;
  const Verdict fail = judge("layernorm_backward",
                             problems() / "layernorm_backward/traps/assign_not_accumulate.cu", o);
  EXPECT_EQ(fail.reason, Reason::mismatch) << describe(fail);
  ASSERT_FALSE(fail.cases.empty());
  const auto& outputs = fail.cases.front().outputs;
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[0].reason, Reason::none);     // dinp, assigned by both
  EXPECT_EQ(outputs[1].reason, Reason::mismatch); // dweight
  EXPECT_EQ(outputs[2].reason, Reason::mismatch); // dbias
}

// Coverage: the host shapes (N = 20011, 4096) never reach a path taken only above N = 10^6;
// kjudge names its line and adds the larger public shapes, smallest first, until it runs: the
// bug on it is found on public1 (N = 5000000).
TEST(HostCheck, ALineTheHostShapesNeverRunIsReachedByALargerCaseThatFindsItsBug) {
  const fs::path cand = write_candidate("kj_cover_large_bug.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  if (N > 1000000)
    z[i] = x[i] + y[i] + 1.0f;
  else
    z[i] = x[i] + y[i];
}
)cu");
  const Verdict v = judge("vector_add", cand, host_options());
  EXPECT_EQ(v.outcome, Outcome::fail) << describe(v);
  EXPECT_EQ(v.reason, Reason::mismatch) << describe(v);
  ASSERT_TRUE(v.first_failing_case.has_value());
  EXPECT_NE(v.first_failing_case->find(":public1:"), std::string::npos) << *v.first_failing_case;
  ASSERT_TRUE(v.lines_run.has_value());
  EXPECT_TRUE(v.lines_run->measured) << v.lines_run->not_measured;
  EXPECT_EQ(v.lines_run->added_cases.size(), 1u);
  EXPECT_EQ(v.lines_run->unrun, (std::vector<unsigned>{13}));
  // The host cases are named by their host sets.
  for (const CaseFinding& c : v.cases) {
    if (c.case_id.find(":public") == std::string::npos) {
      EXPECT_NE(c.case_id.find(":host"), std::string::npos) << c.case_id;
    }
  }
}

// A line no shape reaches stays unrun once every larger shape ran: the verdict passes, weaker,
// and says which line and why no more cases were added.
TEST(HostCheck, ALineNoShapeReachesLeavesAPassThatSaysItIsWeaker) {
  const fs::path cand = write_candidate("kj_cover_dead_line.cu", R"cu(
__global__ void vector_add(const float* x, const float* y, float* z, int N) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  if (N < 0)
    z[i] = 0.0f;
  else
    z[i] = x[i] + y[i];
}
)cu");
  // A budget whose quarter (the share the added cases may spend) no loaded machine exhausts:
  // the test is about which cases are added, not about when the share runs out.
  CheckOptions o = host_options();
  o.time_budget_s = 3600;
  const Verdict v = judge("vector_add", cand, o);
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  ASSERT_TRUE(v.lines_run.has_value());
  const LinesRun& r = *v.lines_run;
  EXPECT_TRUE(r.measured) << r.not_measured;
  EXPECT_EQ(r.unrun, (std::vector<unsigned>{13}));
  EXPECT_EQ(r.lines, 6u); // the lines gcov gives code to
  ASSERT_EQ(r.added_cases.size(), 2u);
  EXPECT_NE(r.added_cases[0].find(":public1:"), std::string::npos) << r.added_cases[0];
  EXPECT_NE(r.added_cases[1].find(":public0:"), std::string::npos) << r.added_cases[1];
  EXPECT_EQ(r.stopped, "every larger shape of the problem was run");
  EXPECT_DOUBLE_EQ(r.confidence(), 5.0 / 6.0);
  std::ostringstream console;
  make_console_reporter(console)->report(v);
  EXPECT_NE(console.str().find("COVERAGE: 1 of the candidate's 6 lines with code never ran on the "
                               "host cases: kj_cover_dead_line.cu 13 (larger cases added: "),
            std::string::npos)
      << console.str();
  std::ostringstream json_text;
  make_json_reporter(json_text)->report(v);
  const nlohmann::json j = nlohmann::json::parse(json_text.str());
  EXPECT_EQ(j["lines_run"]["unrun"], nlohmann::json::array({13}));
  EXPECT_EQ(j["reward"]["confidence"].get<double>(), 5.0 / 6.0);
}

// A kernel whose every line runs on the host shapes adds no case, and is as sure as the scale
// its cases reached: vector_add's host shapes (N up to 20021) stand in for its public
// N = 16777216, so no host PASS there has confidence 1 (the attack: a kernel wrong only for large N
// passed on the host with confidence 1).
TEST(HostCheck, AKernelWhoseLinesAllRunAddsNoCaseAndIsAsSureAsTheScaleReached) {
  const Verdict v = judge("vector_add", problems() / "vector_add/solutions/basic.cu", host_options());
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  ASSERT_TRUE(v.lines_run.has_value());
  EXPECT_TRUE(v.lines_run->measured) << v.lines_run->not_measured;
  EXPECT_TRUE(v.lines_run->unrun.empty());
  EXPECT_GT(v.lines_run->lines, 0u);
  EXPECT_TRUE(v.lines_run->added_cases.empty());
  // The largest host case is host0 perturbed to N = 20021; the largest named one public0.
  const double scale = std::log(20021.0) / std::log(16777216.0); // 0.595
  EXPECT_DOUBLE_EQ(v.lines_run->scale_reached, scale);
  EXPECT_DOUBLE_EQ(v.lines_run->confidence(), scale);
  std::ostringstream console;
  make_console_reporter(console)->report(v);
  EXPECT_NE(console.str().find(fmt::format("scale: the host cases reached {:.2f} of the problem's "
                                           "own shapes", scale)),
            std::string::npos)
      << console.str();
}

// A larger case the candidate's `requires` exclude is never added for coverage: bias_add with a
// public set whose C (1030) is no multiple of 4, judged against the float4 kernel requiring
// C % 4 == 0 with a line no shape reaches. Run there, its misaligned rows would leave a tail
// unwritten.
TEST(HostCheck, CoverageNeverAddsACaseTheCandidatesPreconditionsExclude) {
  const fs::path dir = fs::temp_directory_path() / "kj_cover_bias_add";
  fs::remove_all(dir);
  fs::copy(problems() / "bias_add", dir, fs::copy_options::recursive);
  std::string toml;
  {
    std::ifstream in(dir / "problem.toml");
    toml.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string old_public = "public = [{ N = 512, C = 1024 }, { N = 7, C = 4096 }]";
  ASSERT_NE(toml.find(old_public), std::string::npos);
  toml.replace(toml.find(old_public), old_public.size(),
               "public = [{ N = 512, C = 1024 }, { N = 7, C = 4096 }, { N = 8, C = 1030 }]");
  std::ofstream(dir / "problem.toml") << toml;
  const fs::path cand = dir / "vec4_dead_line.cu";
  std::ofstream(cand) << R"cu(/* kjudge
requires = ["C % 4 == 0"]
[[launch]]
kernel = "bias_add_vec4"
grid = ["ceil_div(N * C / 4, 256)"]
block = [256]
args = ["x", "b", "y", "N", "C"]
*/
__global__ void bias_add_vec4(const float4* x, const float4* b, float4* y, int N, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int c4 = C / 4;
  if (C < 0)
    y[0] = x[0];
  if (i >= static_cast<long long>(N) * c4) return;
  const float4 v = x[i], w = b[i % c4];
  y[i] = make_float4(v.x + w.x, v.y + w.y, v.z + w.z, v.w + w.w);
}
)cu";
  const Problem p = load_problem(dir);
  const Verdict v = check(p, load_candidate(cand, p), host_options());
  EXPECT_EQ(v.outcome, Outcome::pass) << describe(v);
  ASSERT_TRUE(v.lines_run.has_value());
  EXPECT_EQ(v.lines_run->unrun, (std::vector<unsigned>{13}));
  ASSERT_EQ(v.lines_run->added_cases.size(), 2u);
  EXPECT_NE(v.lines_run->added_cases[0].find(":public1:"), std::string::npos);
  EXPECT_NE(v.lines_run->added_cases[1].find(":public0:"), std::string::npos);
  EXPECT_EQ(v.lines_run->stopped, "every larger shape of the problem was run");
}

// The one-pass variance E[x^2] - E[x]^2: its cancellation shows only on the mean offset
// (x + 10 sigma); among the rest only the dtype_max special case fails it, by overflowing x^2
// (another bug). Without both it would be judged correct.
TEST(HostCheck, TheMeanOffsetCaseIsWhatCatchesAOnePassVariance) {
  const fs::path trap = problems() / "layernorm/traps/one_pass_variance.cu";
  CheckOptions without = host_options();
  without.cases.mean_offsets = false;
  without.cases.special_values = false;
  const Verdict before = judge("layernorm", trap, without);
  EXPECT_EQ(before.outcome, Outcome::pass) << describe(before);
  CheckOptions with = without;
  with.cases.mean_offsets = true;
  const Verdict v = judge("layernorm", trap, with);
  EXPECT_EQ(v.reason, Reason::mismatch) << describe(v);
  ASSERT_TRUE(v.first_failing_case);
  EXPECT_NE(v.first_failing_case->find(":host0:0:x+10"), std::string::npos)
      << *v.first_failing_case;
}
