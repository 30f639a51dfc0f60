// Tests of kj::lex::find_functions on realistic kernel sources: execution spaces, templates,
// extern "C" in both forms, qualifiers and launch bounds, multi-line signatures, prototypes,
// __device__ variables that are not functions, scopes, and the normalised parameter types that
// kjudge trusts for extern "C" kernels. Body spans are checked against the exact bytes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kjudge/lex.hpp"

namespace kj::lex {
namespace {

constexpr std::size_t npos = std::string_view::npos;

std::vector<Function> functions(std::string_view src) {
  return find_functions(src, tokenize(src));
}

// The body of f as text, from its `{` to its `}`.
std::string_view body(std::string_view src, const Function& f) {
  return src.substr(f.body_begin, f.body_end - f.body_begin);
}

void expect_param(const Parameter& p, std::string_view type, std::string_view name,
                  bool is_pointer) {
  EXPECT_EQ(p.type, type);
  EXPECT_EQ(p.name, name);
  EXPECT_EQ(p.is_pointer, is_pointer) << p.type << " " << p.name;
}

TEST(FindFunctions, PlainKernelWithExactSpans) {
  std::string_view src =
      "#include <cuda_fp16.h>\n"
      "// a kernel\n"
      "__global__ void scale(const float* __restrict__ x, float* __restrict__ y, int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) { y[i] = 2.0f * x[i]; }\n"
      "}\n"
      "int after;\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  const Function& f = fs[0];
  EXPECT_EQ(f.kind, FunctionKind::global);
  EXPECT_EQ(f.name, "scale");
  EXPECT_EQ(f.qualified_name, "scale");
  EXPECT_FALSE(f.is_template);
  EXPECT_FALSE(f.extern_c);
  EXPECT_TRUE(f.template_params.empty());
  EXPECT_EQ(f.line, 3);
  EXPECT_EQ(f.decl_offset, src.find("__global__"));
  EXPECT_EQ(f.body_begin, src.find("{\n  int i"));
  EXPECT_EQ(f.body_end, src.find("\nint after"));
  EXPECT_EQ(body(src, f).front(), '{');
  EXPECT_EQ(body(src, f).back(), '}');
  ASSERT_EQ(f.params.size(), 3u);
  expect_param(f.params[0], "const float*", "x", true);
  expect_param(f.params[1], "float*", "y", true);
  expect_param(f.params[2], "int", "n", false);
}

TEST(FindFunctions, TemplateKernel) {
  std::string_view src =
      "template <int ROWS, typename T, class Acc = kj::acc_t<T>, typename... Rest>\n"
      "__global__ void softmax_rows(const T* __restrict__ x, T* y, int R, int C) { }\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_TRUE(fs[0].is_template);
  EXPECT_EQ(fs[0].template_params, (std::vector<std::string>{"ROWS", "T", "Acc", "Rest"}));
  EXPECT_EQ(fs[0].decl_offset, 0u);
  EXPECT_EQ(fs[0].line, 2);
  ASSERT_EQ(fs[0].params.size(), 4u);
  expect_param(fs[0].params[0], "const T*", "x", true);
  expect_param(fs[0].params[1], "T*", "y", true);
  EXPECT_EQ(body(src, fs[0]), "{ }");
}

TEST(FindFunctions, TemplateParameterListEndingInShift) {
  std::string_view src = "template <typename T, typename V = Vec<Pair<T, int>>>\n"
                         "__device__ T first(V v) { return v.a; }";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].template_params, (std::vector<std::string>{"T", "V"}));
  EXPECT_EQ(fs[0].name, "first");
  expect_param(fs[0].params[0], "V", "v", false);
}

TEST(FindFunctions, ExecutionSpaces) {
  std::string_view src = "__device__ float a(float v) { return v; }\n"
                         "__host__ __device__ float b(float v) { return v; }\n"
                         "__device__ __host__ inline float c(float v) { return v; }\n"
                         "__host__ float d(float v) { return v; }\n"
                         "float e(float v) { return v; }\n"
                         "static __global__ void f() {}\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 4u);
  EXPECT_EQ(fs[0].name, "a");
  EXPECT_EQ(fs[0].kind, FunctionKind::device);
  EXPECT_EQ(fs[1].name, "b");
  EXPECT_EQ(fs[1].kind, FunctionKind::host_device);
  EXPECT_EQ(fs[2].name, "c");
  EXPECT_EQ(fs[2].kind, FunctionKind::host_device);
  EXPECT_EQ(fs[3].name, "f");
  EXPECT_EQ(fs[3].kind, FunctionKind::global);
  EXPECT_TRUE(fs[3].params.empty());
  EXPECT_EQ(fs[3].decl_offset, src.find("static"));
}

