// The host backend's approximate intrinsics (cuda_emulation.hpp, "approximate intrinsics")
// against the H200's results, committed in tests/data/intrinsics by tools/intrinsics-sweep: the
// inputs are regenerated (tests/support/intrinsic_inputs.hpp, checked against the manifest's
// hash), a kernel evaluating every function is compiled by the host backend as a candidate would
// be, and per function the agreement is pinned: how many results are bit-exact (or both NaN),
// the largest ulp distance from the GPU, and the largest error of each against the true value, so
// that the host is seen to show a fast-math kernel's error and any change of the model shows.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kjudge/error.hpp"
#include "kjudge/host_backend.hpp"
#include "support/intrinsic_inputs.hpp"

namespace kj {
namespace {

namespace fs = std::filesystem;
namespace ki = test::intrinsics;

// The sweep's switch, in manifest order (tools/intrinsics-sweep/sweep.cu).
const char* const kKernel = R"(
__device__ float apply(int f, float x, float y) {
  switch (f) {
  case 0: return __expf(x);
  case 1: return __exp10f(x);
  case 2: return __logf(x);
  case 3: return __log2f(x);
  case 4: return __log10f(x);
  case 5: return __sinf(x);
  case 6: return __cosf(x);
  case 7: return __tanf(x);
  case 8: return rsqrtf(x);
  case 9: return __frsqrt_rn(x);
  case 10: return __saturatef(x);
  case 11: return __frcp_rn(x);
  case 12: return sqrtf(x);
  case 13: return __fsqrt_rn(x);
  case 14: return __fdividef(x, y);
  case 15: return __powf(x, y);
  case 16: return expf(x);
  case 17: return logf(x);
  case 18: return sinf(x);
  }
  return 0.0f;
}
__global__ void run(int f, const float* x, const float* y, float* out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = apply(f, x[i], y[i]);
}
)";

// The true value, in long double.
long double truth(const std::string& f, long double x, long double y) {
  if (f == "__expf" || f == "expf") return std::exp(x);
  if (f == "__exp10f") return std::pow(10.0L, x);
  if (f == "__logf" || f == "logf") return std::log(x);
  if (f == "__log2f") return std::log2(x);
  if (f == "__log10f") return std::log10(x);
  if (f == "__sinf" || f == "sinf") return std::sin(x);
  if (f == "__cosf") return std::cos(x);
  if (f == "__tanf") return std::tan(x);
  if (f == "rsqrtf" || f == "__frsqrt_rn") return 1.0L / std::sqrt(x);
  if (f == "__saturatef") return x > 1 ? 1.0L : (x > 0 ? x : 0.0L);
  if (f == "__frcp_rn") return 1.0L / x;
  if (f == "sqrtf" || f == "__fsqrt_rn") return std::sqrt(x);
  if (f == "__fdividef") return x / y;
  if (f == "__powf") return std::pow(x, y);
  return 0;
}

std::int64_t ordered(float f) {
  const std::uint32_t b = ki::to_bits(f);
  return (b & 0x80000000u) ? -static_cast<std::int64_t>(b & 0x7fffffffu) : b;
}
std::int64_t ulps(float a, float b) {
  return std::llabs(ordered(a) - ordered(b));
}

// Where the documented bound is absolute rather than in ulp: the logarithms' [0.5, 2], and the
// sines and cosines everywhere (their [-pi, pi] bound grows with |x| beyond, through the rounded
// argument); the tangent, their quotient, with them.
bool absolute_domain(const std::string& f, float x) {
  if (f == "__logf" || f == "__log2f" || f == "__log10f") return x >= 0.5f && x <= 2.0f;
  return f == "__sinf" || f == "__cosf" || f == "__tanf";
}

// Left out of the error against the true value: __fdividef's documented 0 for |y| > 2^126.
bool documented_exception(const std::string& f, float y) {
  return f == "__fdividef" && std::fabs(y) > 0x1p126f;
}

struct Agreement {
  std::size_t exact = 0;      // same bits, or both NaN
  std::size_t nan_apart = 0;  // NaN on one side only
  std::int64_t max_ulp = 0;   // from the GPU, outside the absolute domain, both finite
  double max_abs = 0;         // from the GPU, inside it, |x| <= pi
  double max_abs_wide = 0;    // from the GPU, inside it, |x| > pi
  std::int64_t gpu_error = 0; // from the true value rounded to f32, ulp, outside the domain
  std::int64_t host_error = 0;
  double gpu_abs_error = 0; // inside it
  double host_abs_error = 0;
};

// Pinned figures, as measured (docs/cli.md "Approximate intrinsics"). `shows`: the model holds
// the GPU's dominant error (the rounded scaled argument, the large-divisor rule), so the host's
// error against the true value is of the GPU's size; false where the MUFU's own error dominates
// (MUFU.LG2 near 1, and __powf, which multiplies it by y), where the host is more accurate.
struct Expected {
  std::size_t exact;
  std::int64_t max_ulp;
  double max_abs, max_abs_wide;
  std::int64_t gpu_error, host_error;
  double gpu_abs_error, host_abs_error;
  bool shows;
};
const std::map<std::string, Expected>& expected() {
  static const std::map<std::string, Expected> e = {
      {"__expf", {20607, 2, 0, 0, 60, 61, 0, 0, true}},
      {"__exp10f", {20365, 2, 0, 0, 69, 71, 0, 0, true}},
      {"__logf", {18142, 3, 0x1.8p-23, 0, 3, 1, 0x1.57e185925fp-23, 0x1.b7705e37eep-25, false}},
      {"__log2f", {16238, 2, 0x1.8p-23, 0, 2, 0, 0x1.a7e8c5b6c28p-23, 0x1.ffff60ab9p-26, false}},
      {"__log10f", {17732, 3, 0x1p-24, 0, 2, 2, 0x1.feba69a2p-25, 0x1.3bbd4d5fep-25, false}},
      {"__sinf",
       {6350, 0, 0x1.6p-22, 0x1.6p-22, 0, 0, 0x1.ba970e537c613p+0, 0x1.ba970e537c613p+0, true}},
      {"__cosf",
       {12483, 0, 0x1.6p-22, 0x1.6p-22, 0, 0, 0x1.ffffbbe018fdp+0, 0x1.ffffbbe018fdp+0, true}},
      {"__tanf",
       {3713, 0, 0x1.2a7p+0, 0x1.f3fp+0, 0, 0, 0x1.ce909109a246fp+9, 0x1.ce909109a246fp+9, true}},
      {"rsqrtf", {26705, 1, 0, 0, 1, 0, 0, 0, true}},
      {"__frsqrt_rn", {32768, 0, 0, 0, 0, 0, 0, 0, true}},
      {"__saturatef", {32768, 0, 0, 0, 0, 0, 0, 0, true}},
      {"__frcp_rn", {32768, 0, 0, 0, 0, 0, 0, 0, true}},
      {"sqrtf", {32768, 0, 0, 0, 0, 0, 0, 0, true}},
      {"__fsqrt_rn", {32768, 0, 0, 0, 0, 0, 0, 0, true}},
      {"__fdividef", {30248, 2, 0, 0, 2, 1, 0, 0, true}},
      {"__powf", {17398, 2020, 0, 0, 2035, 112, 0, 0, false}},
      // The precise functions, a control: CUDA's against glibc's.
      {"expf", {25440, 2, 0, 0, 2, 1, 0, 0, true}},
      {"logf", {30965, 1, 0, 0, 1, 1, 0, 0, true}},
      {"sinf", {27573, 1, 0, 0, 1, 1, 0, 0, true}},
  };
  return e;
}

class HostIntrinsics : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    const fs::path data = fs::path(KJ_SOURCE_DIR) / "tests" / "data" / "intrinsics";
    std::ifstream m(data / "manifest.txt");
    ASSERT_TRUE(m) << (data / "manifest.txt");
    std::string line;
    while (std::getline(m, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream in(line);
      std::string name, hash;
      int arity = 0;
      std::size_t count = 0;
      in >> name >> arity >> count >> hash;
      manifest_.push_back({name, hash});
    }
    std::ifstream r(data / "results.bin", std::ios::binary);
    gpu_.resize(manifest_.size() * ki::kCount);
    r.read(reinterpret_cast<char*>(gpu_.data()), static_cast<std::streamsize>(gpu_.size() * 4));
    ASSERT_TRUE(r) << "results.bin is short";

    HostCompileOptions o;
    o.kjudge_include = fs::path(KJ_SOURCE_DIR) / "include";
    o.cuda_include = "/usr/local/cuda/include";
    o.cache_dir = fs::temp_directory_path() / "kjudge_host_test_cache";
    try {
      module_ = compile_host_module(kKernel, "intrinsics.cu", {"run"}, o).release();
    } catch (const CompileError& e) {
      FAIL() << e.what() << "\n" << e.log();
    }
  }
  static void TearDownTestSuite() { delete module_; }

