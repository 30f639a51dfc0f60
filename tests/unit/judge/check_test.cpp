// kj::check where no GPU is usable (CI machines): a SKIP verdict that never passes, with the
// reason; and how the judge finds kjudge/device.cuh for its compiles. The GPU behaviour of
// check is in tests/gpu/check_test.cpp.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "judge/case_oracle.hpp"
#include "kjudge/cuda.hpp"
#include "kjudge/judge.hpp"
#include "kjudge/spec.hpp"

namespace {

namespace fs = std::filesystem;
using namespace kj;

fs::path problems() {
  return fs::path(KJ_SOURCE_DIR) / "problems";
}

TEST(CheckWithoutGpu, IsASkipWithTheReason) {
  std::string why;
  if (cuda_available(&why)) GTEST_SKIP() << "a GPU is usable here; gpu_tests judge for real";
  const Problem p = load_problem(problems() / "vector_add");
  const Candidate c = load_candidate(problems() / "vector_add" / "solutions" / "basic.cu", p);
  CheckOptions o;
  o.self_exe = "/nonexistent/kjudge"; // never started: nothing runs without a GPU
  o.backend = Backend::cuda;           // auto would judge on the host backend
  const Verdict v = check(p, c, o);
  EXPECT_EQ(v.outcome, Outcome::skip);
  EXPECT_EQ(v.reason, Reason::none);
  EXPECT_TRUE(v.cases.empty());
  ASSERT_EQ(v.skips.size(), 1u);
  EXPECT_EQ(v.skips[0].rfind("SKIP(no usable GPU: " + why + ")", 0), 0u) << v.skips[0];
  EXPECT_EQ(v.manifest.problem, "vector_add");
  EXPECT_EQ(v.manifest.problem_hash, p.hash);
  EXPECT_EQ(v.manifest.backend, "cuda");
  EXPECT_EQ(v.manifest.candidate_hash.size(), 64u);
  EXPECT_TRUE(v.replay_command.empty());
}

TEST(FindKjudgeInclude, NextToABuildTreeOrInstalledExecutable) {
  ::unsetenv("KJUDGE_INCLUDE");
  const fs::path include = fs::path(KJ_SOURCE_DIR) / "include";
  // build-dir/cli/kjudge: ../../include is the source tree's.
  EXPECT_EQ(
      fs::weakly_canonical(find_kjudge_include(fs::path(KJ_SOURCE_DIR) / "b" / "cli" / "kjudge")),
      fs::weakly_canonical(include));
  // Nothing next to the executable: the source tree kjudge was built from.
  EXPECT_EQ(fs::weakly_canonical(find_kjudge_include("/nonexistent/bin/kjudge")),
            fs::weakly_canonical(include));
  EXPECT_EQ(fs::weakly_canonical(find_kjudge_include({})), fs::weakly_canonical(include));
}

TEST(FindKjudgeInclude, TheEnvironmentComesFirstWhenItHoldsTheHeader) {
  const fs::path dir = fs::temp_directory_path() / "kjudge_include_test";
  fs::create_directories(dir / "kjudge");
  { std::ofstream(dir / "kjudge" / "device.cuh") << "// test\n"; }
  ::setenv("KJUDGE_INCLUDE", dir.c_str(), 1);
  EXPECT_EQ(find_kjudge_include("/nonexistent/kjudge"), dir);
  // A folder without kjudge/device.cuh is passed over.
  ::setenv("KJUDGE_INCLUDE", "/nonexistent", 1);
  EXPECT_EQ(fs::weakly_canonical(find_kjudge_include("/nonexistent/kjudge")),
            fs::weakly_canonical(fs::path(KJ_SOURCE_DIR) / "include"));
  ::unsetenv("KJUDGE_INCLUDE");
  fs::remove_all(dir);
}

TEST(ReferenceRole, TheProblemsFloatDtype) {
  EXPECT_EQ(judge::problem_float_dtype(load_problem(problems() / "softmax")), DType::f32);
  Problem p = load_problem(problems() / "softmax");
  p.inputs[0].dtype = DType::bf16;
  EXPECT_EQ(judge::problem_float_dtype(p), DType::bf16);
  p.inputs[0].dtype = DType::i32; // no float input: the first float output decides
  p.outputs[0].dtype = DType::f16;
  EXPECT_EQ(judge::problem_float_dtype(p), DType::f16);
  p.outputs[0].dtype = DType::i64;
  EXPECT_EQ(judge::problem_float_dtype(p), DType::f32);
}

TEST(ReferenceRole, DistinctExpressionsKeepTheirFirstOrder) {
  std::vector<LaunchSpec> launches(4);
  launches[0].kernel = "a<float>";
  launches[1].kernel = "b";
  launches[2].kernel = "a<float>";
  launches[3].kernel = "c<4>";
  std::vector<std::size_t> index;
  EXPECT_EQ(judge::distinct_expressions(launches, index),
            (std::vector<std::string>{"a<float>", "b", "c<4>"}));
  EXPECT_EQ(index, (std::vector<std::size_t>{0, 1, 0, 2}));
}

} // namespace
