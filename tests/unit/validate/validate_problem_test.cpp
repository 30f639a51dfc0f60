// validate_problem as a whole: a clean problem has no diagnostics; a vary dim without any
// perturbation left, a public or hidden set that fails a constraint, launches whose grid or block
// cannot run on some shape set, lint findings and signature mismatches all become errors with a
// location, and nothing throws.
#include <gtest/gtest.h>

#include "kjudge/validate.hpp"
#include "unit/validate/problem_builder.hpp"

namespace kj {
namespace {

using test::ProblemBuilder;

std::vector<std::string> render(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags) out.push_back(format_diagnostic(d));
  return out;
}

TEST(ValidateProblem, CleanSoftmaxIsOk) {
  const ValidationReport report = validate_problem(test::softmax_problem().build());
  EXPECT_EQ(render(report.diagnostics), std::vector<std::string>{});
  EXPECT_TRUE(report.ok());
  // public0, public1, hidden0, then 4 rules x 2 dims x 3 bases less duplicates.
  ASSERT_GE(report.shapes.sets.size(), 3u);
  EXPECT_EQ(report.shapes.sets[3].id, "public0~R=4095");
  EXPECT_EQ(report.shapes.sets[5].id, "public0~R=4099");
}

TEST(ValidateProblem, VaryDimWithoutPerturbation) {
  ProblemBuilder b;
  b.public_set({{"R", 4}, {"C", 8}})
      .vary({"R", "C"})
      .constraint("C % 4 == 0")
      .input("x", DType::f32, {"R", "C"});
  const ValidationReport report = validate_problem(b.build());
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{"problem.toml: error: dims.vary[1]: vary dim 'C' keeps no "
                                      "perturbation: every one fails constraint 'C % 4 == 0'"}));
}

TEST(ValidateProblem, VaryDimRejectedForSeveralReasons) {
  ProblemBuilder b;
  b.public_set({{"C", 8}})
      .vary({"C"})
      .constraint("C >= 8")
      .constraint("C <= 8")
      .input("x", DType::f32, {"C"});
  const ValidationReport report = validate_problem(b.build());
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{"problem.toml: error: dims.vary[0]: vary dim 'C' keeps no "
                                      "perturbation: every one is rejected: fails constraint "
                                      "'C >= 8'; fails constraint 'C <= 8'"}));
}

TEST(ValidateProblem, UnknownVaryDim) {
  ProblemBuilder b;
  b.public_set({{"C", 8}}).vary({"K"}).input("x", DType::f32, {"C"});
  const ValidationReport report = validate_problem(b.build());
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{"problem.toml: error: dims.vary[0]: vary dim 'K' is not a "
                                      "dim of any shape set"}));
}

TEST(ValidateProblem, DuplicatesAloneAreNotAnError) {
  // Every perturbation of N duplicates another set, so N is still varied.
  ProblemBuilder b;
  b.public_set({{"N", 4}})
      .public_set({{"N", 3}})
      .public_set({{"N", 5}})
      .public_set({{"N", 7}})
      .public_set({{"N", 1}})
      .vary({"N"})
      .input("x", DType::f32, {"N"});
  const Problem p = b.build();
  const ValidationReport report = validate_problem(p);
  EXPECT_TRUE(report.ok()) << ::testing::PrintToString(render(report.diagnostics));
}

TEST(ValidateProblem, BaseSetFailingAConstraint) {
  ProblemBuilder b;
  b.public_set({{"R", 4}, {"C", 8}})
      .public_set({{"R", 2}, {"C", 3}})
      .hidden_set({{"R", 2}, {"C", 5}})
      .constraint("C % 4 == 0")
      .input("x", DType::f32, {"R", "C"});
  const ValidationReport report = validate_problem(b.build());
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{
                "problem.toml: error: dims.public[1]: public shape set public1 (C = 3, R = 2) "
                "fails constraint 'C % 4 == 0'",
                "problem.toml: error: dims.hidden[0]: hidden shape set hidden0 (C = 5, R = 2) "
                "fails constraint 'C % 4 == 0'",
            }));
}

TEST(ValidateProblem, HiddenSetEqualToAPublicOne) {
  ProblemBuilder b;
  b.public_set({{"N", 4}}).hidden_set({{"N", 4}}).input("x", DType::f32, {"N"});
  const ValidationReport report = validate_problem(b.build());
  EXPECT_TRUE(report.ok());
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{"problem.toml: warning: dims.hidden[0]: shape set hidden0 "
                                      "has the same dims as public0: it is not hidden"}));
}

TEST(ValidateProblem, LaunchThatCannotRunOnAPerturbedSet) {
  auto b = test::softmax_problem();
  b.get().reference.launches[0].grid = test::exprs({"R / 4"});
  const ValidationReport report = validate_problem(b.build());
  // R < 4: hidden0 (R = 3), the R = 1 and R = 2 perturbations, and every C perturbation of
  // hidden0.
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{"problem.toml: error: reference.launch[0].grid[0]: on shape "
                                      "set hidden0: 'R / 4' is 0, outside [1, 2147483647] (and "
                                      "8 more)"}));
}

