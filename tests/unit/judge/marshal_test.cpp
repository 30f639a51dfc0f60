// Launch-plan marshalling without a GPU: parameter types as the demangler and the lexer spell
// them, the exact-type rules (a tensor only to a pointer of its dtype, values that fit their
// parameter), every argument's bytes, repeats with `i`, the device's limits, and the reference's
// float role T.
#include <bit>
#include <cstring>

#include <gtest/gtest.h>

#include "launch/marshal.hpp"
#include "kjudge/spec.hpp"

namespace {

using namespace kj;
using namespace kj::judge;

const char* kProblem = R"X(
name = "marshal"
summary = "a problem for the marshalling tests"
[dims]
public = [{ R = 4, C = 8 }]
[[scalar]]
name = "eps"
dtype = "f32"
value = "1e-5"
[[scalar]]
name = "groups"
dtype = "i32"
value = 4
[[input]]
name = "x"
dtype = "f32"
shape = ["R", "C"]
[[input]]
name = "idx"
dtype = "i32"
shape = ["R"]
[[output]]
name = "y"
dtype = "f32"
shape = ["R", "C"]
[reference]
source = "reference.cu"
[[reference.launch]]
kernel = "ref<T>"
grid = [1]
block = [1]
args = ["x", "y", "R", "C"]
)X";

const char* kReference = R"X(
template <class T> __global__ void ref(const T* x, T* y, int R, int C) {}
)X";

Problem problem() {
  return parse_problem_text(kProblem, "/virtual", "problem.toml",
                            [](const std::filesystem::path&) -> std::optional<std::string> {
                              return std::string(kReference);
                            });
}

std::string candidate_text(const std::string& plan, const std::string& code) {
  return "/* kjudge\n" + plan + "*/\n" + code;
}

const char* kPlan = R"X([[launch]]
kernel = "k"
grid = ["ceil_div(R, 2)"]
block = [128]
args = ["x", "idx", "y", "eps", "groups", "R * C"]

[[launch]]
kernel = "fin"
grid = [1]
block = ["max(1, C / 2)"]
repeat = "3"
args = ["y", "i"]
)X";

const char* kCode = R"X(
__global__ void k(const float* x, const int* idx, float* y, float eps, int groups, long long n) {}
__global__ void fin(float* y, int i) {}
)X";

PlanKernel kernel(std::string lowered, std::vector<std::string> types,
                  std::vector<std::size_t> sizes = {}) {
  PlanKernel k;
  k.expression = lowered;
  k.lowered = std::move(lowered);
  for (const auto& t : types)
    k.params.push_back(parse_param_type(t));
  k.param_sizes = std::move(sizes);
  return k;
}

PlanContext context(const Problem& p, const Candidate* c = nullptr) {
  PlanContext ctx;
  ctx.owner = "candidate";
  for (const auto& in : p.inputs)
    ctx.tensors.push_back({in.name, in.dtype});
  for (const auto& out : p.outputs)
    ctx.tensors.push_back({out.name, out.dtype});
  if (c)
    for (const auto& s : c->scratch)
      ctx.tensors.push_back({s.name, s.dtype});
  ctx.scalars = p.scalars;
  return ctx;
}

DeviceInfo h200_like() {
  DeviceInfo d;
  d.max_threads_per_block = 1024;
  d.max_block = {1024, 1024, 64};
  d.max_grid = {2147483647, 65535, 65535};
  d.max_shared_per_block_optin = 232448;
  return d;
}

template <class T>
T value_of(const std::vector<std::byte>& bytes) {
  EXPECT_EQ(bytes.size(), sizeof(T));
  T v{};
  std::memcpy(&v, bytes.data(), sizeof v);
  return v;
}

std::string plan_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const PlanError& e) {
    return e.what();
  }
  return "(no PlanError)";
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- parameter types ----------------------------------------------------------------------

