// kjudge/device.cuh and kjudge/rounding.hpp under NVRTC, the compiler references meet: a
// reference-style template (kj::c, kj::acc_t, kj::exp, to_acc/from_acc) must compile for every
// float role (float, double, __half, __nv_bfloat16, rounded<float, bf16>), and the double
// instantiation, which computes the golden, must not fall back to f32 math. NVRTC needs no GPU,
// only the toolkit; without it the tests skip with a reason.
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#if defined(KJ_HAVE_NVRTC)
#include <nvrtc.h>
#endif

namespace {

#if defined(KJ_HAVE_NVRTC)

// A compiled program's PTX and the lowered (mangled) names of its name expressions.
struct Compiled {
  bool ok = false;
  std::string log;
  std::string ptx;
  std::vector<std::string> lowered;
};

std::vector<std::string> include_options() {
  std::vector<std::string> options = {std::string("-I") + KJ_SOURCE_DIR + "/include"};
  // KJ_CUDA_INCLUDE is CMake's CUDAToolkit_INCLUDE_DIRS: one directory or a ;-list.
  const std::string dirs = KJ_CUDA_INCLUDE;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(';', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty()) {
      options.push_back("-I" + dir);
      // CUDA 13 moved libcu++ and friends (which cuda_fp16.h may pull in) under cccl/.
      if (std::filesystem::is_directory(dir + "/cccl")) options.push_back("-I" + dir + "/cccl");
    }
    start = end + 1;
  }
  return options;
}

Compiled compile(const std::string& source, const std::vector<std::string>& names) {
  Compiled out;
  nvrtcProgram prog;
  if (nvrtcCreateProgram(&prog, source.c_str(), "reference.cu", 0, nullptr, nullptr) !=
      NVRTC_SUCCESS) {
    out.log = "nvrtcCreateProgram failed";
    return out;
  }
  for (const auto& name : names) nvrtcAddNameExpression(prog, name.c_str());
  std::vector<std::string> options = include_options();
  options.push_back("--gpu-architecture=compute_90");
  options.push_back("-std=c++17");
  std::vector<const char*> argv;
  for (const auto& o : options) argv.push_back(o.c_str());
  const nvrtcResult result = nvrtcCompileProgram(prog, static_cast<int>(argv.size()), argv.data());
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  out.log.resize(log_size);
  nvrtcGetProgramLog(prog, out.log.data());
  out.ok = result == NVRTC_SUCCESS;
  if (out.ok) {
    std::size_t ptx_size = 0;
    nvrtcGetPTXSize(prog, &ptx_size);
    out.ptx.resize(ptx_size);
    nvrtcGetPTX(prog, out.ptx.data());
    for (const auto& name : names) {
      const char* lowered = nullptr;
      nvrtcGetLoweredName(prog, name.c_str(), &lowered);
      out.lowered.emplace_back(lowered != nullptr ? lowered : "");
    }
  }
  nvrtcDestroyProgram(&prog);
  return out;
}

// The PTX of one kernel: its .entry line through the brace that closes its body. Helpers that
// were not inlined (.func) sit elsewhere and are reached by name, the same name for everyone.
std::string entry_body(const std::string& ptx, const std::string& lowered) {
  const std::size_t begin = ptx.find(".entry " + lowered + "(");
  if (begin == std::string::npos) return {};
  std::size_t pos = ptx.find('{', begin);
  int depth = 0;
  for (; pos < ptx.size(); ++pos) {
    if (ptx[pos] == '{') ++depth;
    if (ptx[pos] == '}' && --depth == 0) return ptx.substr(begin, pos + 1 - begin);
  }
  return {};
}

// An extern "C" kernel (name unmangled) storing one expression over x[0], x[1].
std::string fmt_kernel(const std::string& name, const std::string& type, const std::string& expr) {
  return "extern \"C\" __global__ void " + name + "(" + type + "* x) { x[2] = " + expr + "; }\n";
}

const char* reference_source = R"(
#include <kjudge/device.cuh>