  static Agreement measure(std::size_t k) {
    const ki::Function& fn = ki::functions()[k];
    std::vector<float> x, y;
    if (fn.arity == 1) {
      x = ki::unary_inputs(fn.name);
      y = x;
    } else {
      auto p = ki::binary_inputs(fn.name);
      x = std::move(p.x);
      y = std::move(p.y);
    }
    char hash[32];
    std::snprintf(hash, sizeof hash, "%016llx",
                  static_cast<unsigned long long>(fn.arity == 1 ? ki::hash_inputs(x)
                                                                : ki::hash_inputs(x, y)));
    EXPECT_EQ(manifest_[k].hash, hash) << fn.name << ": inputs differ from the sweep's";
    std::vector<float> host(x.size());
    int f = static_cast<int>(k), n = static_cast<int>(x.size());
    float *px = x.data(), *py = y.data(), *po = host.data();
    void* args[] = {&f, &px, &py, &po, &n};
    const unsigned grid[3] = {16, 1, 1}, block[3] = {256, 1, 1};
    EXPECT_EQ(module_->launch(0, grid, block, 0, args, 5), "");

    Agreement a;
    const std::string name = fn.name;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float g = ki::from_bits(gpu_[k * ki::kCount + i]), h = host[i];
      const bool gn = g != g, hn = h != h;
      if (ki::to_bits(g) == ki::to_bits(h) || (gn && hn)) ++a.exact;
      if (gn != hn) ++a.nan_apart;
      if (gn || hn || std::isinf(g) != std::isinf(h)) continue;
      const bool absolute = absolute_domain(name, x[i]);
      if (absolute && std::fabs(x[i]) <= 3.14159265f)
        a.max_abs = std::max(a.max_abs, std::fabs(double(g) - double(h)));
      else if (absolute)
        a.max_abs_wide = std::max(a.max_abs_wide, std::fabs(double(g) - double(h)));
      else
        a.max_ulp = std::max(a.max_ulp, ulps(g, h));
      if (documented_exception(name, y[i])) continue;
      const long double t = truth(name, x[i], y[i]);
      const float tf = static_cast<float>(t);
      if (absolute) {
        a.gpu_abs_error = std::max(a.gpu_abs_error, double(std::fabs(g - t)));
        a.host_abs_error = std::max(a.host_abs_error, double(std::fabs(h - t)));
      } else if (std::isnormal(tf) && std::isfinite(g)) {
        a.gpu_error = std::max(a.gpu_error, ulps(g, tf));
        a.host_error = std::max(a.host_error, ulps(h, tf));
      }
    }
    std::printf(
        "%-12s exact %zu/%zu (%.4f) nan_apart %zu max_ulp %lld max_abs %a wide %a | error gpu "
        "%lld host %lld ulp, abs gpu %a host %a\n",
        fn.name, a.exact, x.size(), double(a.exact) / double(x.size()), a.nan_apart,
        static_cast<long long>(a.max_ulp), a.max_abs, a.max_abs_wide,
        static_cast<long long>(a.gpu_error), static_cast<long long>(a.host_error), a.gpu_abs_error,
        a.host_abs_error);
    return a;
  }

  struct Entry {
    std::string name, hash;
  };
  static inline std::vector<Entry> manifest_;
  static inline std::vector<std::uint32_t> gpu_;
  static inline HostModule* module_ = nullptr;
};

