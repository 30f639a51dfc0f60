// Attacks on the host backend's build, each shown to work with its defence off and to fail with
// it on: a compile that reads a file outside its reach or obeys kjudge's environment, a compile
// that never ends or eats memory, and every spelling of code that runs as the module is loaded
// (before the worker's confinement could matter).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <dlfcn.h>

#include <gtest/gtest.h>

#include "kjudge/host_backend.hpp"
#include "kjudge/nvrtc.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;

HostCompileOptions options() {
  HostCompileOptions o;
  o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
  o.cuda_include = "/usr/local/cuda/include";
  o.cache_dir = fs::temp_directory_path() / "kjudge_host_attack_cache";
  return o;
}

// "built", or what build_host_module threw: "compile_error: ...", "limit: ...", "load_time: ...".
std::string build(const std::string& source, const HostCompileOptions& o = options()) {
  try {
    (void)build_host_module(source, "attack.cu", {"k"}, o);
    return "built";
  } catch (const HostCompileLimit& e) {
    return std::string("limit: ") + e.what();
  } catch (const HostLoadTimeCode& e) {
    return std::string("load_time: ") + e.what();
  } catch (const CompileError& e) {
    return std::string("compile_error: ") + e.log();
  }
}

const char* kKernel = "__global__ void k(int* y) { y[0] = 1; }\n";

// What g++ compiles is the program NVRTC compiled: every name of the candidate's that NVRTC did
// not give it (its own, `std`, and a C library name NVRTC lacks though its headers mention it,
// `time`) gets a prefix no header uses, so no overload of the C or C++ library's can meet it;
// CUDA's names, the language's and libcu++'s cuda::std keep theirs (a header the source
// includes would add its own, numeric_limits), and a message gets the candidate's back.
TEST(HostCompile, TheCandidatesOwnNamesAreKeptApartFromTheHostLibraries) {
  const auto known = nvrtc_names("/usr/local/cuda/include", {}, {"time"});
  EXPECT_EQ(keep_own_names_apart(
                "namespace std { __device__ double min(double left_term, double right_term); }\n"
                "__global__ void sum_kernel(float* answers) {\n"
                "  answers[threadIdx.x] = fadd(sqrtf(answers[0]), std::min(1, 2)) + time(0);\n"
                "  const int biggest = cuda::std::numeric_limits<int>::max(); // fadd\n"
                "}\n",
                known),
            "namespace kjc_std { __device__ double min(double kjc_left_term, double "
            "kjc_right_term); }\n"
            "__global__ void kjc_sum_kernel(float* kjc_answers) {\n"
            "  kjc_answers[threadIdx.x] = kjc_fadd(sqrtf(kjc_answers[0]), kjc_std::min(1, 2)) + "
            "kjc_time(0);\n"
            "  const int kjc_biggest = cuda::std::kjc_numeric_limits<int>::max(); // fadd\n"
            "}\n");
  EXPECT_EQ(with_own_names_restored("error: 'kjc_fadd' was not declared; kjc_kjc_x"),
            "error: 'fadd' was not declared; kjc_x");
}

TEST(HostCompile, ReadsNoFileOutsideItsReach) {
  // A header outside the toolchain, kjudge's headers and the build folder (as /etc or a home
  // folder would be): the attack included /etc/hostname or /proc/self/environ.
  const fs::path secret = fs::temp_directory_path() / "kjudge_attack_secret.h";
  std::ofstream(secret) << "constexpr int kSecret = 42;\n";
  const std::string source = "#include \"" + secret.string() + "\"\n" +
                             "__global__ void k(int* y) { y[0] = kSecret; }\n";
  HostCompileOptions open = options();
  open.confine_compile = false;
  EXPECT_EQ(build(source, open), "built");
  const std::string confined = build(source);
  EXPECT_EQ(confined.rfind("compile_error: ", 0), 0u) << confined;
  EXPECT_NE(confined.find("Permission denied"), std::string::npos) << confined;
}

TEST(HostCompile, GetsNoneOfKjudgesEnvironment) {
  // CPATH in kjudge's environment would add an include folder; the compile never sees it.
  const fs::path dir = options().cache_dir / "host" / "env_probe";
  fs::create_directories(dir);
  std::ofstream(dir / "leak.h") << "constexpr int kLeak = 7;\n";
  const std::string source = std::string("#include <leak.h>\n") +
                             "__global__ void k(int* y) { y[0] = kLeak; }\n";
  ::setenv("CPATH", dir.c_str(), 1);
  HostCompileOptions open = options();
  open.confine_compile = false;
  EXPECT_EQ(build(source, open), "built");
  const std::string confined = build(source);
  ::unsetenv("CPATH");
  EXPECT_EQ(confined.rfind("compile_error: ", 0), 0u) << confined;
  EXPECT_NE(confined.find("leak.h: No such file or directory"), std::string::npos) << confined;
}