// Row-wise softmax the way a problem's reference writes it: one thread per row, sequential
// accumulation in acc_t<T>, literals through kj::c.
template <class T>
__global__ void softmax_ref(const T* x, T* y, int R, int C) {
  using A = kj::acc_t<T>;
  const int r = blockIdx.x;
  if (threadIdx.x != 0 || r >= R) return;
  A m = kj::to_acc(x[r * C]);
  for (int j = 1; j < C; ++j) m = kj::max(m, kj::to_acc(x[r * C + j]));
  A s = kj::c<A>(0.0);
  for (int j = 0; j < C; ++j) s += kj::exp(kj::to_acc(x[r * C + j]) - m);
  for (int j = 0; j < C; ++j)
    y[r * C + j] = kj::from_acc<T>(kj::exp(kj::to_acc(x[r * C + j]) - m) / s);
}

// tanh-GELU with the usual constants; every overload family in one kernel.
template <class T>
__global__ void gelu_ref(const T* x, T* y, int n) {
  using A = kj::acc_t<T>;
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const A v = kj::to_acc(x[i]);
  const A inner = kj::c<A>(0.7978845608028654) * (v + kj::c<A>(0.044715) * v * v * v);
  A out = kj::c<A>(0.5) * v * (kj::c<A>(1.0) + kj::tanh(inner));
  out = out + kj::c<A>(0.0) * (kj::log(kj::abs(v) + kj::c<A>(1.0)) + kj::sqrt(kj::abs(v)) +
                               kj::rsqrt(kj::abs(v) + kj::c<A>(1.0)) + kj::erf(v) +
                               kj::sin(v) + kj::cos(v) + kj::pow(kj::abs(v), kj::c<A>(1.5)) +
                               kj::min(v, kj::c<A>(2.0)));
  y[i] = kj::from_acc<T>(out);
}

// The device conversions themselves, so NVRTC compiles rounding_impl.hpp's bodies.
__global__ void conversions(const float* x, unsigned short* h, unsigned short* b, float* t, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  h[i] = kj::float_to_f16_bits(x[i]);
  b[i] = kj::float_to_bf16_bits(x[i]);
  t[i] = kj::round_to_tf32(x[i]) + kj::f16_bits_to_float(h[i]) + kj::bf16_bits_to_float(b[i]) +
         kj::round_as_from_double<kj::f16>(static_cast<double>(x[i]));
}
)";

const std::vector<std::string> instantiations = {
    "softmax_ref<float>",         "softmax_ref<double>",
    "softmax_ref<__half>",        "softmax_ref<__nv_bfloat16>",
    "softmax_ref<kj::rounded<float, kj::bf16>>",
    "gelu_ref<float>",            "gelu_ref<double>",
    "gelu_ref<__half>",           "gelu_ref<__nv_bfloat16>",
    "gelu_ref<kj::rounded<float, kj::bf16>>",
    "gelu_ref<kj::rounded<float, kj::f16>>",
    "gelu_ref<kj::rounded<float, kj::tf32>>",
    "conversions"};

const Compiled& compiled_reference() {
  static const Compiled c = compile(reference_source, instantiations);
  return c;
}

std::string body_of(const std::string& name) {
  const Compiled& c = compiled_reference();
  for (std::size_t k = 0; k < instantiations.size(); ++k)
    if (instantiations[k] == name) return entry_body(c.ptx, c.lowered[k]);
  return {};
}

TEST(NvrtcDeviceHeader, ReferenceTemplateCompilesForEveryFloatRole) {
  const Compiled& c = compiled_reference();
  ASSERT_TRUE(c.ok) << c.log;
  ASSERT_EQ(c.lowered.size(), instantiations.size());
  for (std::size_t k = 0; k < instantiations.size(); ++k) {
    EXPECT_FALSE(c.lowered[k].empty()) << instantiations[k];
    EXPECT_FALSE(entry_body(c.ptx, c.lowered[k]).empty()) << instantiations[k];
  }
}

TEST(NvrtcDeviceHeader, GoldenInstantiationDoesNotUseF32Math) {
  ASSERT_TRUE(compiled_reference().ok) << compiled_reference().log;
  const std::string as_float = body_of("softmax_ref<float>");
  const std::string as_double = body_of("softmax_ref<double>");
  ASSERT_FALSE(as_double.empty());
  // The check has teeth: the float instantiation does use the f32 approximation of exp.
  EXPECT_NE(as_float.find("ex2.approx"), std::string::npos);
  for (const char* f32_math : {"ex2.approx.f32", "ex2.approx.ftz.f32", "cvt.rn.f32.f64"})
    EXPECT_EQ(as_double.find(f32_math), std::string::npos) << f32_math << " in\n" << as_double;
  EXPECT_NE(as_double.find(".f64"), std::string::npos);
}