TEST(ParamType, DemangledSpellings) {
  ParamType p = parse_param_type("float const*");
  EXPECT_TRUE(p.pointer());
  EXPECT_EQ(p.element, "float");
  EXPECT_EQ(p.value, ValueType::f32);
  p = parse_param_type("__half*");
  EXPECT_EQ(p.value, ValueType::f16);
  p = parse_param_type("__nv_bfloat16 const*");
  EXPECT_EQ(p.value, ValueType::bf16);
  p = parse_param_type("unsigned int");
  EXPECT_FALSE(p.pointer());
  EXPECT_EQ(p.value, ValueType::u32);
  p = parse_param_type("long long");
  EXPECT_EQ(p.value, ValueType::i64);
  EXPECT_EQ(p.element, "long long");
  EXPECT_EQ(parse_param_type("long").value, ValueType::i64);
  EXPECT_EQ(parse_param_type("unsigned long").value, ValueType::u64);
  EXPECT_EQ(parse_param_type("signed char").value, ValueType::i8);
  EXPECT_EQ(parse_param_type("unsigned char const*").value, ValueType::u8);
  EXPECT_EQ(parse_param_type("bool").value, ValueType::boolean);
  EXPECT_EQ(parse_param_type("double").value, ValueType::f64);
  EXPECT_EQ(parse_param_type("__nv_fp8_e4m3*").value, ValueType::fp8e4m3);
  p = parse_param_type("float4 const*");
  EXPECT_EQ(p.value, ValueType::f32);
  EXPECT_EQ(p.lanes, 4);
  EXPECT_EQ(parse_param_type("float**").pointer_depth, 2);
  EXPECT_FALSE(parse_param_type("float**").pointer());
  EXPECT_TRUE(parse_param_type("float&").reference);
  // The audit's rounded references: one float in memory, whatever their format.
  p = parse_param_type("kj::rounded<float, kj::bf16> const*");
  EXPECT_TRUE(p.pointer());
  EXPECT_EQ(p.value, ValueType::f32);
  EXPECT_EQ(p.text, "kj::rounded<float, kj::bf16> const*");
  EXPECT_EQ(parse_param_type("kj::rounded<float, kj::tf32>").value, ValueType::f32);
  p = parse_param_type("kj::storage_traits<kj::rounded<float, kj::f16> >::acc*");
  EXPECT_EQ(p.value, ValueType::f32);
  EXPECT_EQ(p.element, "float");
  EXPECT_EQ(parse_param_type("kj::rounded<double, kj::bf16>*").value, ValueType::unknown);
  // kj::acc_t<T>, as a template instance's lowered name spells it: T's accumulator.
  p = parse_param_type("kj::storage_traits<__nv_bfloat16>::acc*");
  EXPECT_TRUE(p.pointer());
  EXPECT_EQ(p.value, ValueType::f32);
  EXPECT_EQ(p.element, "float");
  EXPECT_EQ(parse_param_type("kj::storage_traits<__half>::acc const*").value, ValueType::f32);
  EXPECT_EQ(parse_param_type("kj::storage_traits<float>::acc*").value, ValueType::f32);
  EXPECT_EQ(parse_param_type("::kj::storage_traits<double>::acc").value, ValueType::f64);
  // Types without a plain accumulator stay unknown, so a plan cannot bind them to a tensor.
  EXPECT_EQ(parse_param_type("kj::storage_traits<int>::acc*").value, ValueType::unknown);
  EXPECT_EQ(
      parse_param_type("kj::storage_traits<kj::rounded<float, kj::bf16_format>>::acc*").value,
      ValueType::unknown);
  p = parse_param_type("Params<4>");
  EXPECT_EQ(p.value, ValueType::unknown);
  EXPECT_EQ(p.element, "Params<4>");
}

TEST(ParamType, LexerSpellings) {
  EXPECT_EQ(parse_param_type("const float*").value, ValueType::f32);
  EXPECT_EQ(parse_param_type("const float* __restrict__").element, "float");
  EXPECT_EQ(parse_param_type("uint32_t").value, ValueType::u32);
  EXPECT_EQ(parse_param_type("std::int64_t").value, ValueType::i64);
  EXPECT_EQ(parse_param_type("size_t").value, ValueType::u64);
  EXPECT_EQ(parse_param_type("long unsigned int").value, ValueType::u64);
  EXPECT_EQ(parse_param_type("unsigned").value, ValueType::u32);
  EXPECT_EQ(parse_param_type("short int").value, ValueType::i16);
  EXPECT_EQ(parse_param_type("half*").value, ValueType::f16);
  EXPECT_EQ(parse_param_type("volatile int*").value, ValueType::i32);
  EXPECT_EQ(parse_param_type("::__half const*").value, ValueType::f16);
  EXPECT_EQ(parse_param_type("const __grid_constant__ int").value, ValueType::i32);
}