TEST(HostCompile, ADeadlineEndsACompileThatDoesNotEnd) {
  // Constant evaluation under every one of g++'s own limits, many times over.
  const std::string source = R"(
constexpr long spin(long n) {
  long x = 0;
  for (long i = 0; i < 200000; ++i)
    for (long j = 0; j < 100; ++j) x += (i ^ j) + n;
  return x;
}
template <long... I> constexpr long all(long n) { return (spin(n + I) + ...); }
template <long... I> constexpr long expand(long n) { return (all<I, I + 1000, I + 2000>(n) + ...); }
static_assert(expand<0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15>(1) != 0);
__global__ void k(int* y) { y[0] = 1; }
)";
  HostCompileOptions o = options();
  o.deadline_s = 2;
  EXPECT_EQ(build(source, o), "limit: the host compile of attack.cu ran past its deadline of 2 s");
}

TEST(HostCompile, AMemoryCapEndsACompileThatEatsMemory) {
  HostCompileOptions o = options();
  o.memory_bytes = std::uint64_t{200} << 20;
  // Tables built by constant evaluation: g++ holds every element of each.
  const std::string source = R"(
struct T { long v[1 << 22]; };
constexpr T make(long s) { T t{}; for (long i = 0; i < (1 << 18); ++i) t.v[i * 16] = i + s; return t; }
constexpr T t0 = make(0), t1 = make(1), t2 = make(2), t3 = make(3), t4 = make(4), t5 = make(5);
__global__ void k(long* y) { y[0] = t0.v[1] + t1.v[2] + t2.v[3] + t3.v[4] + t4.v[5] + t5.v[6]; }
)";
  EXPECT_EQ(build(source, o), "limit: the host compile of attack.cu ran past its memory cap of 200 MiB");
}

TEST(HostModuleCheck, CodeThatRunsAtLoadIsRefusedInEverySpelling) {
  EXPECT_EQ(build(kKernel), "built");
  const std::string init = "load_time: attack.cu would run host code as it is loaded: static "
                           "constructors or dynamically initialised objects (.init_array)";
  const std::string fini =
      "load_time: attack.cu would run host code as it is loaded: static destructors (.fini_array)";
  const std::string ifunc =
      "load_time: attack.cu would run host code as it is loaded: an ifunc resolver";
  const struct {
    const char* source;
    std::string expected;
  } spellings[] = {
      // NVRTC accepts this one: __host__ __device__ and a GCC attribute it ignores.
      {"__attribute__((constructor)) __host__ __device__ void f() {}\n", init},
      {"[[gnu::constructor]] void f() {}\n", init},
      {"__attribute__((constructor(99))) void f() {}\n", init},
      {"__attribute__((destructor)) void f() {}\n", fini},
      // NVRTC accepts this too (an empty __host__ __device__ constructor).
      {"struct S { __host__ __device__ S() { n = 1; } int n; };\n__device__ S s;\n", init},
      {"int f() { return 3; }\n__device__ int g = f();\n", init},
      {"void f() {}\n__attribute__((section(\".init_array\"), used)) void (*p)() = f;\n", init},
      {"void f() {}\n__attribute__((section(\".ctors\"), used)) void (*p)() = f;\n", init},
      {"extern \"C\" void impl() {}\nextern \"C\" void (*pick())() { return impl; }\n"
       "extern \"C\" void g() __attribute__((ifunc(\"pick\")));\n",
       ifunc},
  };
  for (const auto& s : spellings)
    EXPECT_EQ(build(std::string(s.source) + kKernel), s.expected) << s.source;
}

// What the refusal stops: with it off, the constructor runs the moment the module is loaded.
TEST(HostModuleCheck, WithoutTheRefusalAConstructorRunsAtLoad) {
  HostCompileOptions o = options();
  o.refuse_load_time_code = false;
  ::unsetenv("KJ_ATTACK_RAN");
  const fs::path so = build_host_module(
      std::string("#include <cstdlib>\n__attribute__((constructor)) void f() { "
                  "setenv(\"KJ_ATTACK_RAN\", \"1\", 1); }\n") + kKernel,
      "attack.cu", {"k"}, o);
  void* handle = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  EXPECT_STREQ(std::getenv("KJ_ATTACK_RAN"), "1");
  ::dlclose(handle);
}

} // namespace
} // namespace kj