TEST(FindFunctions, ExternCBlockAndSingleDeclaration) {
  std::string_view src = "extern \"C\" {\n"
                         "__global__ void add(float* a, const float* b, int n) { a[0] += b[0]; }\n"
                         "__global__ void sub(float* a, int n);\n"
                         "}\n"
                         "extern \"C\" __global__ void mul(float* a) { }\n"
                         "extern \"C++\" { __global__ void cpp_linkage(int) {} }\n"
                         "__global__ void plain() {}\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 5u);
  EXPECT_EQ(fs[0].name, "add");
  EXPECT_TRUE(fs[0].extern_c);
  EXPECT_EQ(fs[0].line, 2);
  EXPECT_EQ(body(src, fs[0]), "{ a[0] += b[0]; }");
  EXPECT_EQ(fs[1].name, "sub");
  EXPECT_TRUE(fs[1].extern_c);
  EXPECT_EQ(fs[1].body_begin, npos);
  EXPECT_EQ(fs[1].body_end, npos);
  EXPECT_EQ(fs[2].name, "mul");
  EXPECT_TRUE(fs[2].extern_c);
  EXPECT_EQ(fs[2].decl_offset, src.find("extern \"C\" __global__"));
  EXPECT_EQ(fs[3].name, "cpp_linkage");
  EXPECT_FALSE(fs[3].extern_c);
  ASSERT_EQ(fs[3].params.size(), 1u);
  expect_param(fs[3].params[0], "int", "", false);
  EXPECT_EQ(fs[4].name, "plain");
  EXPECT_FALSE(fs[4].extern_c);
}

TEST(FindFunctions, QualifiersLaunchBoundsAndAttributes) {
  std::string_view src =
      "static __global__ void __launch_bounds__(256, 2) tuned(float* x) { x[0] = 0; }\n"
      "__device__ __forceinline__ float fast(float v) { return v; }\n"
      "__device__ __noinline__ float slow(float v) { return v; }\n"
      "[[nodiscard]] __device__ inline int attr([[maybe_unused]] int unused) { return 1; }\n"
      "__global__ void __launch_bounds__(128) __maxnreg__(32) bounded(__grid_constant__ const "
      "Params p) {}\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 5u);
  EXPECT_EQ(fs[0].name, "tuned");
  EXPECT_EQ(fs[0].kind, FunctionKind::global);
  EXPECT_EQ(body(src, fs[0]), "{ x[0] = 0; }");
  EXPECT_EQ(fs[1].name, "fast");
  EXPECT_EQ(fs[2].name, "slow");
  EXPECT_EQ(fs[3].name, "attr");
  EXPECT_EQ(fs[3].decl_offset, src.find("[[nodiscard]]"));
  expect_param(fs[3].params[0], "int", "unused", false);
  EXPECT_EQ(fs[4].name, "bounded");
  expect_param(fs[4].params[0], "const Params", "p", false);
}

TEST(FindFunctions, MultiLineSignatureWithDefaults) {
  std::string_view src = "\n"
                         "template <typename T>\n"
                         "__device__\n"
                         "void\n"
                         "accumulate(\n"
                         "    T* out,              // destination\n"
                         "    const T* in,\n"
                         "    int n = 4,\n"
                         "    Vec<int, 2> stride = {1, 2},\n"
                         "    float scale = max(1.0f, 2.0f))\n"
                         "{\n"
                         "  out[0] = in[0];\n"
                         "}\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].name, "accumulate");
  EXPECT_EQ(fs[0].line, 5);
  EXPECT_EQ(fs[0].decl_offset, 1u);
  ASSERT_EQ(fs[0].params.size(), 5u);
  expect_param(fs[0].params[0], "T*", "out", true);
  expect_param(fs[0].params[1], "const T*", "in", true);
  expect_param(fs[0].params[2], "int", "n", false);
  expect_param(fs[0].params[3], "Vec<int, 2>", "stride", false);
  expect_param(fs[0].params[4], "float", "scale", false);
  EXPECT_EQ(body(src, fs[0]), "{\n  out[0] = in[0];\n}");
}