TEST(ParamType, PointerAccepts) {
  EXPECT_TRUE(pointer_accepts(parse_param_type("float const*"), DType::f32));
  EXPECT_TRUE(pointer_accepts(parse_param_type("float4*"), DType::f32));
  EXPECT_TRUE(pointer_accepts(parse_param_type("__half2*"), DType::f16));
  EXPECT_TRUE(pointer_accepts(parse_param_type("long*"), DType::i64));
  EXPECT_TRUE(pointer_accepts(parse_param_type("long long*"), DType::i64));
  EXPECT_TRUE(pointer_accepts(parse_param_type("char*"), DType::i8));
  EXPECT_TRUE(pointer_accepts(parse_param_type("bool*"), DType::boolean));
  EXPECT_FALSE(pointer_accepts(parse_param_type("double*"), DType::f32));
  EXPECT_FALSE(pointer_accepts(parse_param_type("unsigned int*"), DType::i32));
  EXPECT_FALSE(pointer_accepts(parse_param_type("void*"), DType::f32));
  EXPECT_FALSE(pointer_accepts(parse_param_type("float"), DType::f32));
  EXPECT_FALSE(pointer_accepts(parse_param_type("float**"), DType::f32));
  EXPECT_FALSE(pointer_accepts(parse_param_type("__nv_bfloat16*"), DType::f16));
}

// ---- values -------------------------------------------------------------------------------

TEST(Encode, Integers) {
  EXPECT_EQ(value_of<int>(encode_integer(ValueType::i32, -7, "a")), -7);
  EXPECT_EQ(value_of<long long>(encode_integer(ValueType::i64, 5000000000, "a")), 5000000000);
  EXPECT_EQ(value_of<unsigned char>(encode_integer(ValueType::u8, 255, "a")), 255);
  EXPECT_EQ(value_of<unsigned char>(encode_integer(ValueType::boolean, 1, "a")), 1);
  const std::string e = plan_error([] { (void)encode_integer(ValueType::i32, 5000000000, "arg"); });
  EXPECT_TRUE(contains(e, "arg: passes 5000000000 to a int32 parameter")) << e;
  EXPECT_TRUE(contains(e, "2147483647")) << e;
  EXPECT_TRUE(
      contains(plan_error([] { (void)encode_integer(ValueType::u8, -1, "a"); }), "passes -1"));
  EXPECT_TRUE(contains(plan_error([] { (void)encode_integer(ValueType::u32, 1ll << 32, "a"); }),
                       "range 0 to 4294967295"));
  EXPECT_TRUE(contains(plan_error([] { (void)encode_integer(ValueType::boolean, 2, "a"); }),
                       "range 0 to 1"));
  EXPECT_EQ(value_of<unsigned long long>(encode_integer(ValueType::u64, 1ll << 62, "a")),
            1ull << 62);
}

TEST(Encode, IntegersToFloatParametersMustBeExact) {
  EXPECT_EQ(value_of<float>(encode_integer(ValueType::f32, 16777216, "a")), 16777216.0f);
  EXPECT_TRUE(contains(plan_error([] { (void)encode_integer(ValueType::f32, 16777217, "a"); }),
                       "not exact"));
  EXPECT_EQ(value_of<std::uint16_t>(encode_integer(ValueType::f16, 2048, "a")), 0x6800);
  EXPECT_TRUE(
      contains(plan_error([] { (void)encode_integer(ValueType::f16, 2049, "a"); }), "not exact"));
  EXPECT_EQ(value_of<double>(encode_integer(ValueType::f64, -3, "a")), -3.0);
}