TEST_F(HostIntrinsics, TheCommittedDataIsTheSweepsFunctionsInOrder) {
  ASSERT_EQ(manifest_.size(), ki::functions().size());
  for (std::size_t k = 0; k < manifest_.size(); ++k)
    EXPECT_EQ(manifest_[k].name, ki::functions()[k].name);
}

TEST_F(HostIntrinsics, AgreementWithTheH200IsAsPinned) {
  ASSERT_EQ(manifest_.size(), ki::functions().size());
  ASSERT_NE(module_, nullptr);
  for (std::size_t k = 0; k < manifest_.size(); ++k) {
    const std::string name = ki::functions()[k].name;
    const Agreement a = measure(k);
    const Expected& e = expected().at(name);
    EXPECT_EQ(a.nan_apart, 0u) << name;
    EXPECT_EQ(a.exact, e.exact) << name;
    EXPECT_EQ(a.max_ulp, e.max_ulp) << name;
    EXPECT_DOUBLE_EQ(a.max_abs, e.max_abs) << name;
    EXPECT_DOUBLE_EQ(a.max_abs_wide, e.max_abs_wide) << name;
    EXPECT_EQ(a.gpu_error, e.gpu_error) << name;
    EXPECT_EQ(a.host_error, e.host_error) << name;
    EXPECT_DOUBLE_EQ(a.gpu_abs_error, e.gpu_abs_error) << name;
    EXPECT_DOUBLE_EQ(a.host_abs_error, e.host_abs_error) << name;
    // Never much worse than the GPU against the true value...
    EXPECT_LE(a.host_error, a.gpu_error + 2) << name;
    EXPECT_LE(a.host_abs_error, a.gpu_abs_error) << name;
    // ...and, where the model holds the GPU's dominant error, of its size.
    if (e.shows) {
      EXPECT_LE(a.gpu_error, 2 * a.host_error + 1) << name;
      EXPECT_LE(a.gpu_abs_error, 2 * a.host_abs_error) << name;
    }
  }
}

} // namespace
} // namespace kj
