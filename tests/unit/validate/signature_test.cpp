// The launch-plan/kernel signature check: argument count, tensor-to-pointer and value-to-scalar
// kinds, a missing kernel (with the kernels that do exist), template argument counts (defaults,
// and the reference's bare or <T> form), element types spelled in the signature, extern "C"
// kernels and a candidate's scratch buffers.
#include <gtest/gtest.h>

#include "kjudge/validate.hpp"
#include "unit/validate/problem_builder.hpp"

namespace kj {
namespace {

using test::ProblemBuilder;

std::vector<std::string> render(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags) out.push_back(d.where.field + ": " + d.message);
  return out;
}

ProblemBuilder base_problem(std::string reference) {
  ProblemBuilder b;
  b.public_set({{"R", 4}, {"C", 8}})
      .input("x", DType::f32, {"R", "C"})
      .output("y", DType::f32, {"R", "C"})
      .scalar("eps", DType::f32, "1e-5")
      .reference(std::move(reference));
  return b;
}

constexpr const char* ref_source = R"(template <typename T>
__global__ void softmax_ref(const T* __restrict__ x, T* __restrict__ y, int R, int C) {}
template <typename T>
__global__ void scale_ref(const T* x, T* y, int n, float eps) {}
)";

TEST(Signatures, MatchingLaunchIsClean) {
  auto b = base_problem(ref_source);
  b.launch("softmax_ref<T>", {"x", "y", "R", "C"})
      .launch("scale_ref", {"x", "y", "R * C", "eps"});
  const Problem p = b.build();
  EXPECT_EQ(render(check_launch_signatures(p, p.reference)), std::vector<std::string>{});
}

TEST(Signatures, WrongArgumentCount) {
  auto b = base_problem(ref_source);
  b.launch("softmax_ref<T>", {"x", "y", "R"});
  const Problem p = b.build();
  EXPECT_EQ(render(check_launch_signatures(p, p.reference)),
            (std::vector<std::string>{"reference.launch[0].args: the launch gives 3 arguments, "
                                      "kernel 'softmax_ref' takes 4 parameters (x, y, R, C)"}));
}

TEST(Signatures, PointerVersusScalar) {
  auto b = base_problem(ref_source);
  b.launch("softmax_ref<T>", {"x", "R", "y", "C"})
      .launch("scale_ref<T>", {"x", "ceil_div(R, 2)", "eps", "eps"});
  const Problem p = b.build();
  EXPECT_EQ(
      render(check_launch_signatures(p, p.reference)),
      (std::vector<std::string>{
          "reference.launch[0].args[1]: argument 1 'R' is a dim, but parameter 1 'y' (T*) of "
          "'softmax_ref' is a pointer",
          "reference.launch[0].args[2]: argument 2 'y' is a tensor, but parameter 2 'R' (int) "
          "of 'softmax_ref' is not a pointer",
          "reference.launch[1].args[1]: argument 1 'ceil_div(R, 2)' is an expression, but "
          "parameter 1 'y' (T*) of 'scale_ref' is a pointer",
      }));
}

TEST(Signatures, ScalarToPointerIsAnError) {
  auto b = base_problem(ref_source);
  b.launch("scale_ref<T>", {"eps", "y", "R", "eps"});
  const Problem p = b.build();
  const auto diags = check_launch_signatures(p, p.reference);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].message,
            "argument 0 'eps' is a scalar, but parameter 0 'x' (const T*) of 'scale_ref' is a "
            "pointer");
  EXPECT_EQ(diags[0].where.file, "problem.toml");
}

TEST(Signatures, MissingKernelListsTheDefinedOnes) {
  auto b = base_problem(ref_source);
  b.launch("softmax<T>", {"x", "y", "R", "C"});
  const Problem p = b.build();
  EXPECT_EQ(render(check_launch_signatures(p, p.reference)),
            (std::vector<std::string>{"reference.launch[0].kernel: kernel 'softmax' is not "
                                      "defined in reference.cu; kernels defined: softmax_ref, "
                                      "scale_ref"}));
}

TEST(Signatures, DeviceFunctionsAreNotKernels) {
  auto b = base_problem("__device__ void helper(float* x) {}\n");
  b.launch("helper", {"x"});
  const Problem p = b.build();
  EXPECT_EQ(render(check_launch_signatures(p, p.reference)),
            (std::vector<std::string>{"reference.launch[0].kernel: kernel 'helper' is not "
                                      "defined in reference.cu: it defines no __global__ "
                                      "function"}));
}

TEST(Signatures, ReferenceMayLeaveItsOneTemplateParameterBare) {
  auto b = base_problem(ref_source);
  b.launch("softmax_ref", {"x", "y", "R", "C"});
  const Problem p = b.build();
  EXPECT_TRUE(check_launch_signatures(p, p.reference).empty());
}

constexpr const char* candidate_source = R"(template <int ROWS, typename Acc = float>
__global__ void rows(const float* x, float* y, int R, int C) {}
template <int A, int B>
__global__ void two(const float* x, float* y, int R, int C) {}
__global__ void plain(const float* x, float* y, int R, int C) {}
extern "C" __global__ void c_kernel(const float* x, float* y, float* partial, int n) {}
__global__ void wrong_type(const double* x, float* y, int R, int C) {}
)";