TEST(ValidateProblem, HiddenRangesThatDrawsSeldomOrNeverMeet) {
  auto b = test::softmax_problem();
  b.constraint("R <= 4096")
      .hidden_range({{"R", {4097, 5000}}, {"C", {1, 10}}})
      .hidden_range({{"R", {1, 20000}}, {"C", {7, 7}}});
  const ValidationReport report = validate_problem(b.build());
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{
                "problem.toml: error: dims.hidden_ranges[0]: hidden range 0: none of 32 draws "
                "meets the constraints and shapes (the first, C = 8, R = 4508 fails constraint "
                "'R <= 4096')",
                "problem.toml: warning: dims.hidden_ranges[1]: hidden range 1: only 6 of 32 "
                "draws meet the constraints and shapes (the first that does not, C = 7, R = 9839 "
                "fails "
                "constraint 'R <= 4096'); narrow the range"}));
}

TEST(ValidateProblem, LaunchesAreCheckedOnDrawsFromTheHiddenRanges) {
  auto b = test::softmax_problem();
  b.get().reference.launches[0].grid = test::exprs({"R / 4"});
  b.get().dims.hidden_sets.clear();
  b.get().dims.vary.clear();
  b.hidden_range({{"R", {1, 7}}, {"C", {1000, 1000}}});
  const ValidationReport report = validate_problem(b.build());
  // 12 of the 32 validation draws of R in [1, 7] are under 4.
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{"problem.toml: error: reference.launch[0].grid[0]: on shape "
                                      "set range0.draw4: 'R / 4' is 0, outside [1, 2147483647] "
                                      "(and 11 more)"}));
}

TEST(ValidateProblem, BlockLimits) {
  auto b = test::softmax_problem();
  b.get().reference.launches[0].block = test::exprs({"64", "32"});
  const ValidationReport report = validate_problem(b.build());
  ASSERT_EQ(report.diagnostics.size(), 1u);
  EXPECT_EQ(report.diagnostics[0].where.field, "reference.launch[0].block");
  EXPECT_NE(report.diagnostics[0].message.find("2048 threads per block"), std::string::npos);
}

TEST(ValidateProblem, LintAndSignatureFindingsAreReported) {
  auto b = test::softmax_problem();
  b.get().reference.text = R"(template <typename T>
__global__ void softmax_ref(const T* x, T* y, int R) {
  y[0] = x[0] * 0.5f;
}
)";
  const ValidationReport report = validate_problem(b.build());
  EXPECT_FALSE(report.ok());
  EXPECT_EQ(render(report.diagnostics),
            (std::vector<std::string>{
                "reference.cu:3:17: error: f-suffixed literal '0.5f' caps the golden at f32; "
                "write kj::c<T>(0.5)",
                "problem.toml: error: reference.launch[0].args: the launch gives 4 arguments, "
                "kernel 'softmax_ref' takes 3 parameters (x, y, R)",
            }));
}

TEST(ValidateProblem, GoldenKernelsInTheReferenceFileAreNotLinted) {
  auto b = test::softmax_problem();
  Problem& p = b.get();
  p.reference.text += "__global__ void softmax_golden(const double* x, double* y, int R, int C) "
                      "{ y[0] = x[0] * 1.0f; }\n";
  KernelSource golden;
  golden.path = p.reference.path;
  golden.text = p.reference.text;
  golden.launches.push_back(test::ProblemBuilder::make_launch(
      "softmax_golden", {"x", "y", "R", "C"}, {"R"}, {"1"}, 0));
  golden.launches[0].where.field = "golden.launch[0]";
  p.golden = golden;
  // The golden's float tensors are double, so `const double* x` fits the f32 input x there.
  const ValidationReport report = validate_problem(p);
  EXPECT_EQ(render(report.diagnostics), std::vector<std::string>{});
}

TEST(ValidateProblem, ABaselinePlanIsCheckedLikeTheReferences) {
  auto b = test::softmax_problem();
  Problem& p = b.get();
  TimedBaseline baseline;
  baseline.name = "vendor softmax";
  KernelSource plan;
  plan.path = "vendor.cu";
  plan.text = "__global__ void vendor_softmax(const float* x, double* y, int R, int C) {}\n";
  plan.launches.push_back(test::ProblemBuilder::make_launch(
      "vendor_softmax", {"x", "y", "R", "C"}, {"R"}, {"256"}, 0));
  plan.launches[0].where.field = "baseline[0].launch[0]";
  baseline.plan = plan;
  p.timed_baseline = baseline;
  // y is f32: a double* parameter does not fit it (the baseline runs in the problem's dtypes).
  const ValidationReport report = validate_problem(p);
  EXPECT_FALSE(report.ok());
  const std::vector<std::string> found = render(report.diagnostics);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].find("baseline[0].launch[0].args[1]: tensor 'y' is f32"), std::string::npos)
      << found[0];
}

TEST(ValidateProblem, NeverThrowsOnBadExpressions) {
  ProblemBuilder b;
  b.public_set({{"N", 4}})
      .vary({"N"})
      .constraint("N / (N - 1)")
      .input("x", DType::f32, {"N - 6"});
  ValidationReport report;
  EXPECT_NO_THROW(report = validate_problem(b.build()));
  EXPECT_FALSE(report.ok());  // public0 has a negative dim
  // public0 and N = 7; N = 3 and 5 give negative dims, N = 1 divides by zero.
  ASSERT_EQ(report.shapes.sets.size(), 2u);
  EXPECT_EQ(report.shapes.sets[1].id, "public0~N=7");
  bool saw_division = false;
  for (const auto& r : report.shapes.rejected) {
    if (r.perturbation.value == 1) {
      saw_division = r.why.find("cannot be evaluated") != std::string::npos;
    }
  }
  EXPECT_TRUE(saw_division) << ::testing::PrintToString(report.shapes.rejected.size());
}

}  // namespace
}  // namespace kj