TEST(FindFunctions, ParameterTypesAreNormalised) {
  std::string_view src =
      "__global__ void k(const kj::acc_t<T>* x, Tensor<float, 2> t, A<B<int>> nested,\n"
      "                  void (*fn)(int, float), float arr[], float grid[][4], int,\n"
      "                  unsigned long long count, float* __restrict__ const fixed,\n"
      "                  const float   *  spaced, float& ref, std::size_t, const T,\n"
      "                  Map<int, float*> m, float (&fixed_arr)[4], volatile int* v,\n"
      "                  Wrap<float[4]> w, Fn<void (*)(int)> cb, ...) {}\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  const auto& p = fs[0].params;
  ASSERT_EQ(p.size(), 19u);
  expect_param(p[0], "const kj::acc_t<T>*", "x", true);
  expect_param(p[1], "Tensor<float, 2>", "t", false);
  expect_param(p[2], "A<B<int>>", "nested", false);
  expect_param(p[3], "void(*)(int, float)", "fn", true);
  expect_param(p[4], "float*", "arr", true);
  expect_param(p[5], "float(*)[4]", "grid", true);
  expect_param(p[6], "int", "", false);
  expect_param(p[7], "unsigned long long", "count", false);
  expect_param(p[8], "float* const", "fixed", true);
  expect_param(p[9], "const float*", "spaced", true);
  expect_param(p[10], "float&", "ref", false);
  expect_param(p[11], "std::size_t", "", false);
  expect_param(p[12], "const T", "", false);
  expect_param(p[13], "Map<int, float*>", "m", false);
  expect_param(p[14], "float(&)[4]", "fixed_arr", false);
  expect_param(p[15], "volatile int*", "v", true);
  expect_param(p[16], "Wrap<float[4]>", "w", false);
  expect_param(p[17], "Fn<void(*)(int)>", "cb", false);
  expect_param(p[18], "...", "", false);
}

TEST(FindFunctions, VoidParameterListIsEmpty) {
  std::vector<Function> fs = functions("__device__ int zero(void) { return 0; }");
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_TRUE(fs[0].params.empty());
}

TEST(FindFunctions, PrototypesHaveNoBody) {
  std::string_view src = "__device__ float helper(float);\n"
                         "template <typename T> __global__ void k(T* x);\n"
                         "__device__ float helper(float v) { return v; }\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 3u);
  EXPECT_EQ(fs[0].body_begin, npos);
  EXPECT_EQ(fs[0].body_end, npos);
  expect_param(fs[0].params[0], "float", "", false);
  EXPECT_EQ(fs[1].name, "k");
  EXPECT_EQ(fs[1].body_begin, npos);
  EXPECT_EQ(fs[1].template_params, (std::vector<std::string>{"T"}));
  EXPECT_EQ(fs[2].name, "helper");
  EXPECT_EQ(body(src, fs[2]), "{ return v; }");
  EXPECT_EQ(fs[2].line, 3);
}

TEST(FindFunctions, DeviceVariablesAreNotFunctions) {
  std::string_view src = "__device__ int counter;\n"
                         "__device__ float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};\n"
                         "__device__ __constant__ float coeffs[16];\n"
                         "extern __device__ int shared_flag;\n"
                         "__device__ int direct(0);\n"
                         "__device__ int computed = compute(3);\n"
                         "__device__ Pair braced{1, 2};\n"
                         "__device__ auto lambda = [](int v) { return v; };\n"
                         "__device__ int (*fp)(int) = nullptr;\n"
                         "__global__ void real(int* out) { out[0] = counter; }\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].name, "real");
  EXPECT_EQ(fs[0].line, 10);
  EXPECT_EQ(body(src, fs[0]), "{ out[0] = counter; }");
}

TEST(FindFunctions, NamespacesAndStructs) {
  std::string_view src = "namespace kj {\n"
                         "namespace detail {\n"
                         "__device__ float inner(float v) { return v; }\n"
                         "}  // namespace detail\n"
                         "template <typename T>\n"
                         "struct Acc : Base<T> {\n"
                         "  T v;\n"
                         "  __device__ Acc() : v(0), w{1} { }\n"
                         "  __device__ T get() const { return v; }\n"
                         "public:\n"
                         "  __host__ __device__ static T twice(T x) { return x + x; }\n"
                         "  int w = {2};\n"
                         "};\n"
                         "}  // namespace kj\n"
                         "namespace a::b { __global__ void deep() {} }\n"
                         "namespace { __global__ void hidden() {} }\n"
                         "__device__ float kj::detail::S::out_of_class(float x) { return x; }\n"
                         "__global__ void top() {}\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 8u);
  EXPECT_EQ(fs[0].qualified_name, "kj::detail::inner");
  EXPECT_EQ(fs[0].name, "inner");
  EXPECT_EQ(fs[1].name, "Acc");
  EXPECT_EQ(fs[1].qualified_name, "kj::Acc::Acc");
  EXPECT_EQ(body(src, fs[1]), "{ }");
  EXPECT_TRUE(fs[1].params.empty());
  EXPECT_EQ(fs[2].qualified_name, "kj::Acc::get");
  EXPECT_EQ(body(src, fs[2]), "{ return v; }");
  EXPECT_EQ(fs[3].qualified_name, "kj::Acc::twice");
  EXPECT_EQ(fs[3].kind, FunctionKind::host_device);
  EXPECT_EQ(fs[4].qualified_name, "a::b::deep");
  EXPECT_EQ(fs[5].qualified_name, "hidden");
  EXPECT_EQ(fs[6].name, "out_of_class");
  EXPECT_EQ(fs[6].qualified_name, "kj::detail::S::out_of_class");
  EXPECT_EQ(fs[7].qualified_name, "top");
  EXPECT_EQ(fs[7].line, 18);
}

