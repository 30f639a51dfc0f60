// The reference lint: each kind of finding with its line and column, and the look-alikes it must
// leave alone (comments, strings, identifiers containing an f, double literals, hex integers,
// member functions, host code).
#include <gtest/gtest.h>

#include "kjudge/validate.hpp"
#include "unit/validate/problem_builder.hpp"

namespace kj {
namespace {

std::vector<std::string> positions(const std::vector<Diagnostic>& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags) {
    out.push_back(fmt::format("{}:{} {}", d.where.line, d.where.column,
                              d.message.substr(0, d.message.find(' ', d.message.find('\'')))));
  }
  return out;
}

KernelSource source(std::string text) {
  KernelSource src;
  src.path = "reference.cu";
  src.text = std::move(text);
  return src;
}

constexpr const char* dirty = R"(template <typename T>
__global__ void k(const T* x, T* y, int n) {
  T a = 1.0f * x[0];
  T b = 2e-3F + expf(a);
  T c = 0x1p-3f + T(0x1f) + T(1e5) + T(1.0L);
  atomicAdd(y, a);
  T d = __shfl_down_sync(0xffffffffu, a, 1);
  y[0] = sqrtf(a) + __expf(b) + obj.expf(c) + d;
}
__device__ float helper() { return 1.5f; }
float host_fn() { return 1.0f + expf(1.0f); }
const char* s = "1.0f";
)";

TEST(Lint, EveryKindWithLineAndColumn) {
  const auto diags = lint_reference(source(dirty));
  EXPECT_EQ(positions(diags), (std::vector<std::string>{
                                  "3:9 f-suffixed literal '1.0f'",
                                  "4:9 f-suffixed literal '2e-3F'",
                                  "4:17 f32-only math function 'expf'",
                                  "5:9 f-suffixed literal '0x1p-3f'",
                                  "6:3 'atomicAdd'",
                                  "7:9 '__shfl_down_sync'",
                                  "8:10 f32-only math function 'sqrtf'",
                                  "8:21 f32-only intrinsic '__expf'",
                                  "10:36 f-suffixed literal '1.5f'",
                              }));
  for (const auto& d : diags) {
    EXPECT_EQ(d.severity, Diagnostic::Severity::error);
    EXPECT_EQ(d.where.file, "reference.cu");
  }
}

TEST(Lint, MessagesSayWhatToWrite) {
  const auto diags = lint_reference(source(dirty));
  ASSERT_GE(diags.size(), 6u);
  EXPECT_EQ(diags[0].message,
            "f-suffixed literal '1.0f' caps the golden at f32; write kj::c<T>(1.0)");
  EXPECT_EQ(diags[1].message,
            "f-suffixed literal '2e-3F' caps the golden at f32; write kj::c<T>(2e-3)");
  EXPECT_EQ(diags[3].message,
            "f-suffixed literal '0x1p-3f' caps the golden at f32; write kj::c<T>(0x1p-3)");
  EXPECT_NE(diags[2].message.find("caps the golden at f32"), std::string::npos);
  EXPECT_NE(diags[2].message.find("kj::exp"), std::string::npos) << diags[2].message;
  EXPECT_EQ(diags[4].message,
            "'atomicAdd' in the reference: references accumulate sequentially (docs/design.md); "
            "shuffle/atomic reductions change the yardstick");
  EXPECT_EQ(format_diagnostic(diags[0]),
            "reference.cu:3:9: error: f-suffixed literal '1.0f' caps the golden at f32; write "
            "kj::c<T>(1.0)");
}

TEST(Lint, CleanReferenceHasNoFindings) {
  const auto diags = lint_reference(source(test::clean_softmax_reference()));
  for (const auto& d : diags) ADD_FAILURE() << format_diagnostic(d);
}

TEST(Lint, LookAlikesAreNotFlagged) {
  const auto diags = lint_reference(source(R"(__global__ void k(float* buf, int n) {
  // 1.0f and expf(x) and atomicAdd(p, 1) in a comment
  /* __shfl_sync(m, v, 0) 2.5f */
  const char* s = "3.0f expf(";
  char c = 'f';
  int bf = 0x1f + 0xff + 0xFF + 10ul;
  double e = 1.0 + 1e5 + .5 + 1. + 0x1.8p3 + 2.0L + 1'000.5;
  float buff = buf[0];
  auto atomic_count = n;
  expf_table[0] = logf_x;
  atomicity(n);
}
)"));
  for (const auto& d : diags) ADD_FAILURE() << format_diagnostic(d);
}

TEST(Lint, MoreNarrowLiteralsAndIntrinsics) {
  const auto diags = lint_reference(source(R"(template <class T> __device__ T f(T x) {
  return x * .5f + 1.f + 1e-3f + 0x1.8p3F + __fdividef(x, x) + __fmul_rn(x, x) +
         atomicMax_block(p, 1) + __shfl_xor_sync(m, x, 1) + __reduce_add_sync(m, 1) +
         std::powf(x, 2) + 1.0bf16;
}
)"));
  EXPECT_EQ(positions(diags), (std::vector<std::string>{
                                  "2:14 f-suffixed literal '.5f'",
                                  "2:20 f-suffixed literal '1.f'",
                                  "2:26 f-suffixed literal '1e-3f'",
                                  "2:34 f-suffixed literal '0x1.8p3F'",
                                  "2:45 f32-only intrinsic '__fdividef'",
                                  "2:64 f32-only intrinsic '__fmul_rn'",
                                  "3:10 'atomicMax_block'",
                                  "3:34 '__shfl_xor_sync'",
                                  "3:61 '__reduce_add_sync'",
                                  "4:15 f32-only math function 'powf'",
                                  "4:28 f-suffixed literal '1.0bf16'",
                              }));
  EXPECT_NE(diags[10].message.find("caps the golden at bf16"), std::string::npos);
}

TEST(Lint, GoldenOnlyKernelsAreSkipped) {
  const auto src = source(R"(__global__ void golden_k(double* y) { y[0] = 1.0f; }
template <class T> __global__ void ref_k(T* y) { y[0] = 2.0f; }
)");
  const auto diags = lint_reference(src, {"golden_k"});
  EXPECT_EQ(positions(diags), (std::vector<std::string>{"2:57 f-suffixed literal '2.0f'"}));
}

TEST(Lint, UnterminatedCommentIsAnError) {
  const auto diags = lint_reference(source("__global__ void k() {}\n/* never closed"));
  ASSERT_EQ(diags.size(), 1u);
  EXPECT_EQ(diags[0].severity, Diagnostic::Severity::error);
  EXPECT_EQ(diags[0].where.line, 2);
}

}  // namespace
}  // namespace kj