TEST(Encode, Floats) {
  EXPECT_EQ(value_of<float>(encode_float(ValueType::f32, 0.1, "a")), 0.1f);
  EXPECT_EQ(value_of<double>(encode_float(ValueType::f64, 0.1, "a")), 0.1);
  EXPECT_EQ(value_of<std::uint16_t>(encode_float(ValueType::f16, 1.0, "a")), 0x3C00);
  EXPECT_EQ(value_of<std::uint16_t>(encode_float(ValueType::bf16, 1.0, "a")), 0x3F80);
  EXPECT_TRUE(contains(plan_error([] { (void)encode_float(ValueType::f16, 1e6, "a"); }),
                       "overflows a float16"));
  EXPECT_TRUE(contains(plan_error([] { (void)encode_float(ValueType::i32, 1.0, "a"); }),
                       "floating-point value for a int32"));
}

// ---- plans ---------------------------------------------------------------------------------

TEST(Marshal, EveryArgumentAsItsParameter) {
  const Problem p = problem();
  const Candidate c = parse_candidate(candidate_text(kPlan, kCode), "cand.cu", p);
  const PlanKernel k =
      kernel("k", {"float const*", "int const*", "float*", "float", "int", "long long"},
             {8, 8, 8, 4, 4, 8});
  const PlanKernel fin = kernel("fin", {"float*", "int"}, {8, 4});
  const std::vector<const PlanKernel*> kernels{&k, &fin};
  PlanContext ctx = context(p, &c);
  ctx.device = h200_like();
  check_plan_types(c.source.launches, kernels, ctx);
  const auto launches =
      marshal_launches(c.source.launches, kernels, ctx, shape_env(p, {{"R", 4}, {"C", 8}}));
  ASSERT_EQ(launches.size(), 4u); // k, then fin three times

  const LaunchRequest& l = launches[0];
  EXPECT_EQ(l.lowered, "k");
  EXPECT_EQ(l.dims.grid, (std::array<unsigned, 3>{2, 1, 1}));
  EXPECT_EQ(l.dims.block, (std::array<unsigned, 3>{128, 1, 1}));
  EXPECT_EQ(l.dims.shared_bytes, 0u);
  ASSERT_EQ(l.args.size(), 6u);
  EXPECT_EQ(l.args[0].kind, ArgRequest::Kind::buffer);
  EXPECT_EQ(l.args[0].buffer, "x");
  EXPECT_EQ(l.args[1].buffer, "idx");
  EXPECT_EQ(l.args[2].buffer, "y");
  EXPECT_EQ(value_of<float>(l.args[3].bytes), 1e-5f);
  EXPECT_EQ(value_of<int>(l.args[4].bytes), 4);
  EXPECT_EQ(value_of<long long>(l.args[5].bytes), 32);

  for (int i = 0; i < 3; ++i) {
    const LaunchRequest& f = launches[static_cast<std::size_t>(1 + i)];
    EXPECT_EQ(f.lowered, "fin");
    EXPECT_EQ(f.dims.block[0], 4u);
    EXPECT_EQ(value_of<int>(f.args[1].bytes), i);
    EXPECT_TRUE(contains(f.label, "(i = " + std::to_string(i) + ")")) << f.label;
    EXPECT_TRUE(contains(f.label, "candidate launch[1] 'fin'")) << f.label;
  }
}

TEST(Marshal, ATensorOfTheWrongDtypeNamesArgumentTypeAndDtype) {
  const Problem p = problem();
  const Candidate c = parse_candidate(candidate_text(kPlan, kCode), "cand.cu", p);
  const PlanKernel k =
      kernel("k", {"double const*", "int const*", "float*", "float", "int", "long long"});
  const PlanKernel fin = kernel("fin", {"float*", "int"});
  const std::string e = plan_error([&] {
    check_plan_types(c.source.launches, {&k, &fin}, context(p));
  });
  EXPECT_TRUE(contains(e, "candidate launch[0] 'k' argument 0 'x'")) << e;
  EXPECT_TRUE(contains(e, "tensor 'x' is f32 (float)")) << e;
  EXPECT_TRUE(contains(e, "'double const*'")) << e;
}