TEST(FindFunctions, BodiesAreSkippedWholeAndSpansExact) {
  std::string_view src = "__global__ void outer(float* x) {\n"
                         "  auto f = [] __device__ (int v) { return v; };\n"
                         "  struct Local { __device__ void m() {} };\n"
                         "  const char* s = \"}\"; char c = '}'; // }\n"
                         "  /* } */ if (x) { x[0] = 1; }\n"
                         "}\n"
                         "void host_launch(float* x) { outer<<<1, 32>>>(x); }\n"
                         "__device__ float after(float v) { return v; }\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 2u);
  EXPECT_EQ(fs[0].name, "outer");
  EXPECT_EQ(fs[0].body_begin, src.find('{'));
  EXPECT_EQ(fs[0].body_end, src.find("\nvoid host_launch"));
  EXPECT_EQ(fs[1].name, "after");
  EXPECT_EQ(fs[1].line, 8);
  EXPECT_EQ(body(src, fs[1]), "{ return v; }");
}

TEST(FindFunctions, OperatorsAndExplicitSpecialisations) {
  std::string_view src = "__device__ inline float2 operator+(float2 a, float2 b) { return a; }\n"
                         "struct F { __device__ float operator()(float v) const { return v; }\n"
                         "           __device__ operator float() const { return 0; } };\n"
                         "template <> __global__ void k<float>(float* x) { }\n"
                         "template __global__ void k<double>(double* x);\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 5u);
  EXPECT_EQ(fs[0].name, "operator+");
  ASSERT_EQ(fs[0].params.size(), 2u);
  expect_param(fs[0].params[1], "float2", "b", false);
  EXPECT_EQ(fs[1].name, "operator()");
  EXPECT_EQ(fs[1].qualified_name, "F::operator()");
  expect_param(fs[1].params[0], "float", "v", false);
  EXPECT_EQ(fs[2].name, "operator float");
  EXPECT_EQ(fs[3].name, "k");
  EXPECT_TRUE(fs[3].is_template);
  EXPECT_TRUE(fs[3].template_params.empty());
  expect_param(fs[3].params[0], "float*", "x", true);
  EXPECT_EQ(fs[4].name, "k");
  EXPECT_TRUE(fs[4].is_template);
  EXPECT_EQ(fs[4].body_begin, npos);
}

TEST(FindFunctions, MacroCallBeforeAKernel) {
  std::string_view src = "KJ_REGISTER(scale)\n"
                         "__global__ void scale(float* x) { }\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].name, "scale");
  EXPECT_EQ(fs[0].decl_offset, src.find("__global__"));
}

TEST(FindFunctions, EnumsAndTypedefsAreSkipped) {
  std::string_view src = "enum class Mode : int { a, b };\n"
                         "typedef struct { int x; } Plain;\n"
                         "using F = float;\n"
                         "static_assert(sizeof(F) == 4, \"f\");\n"
                         "__global__ void k(Mode m) {}\n";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].name, "k");
  expect_param(fs[0].params[0], "Mode", "m", false);
}

TEST(FindFunctions, UnterminatedBodyRunsToTheEnd) {
  std::string_view src = "__global__ void k(int n) { if (n) {";
  std::vector<Function> fs = functions(src);
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].body_begin, src.find('{'));
  EXPECT_EQ(fs[0].body_end, src.size());
}

TEST(FindFunctions, GarbageDoesNotCrash) {
  for (std::string_view src :
       {"__global__", "__global__ void (", "template <", "}}}{{{", "__device__ x(", "extern \"C\"",
        "operator", "__global__ void k>(){", "namespace {", "struct S { __device__ void f("}) {
    std::vector<Function> fs = functions(src);
    for (const Function& f : fs) {
      EXPECT_LE(f.decl_offset, src.size());
      if (f.body_begin != npos) {
        EXPECT_LT(f.body_begin, f.body_end) << src;
      }
    }
  }
  ASSERT_EQ(functions("__device__ x(").size(), 1u);  // an unclosed prototype
  EXPECT_EQ(functions("__device__ x(")[0].name, "x");
  EXPECT_EQ(functions("struct S { __device__ void f(").size(), 1u);
}

}  // namespace
}  // namespace kj::lex