// A kernel's PTX with its name and the numbering of labels, stack frames and call sequences
// taken out, so two kernels compare by code.
std::string normalised(std::string body, const std::string& name) {
  body = std::regex_replace(body, std::regex(name), "K");
  body = std::regex_replace(body, std::regex(R"(\$L__BB[0-9]+_)"), "$$L__BB_");
  body = std::regex_replace(body, std::regex(R"(__local_depot[0-9]+)"), "__local_depot");
  return std::regex_replace(body, std::regex(R"(callseq [0-9]+)"), "callseq");
}

// Every overload calls the function of its own precision: kj::f(double) compiles to the same
// code as CUDA's double f, kj::f(float) to its f-suffixed float one. (CUDA's double tanh and erf
// use f32 instructions internally for exact steps, so a scan for f32 opcodes cannot tell.)
TEST(NvrtcDeviceHeader, OverloadsCallTheFunctionOfTheirPrecision) {
  struct Fn {
    const char* kj;
    const char* f64;
    const char* f32;
    int arity;
  };
  const Fn fns[] = {{"exp", "exp", "expf", 1},     {"log", "log", "logf", 1},
                    {"sqrt", "sqrt", "sqrtf", 1},  {"rsqrt", "rsqrt", "rsqrtf", 1},
                    {"tanh", "tanh", "tanhf", 1},  {"erf", "erf", "erff", 1},
                    {"abs", "fabs", "fabsf", 1},   {"sin", "sin", "sinf", 1},
                    {"cos", "cos", "cosf", 1},     {"max", "fmax", "fmaxf", 2},
                    {"min", "fmin", "fminf", 2},   {"pow", "pow", "powf", 2}};
  std::string source = "#include <kjudge/device.cuh>\n";
  for (const Fn& f : fns) {
    const std::string args = f.arity == 1 ? "(x[0])" : "(x[0], x[1])";
    for (const char* type : {"double", "float"}) {
      const std::string plain = std::string(type) == "double" ? f.f64 : f.f32;
      source += fmt_kernel("kj_" + std::string(f.kj) + "_" + type, type, "kj::" + std::string(f.kj) + args);
      source += fmt_kernel("cuda_" + std::string(f.kj) + "_" + type, type, "::" + plain + args);
    }
  }
  const Compiled c = compile(source, {});
  ASSERT_TRUE(c.ok) << c.log;
  for (const Fn& f : fns) {
    for (const char* type : {"double", "float"}) {
      const std::string ours = "kj_" + std::string(f.kj) + "_" + type;
      const std::string theirs = "cuda_" + std::string(f.kj) + "_" + type;
      const std::string a = entry_body(c.ptx, ours);
      const std::string b = entry_body(c.ptx, theirs);
      ASSERT_FALSE(a.empty()) << ours;
      EXPECT_EQ(normalised(a, ours), normalised(b, theirs)) << ours << " vs " << theirs;
    }
  }
}

TEST(NvrtcDeviceHeader, RoundingHeaderNeedsNoStandardHeaders) {
  // Only the project's include directory: rounding.hpp must stand on NVRTC's builtins.
  const std::string source = R"(
#include <kjudge/rounding.hpp>
__global__ void k(float* x) {
  kj::rounded<float, kj::bf16> a(x[0]), b(x[1]);
  x[2] = static_cast<float>(a * b + a) + kj::round_to_f16(x[3]);
}
)";
  nvrtcProgram prog;
  ASSERT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "r.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  const std::string inc = std::string("-I") + KJ_SOURCE_DIR + "/include";
  const char* options[] = {inc.c_str(), "--gpu-architecture=compute_90"};
  const nvrtcResult result = nvrtcCompileProgram(prog, 2, options);
  std::size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  nvrtcGetProgramLog(prog, log.data());
  nvrtcDestroyProgram(&prog);
  EXPECT_EQ(result, NVRTC_SUCCESS) << log;
}

#else

TEST(NvrtcDeviceHeader, Skipped) {
  GTEST_SKIP() << "NVRTC not found at configure time (no CUDA toolkit): device.cuh was not "
                  "compiled";
}

#endif

}  // namespace