KernelSource candidate(std::vector<LaunchSpec> launches) {
  KernelSource src;
  src.path = "candidate.cu";
  src.text = candidate_source;
  src.launches = std::move(launches);
  return src;
}

LaunchSpec launch(std::string kernel, std::vector<std::string> args, std::size_t index) {
  LaunchSpec l = ProblemBuilder::make_launch(std::move(kernel), std::move(args), {"1"}, {"128"},
                                             index);
  l.where.file = "candidate.cu";
  l.where.field = fmt::format("launch[{}]", index);
  return l;
}

TEST(Signatures, TemplateArgumentCounts) {
  const Problem p = base_problem(ref_source).build();
  const std::vector<std::string> args{"x", "y", "R", "C"};
  const auto diags = check_launch_signatures(p, candidate({
                                                    launch("rows<4>", args, 0),
                                                    launch("rows<4, double>", args, 1),
                                                    launch("rows", args, 2),
                                                    launch("rows<4, float, 2>", args, 3),
                                                    launch("two<1>", args, 4),
                                                    launch("plain<4>", args, 5),
                                                    launch("two<1, (2 > 1)>", args, 6),
                                                }));
  EXPECT_EQ(render(diags),
            (std::vector<std::string>{
                "launch[2].kernel: kernel 'rows' takes 1 to 2 template arguments <ROWS, Acc>, "
                "the launch 'rows' gives 0",
                "launch[3].kernel: kernel 'rows' takes 1 to 2 template arguments <ROWS, Acc>, "
                "the launch 'rows<4, float, 2>' gives 3",
                "launch[4].kernel: kernel 'two' takes 2 template arguments <A, B>, the launch "
                "'two<1>' gives 1",
                "launch[5].kernel: kernel 'plain' is not a template, but the launch 'plain<4>' "
                "gives template arguments",
            }));
}

TEST(Signatures, CandidateMayNotLeaveATemplateBare) {
  const Problem p = base_problem(R"(template <typename T>
__global__ void k(const T* x, T* y, int R, int C) {}
)").build();
  KernelSource src;
  src.path = "candidate.cu";
  src.text = p.reference.text;
  src.launches = {launch("k", {"x", "y", "R", "C"}, 0)};
  const auto diags = check_launch_signatures(p, src);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].message,
            "kernel 'k' takes 1 template argument <T>, the launch 'k' gives 0");
}

TEST(Signatures, ExternCKernelsAndScratch) {
  const Problem p = base_problem(ref_source).build();
  ScratchSpec partial;
  partial.name = "partial";
  partial.dtype = DType::f32;
  const auto src = candidate({launch("c_kernel", {"x", "y", "partial", "R * C"}, 0)});
  EXPECT_TRUE(check_launch_signatures(p, src, {partial}).empty());
  // Without the scratch declaration `partial` is just an unknown name, not a tensor.
  const auto diags = check_launch_signatures(p, src);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].where.field, "launch[0].args[2]");
}

TEST(Signatures, SpelledElementTypeMustMatchTheDtype) {
  const Problem p = base_problem(ref_source).build();
  const auto diags =
      check_launch_signatures(p, candidate({launch("wrong_type", {"x", "y", "R", "C"}, 0)}));
  EXPECT_EQ(render(diags),
            (std::vector<std::string>{"launch[0].args[0]: tensor 'x' is f32 (float), but "
                                      "parameter 0 'x' (const double*) of 'wrong_type' points "
                                      "to double"}));
}

TEST(Signatures, InvalidArgumentExpression) {
  auto b = base_problem(ref_source);
  b.launch("softmax_ref<T>", {"x", "y", "R +", "C"});
  const Problem p = b.build();
  const auto diags = check_launch_signatures(p, p.reference);
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_NE(diags[0].message.find("argument 'R +' is neither"), std::string::npos)
      << diags[0].message;
}

TEST(Signatures, DefaultsWithComparisonsAndNestedTemplates) {
  const Problem p = base_problem(ref_source).build();
  KernelSource src;
  src.path = "candidate.cu";
  // (2 > 1) last: the lexer's find_functions loses the kernel when a parenthesised `>` is
  // followed by further template parameters (reported to the lexer's owner).
  src.text = R"(template <int A, class U = Pair<Pair<int, int>>, int D = 3, bool B = (2 > 1)>
__global__ void k(const float* x, float* y, int R, int C) {}
)";
  const std::vector<std::string> args{"x", "y", "R", "C"};
  src.launches = {launch("k<1>", args, 0), launch("k<1, int, 4, (2 > 1)>", args, 1),
                  launch("k<>", args, 2)};
  EXPECT_EQ(render(check_launch_signatures(p, src)),
            (std::vector<std::string>{"launch[2].kernel: kernel 'k' takes 1 to 4 template "
                                      "arguments <A, U, D, B>, the launch 'k<>' gives 0"}));
}

}  // namespace
}  // namespace kj