TEST(Marshal, TypeMismatches) {
  const Problem p = problem();
  const Candidate c = parse_candidate(candidate_text(kPlan, kCode), "cand.cu", p);
  const PlanKernel fin = kernel("fin", {"float*", "int"});
  auto with_k = [&](std::vector<std::string> types, std::vector<std::size_t> sizes = {}) {
    const PlanKernel k = kernel("k", std::move(types), std::move(sizes));
    return plan_error([&] { check_plan_types(c.source.launches, {&k, &fin}, context(p)); });
  };
  std::string e = with_k({"float const*", "int const*", "float*", "float", "int"});
  EXPECT_TRUE(contains(e, "the launch gives 6 arguments, the kernel takes 5")) << e;
  e = with_k({"float", "int const*", "float*", "float", "int", "long long"});
  EXPECT_TRUE(contains(e, "a tensor, but parameter 0 ('float') is not a pointer")) << e;
  e = with_k({"float const*", "int const*", "float*", "int", "int", "long long"});
  EXPECT_TRUE(contains(e, "scalar 'eps' is f32, but parameter 3 ('int') is an integer type")) << e;
  // A dim in a float parameter: the trap of layernorm/traps/float_dim_param.cu.
  e = with_k({"float const*", "int const*", "float*", "float", "int", "float"});
  EXPECT_TRUE(contains(e, "an integer expression, but parameter 5 ('float') is floating-point"))
      << e;
  e = with_k({"float const*", "int const*", "float*", "float", "double", "long long"});
  EXPECT_TRUE(contains(e, "scalar 'groups' is i32, but parameter 4 ('double') is floating-point"))
      << e;
  e = with_k({"float const*", "int const*", "float*", "float", "int*", "long long"});
  EXPECT_TRUE(contains(e, "not a tensor, but parameter 4 ('int*') is a pointer")) << e;
  e = with_k({"float const*", "int const*", "float*", "float", "Params", "long long"});
  EXPECT_TRUE(contains(e, "is not a scalar type kjudge can pass")) << e;
  e = with_k({"float const*", "int const*", "float*", "float", "int", "long long"},
             {8, 8, 8, 4, 4, 4});
  EXPECT_TRUE(contains(e, "takes 4 bytes by the driver's count, 8 by its type")) << e;
  e = with_k({"float const*", "int const*", "float*", "float", "int", "long long"}, {8, 8});
  EXPECT_TRUE(contains(e, "the driver reports 2 parameters")) << e;
  e = with_k({"float const*", "int const*", "float* const&", "float", "int", "long long"});
  EXPECT_TRUE(contains(e, "cannot receive a plan argument")) << e;
}

TEST(Marshal, ValuesOutOfRangeOnACaseAreLaunchErrors) {
  const Problem p = problem();
  const char* plan = R"X([[launch]]
kernel = "k2"
grid = [1]
block = [1]
args = ["x", "R * 1250000000"]
)X";
  const Candidate c = parse_candidate(
      candidate_text(plan, "__global__ void k2(const float* x, int n) {}\n"), "cand.cu", p);
  const PlanKernel k = kernel("k2", {"float const*", "int"});
  const std::string e = plan_error([&] {
    (void)marshal_launches(c.source.launches, {&k}, context(p), shape_env(p, {{"R", 4}, {"C", 8}}));
  });
  EXPECT_TRUE(contains(e, "candidate launch[0] 'k2' argument 1 'R * 1250000000': passes "
                          "5000000000 to a int32 parameter"))
      << e;
}

TEST(Marshal, DeviceLimits) {
  // The plans load on the public shapes (R = 4); R = 8 stands for a hidden or perturbed case
  // where the same expressions leave the device's limits.
  const Problem p = problem();
  auto run = [&](const std::string& grid, const std::string& block, const std::string& shared,
                 std::int64_t r, int kernel_max_threads = 0, int static_shared = 0) {
    const std::string plan = "[[launch]]\nkernel = \"k3\"\ngrid = [" + grid + "]\nblock = [" +
                             block + "]\nshared = \"" + shared + "\"\nargs = [\"x\"]\n";
    const Candidate c = parse_candidate(
        candidate_text(plan, "__global__ void k3(const float* x) {}\n"), "cand.cu", p);
    PlanKernel k = kernel("k3", {"float const*"});
    k.max_threads = kernel_max_threads;
    k.static_shared = static_shared;
    PlanContext ctx = context(p);
    ctx.device = h200_like();
    return plan_error([&] {
      (void)marshal_launches(c.source.launches, {&k}, ctx, shape_env(p, {{"R", r}, {"C", 8}}));
    });
  };
  EXPECT_EQ(run("1", "\"R * 256\"", "0", 4), "(no PlanError)");
  EXPECT_TRUE(contains(run("1", "\"R * 256\"", "0", 8),
                       "block[0] = 'R * 256' = 2048 is outside 1 to 1024"));
  EXPECT_TRUE(contains(run("1", "\"R * 8\", \"R * 8\"", "0", 8),
                       "block [64, 64] has 4096 threads, the device allows 1024"));
  EXPECT_TRUE(contains(run("1", "1, 1, \"R * 16\"", "0", 8), "block[2]"));
  EXPECT_TRUE(contains(run("1, \"R * 16000\"", "1", "0", 8),
                       "grid[1] = 'R * 16000' = 128000 is outside 1 to 65535"));
  EXPECT_TRUE(contains(run("\"8 - R\"", "1", "0", 8), "grid[0] = '8 - R' = 0 is outside"));
  EXPECT_TRUE(contains(run("1", "512", "0", 4, 256), "the kernel can launch with 256 at most"));
  EXPECT_EQ(run("1", "1", "232448", 4), "(no PlanError)");
  EXPECT_TRUE(contains(run("1", "1", "232448", 4, 0, 16), "exceeds the device's 232448 bytes"));
  const std::string div = run("1", "1", "C / (8 - R)", 8);
  EXPECT_TRUE(contains(div, "division by zero")) << div;
}

TEST(Marshal, RepeatIsCappedOnEveryCase) {
  const Problem p = problem();
  const char* plan = R"X([[launch]]
kernel = "k4"
grid = [1]
block = [1]
repeat = "R * 1000"
args = ["x", "i"]
)X";
  const Candidate c = parse_candidate(
      candidate_text(plan, "__global__ void k4(const float* x, int i) {}\n"), "cand.cu", p);
  const PlanKernel k = kernel("k4", {"float const*", "int"});
  EXPECT_EQ(
      marshal_launches(c.source.launches, {&k}, context(p), shape_env(p, {{"R", 4}, {"C", 8}}))
          .size(),
      4000u);
  const std::string e = plan_error([&] {
    (void)marshal_launches(c.source.launches, {&k}, context(p), shape_env(p, {{"R", 8}, {"C", 8}}));
  });
  EXPECT_TRUE(contains(e, "repeat 'R * 1000' = 8000 is outside 0 to 4096")) << e;
}

TEST(Marshal, KernelNamesOfTheReferenceRole) {
  EXPECT_EQ(instantiate_kernel("softmax_ref<T>", "float", false), "softmax_ref<float>");
  EXPECT_EQ(instantiate_kernel("k<T, 4>", "__half", false), "k<__half, 4>");
  EXPECT_EQ(instantiate_kernel("k<TT, T>", "double", false), "k<TT, double>");
  EXPECT_EQ(instantiate_kernel("k<Tile<T>>", "double", false), "k<Tile<double>>");
  EXPECT_EQ(instantiate_kernel("ns::k<T>", "double", false), "ns::k<double>");
  EXPECT_EQ(instantiate_kernel("k", "float", true), "k<float>");
  EXPECT_EQ(instantiate_kernel("k", "float", false), "k");
  EXPECT_EQ(instantiate_kernel("T", "float", false), "T"); // outside template arguments
}

TEST(Marshal, ExternCKernelsTakeTheLexersTypes) {
  const std::string src = R"X(
extern "C" __global__ void vadd(const float* __restrict__ a, float* b, unsigned n) {}
)X";
  KernelInfo info;
  info.expression = "vadd";
  info.lowered = "vadd";
  EXPECT_EQ(kernel_param_types(info, src),
            (std::vector<std::string>{"const float*", "float*", "unsigned"}));
  info.lowered = "_Z4vaddPKfPfj";
  info.param_types = {"float const*", "float*", "unsigned int"};
  EXPECT_EQ(kernel_param_types(info, src), info.param_types);
  info.lowered = "missing";
  EXPECT_THROW(kernel_param_types(info, src), PlanError);
}

} // namespace
