// The H200's results of CUDA's approximate math intrinsics, for the host backend's emulation
// (include/kjudge/host/cuda_emulation.hpp, "approximate intrinsics") and its test
// (tests/unit/host/host_intrinsics_test.cpp). Each function runs on the inputs of
// tests/support/intrinsic_inputs.hpp; the result bits go, in manifest order, into one file,
// results.bin (little-endian uint32, kCount a function), described by manifest.txt. Built with
// nvcc's default flags (no fast math, no flush to zero), as NVRTC compiles candidates.
//
// With a second directory argument, it also evaluates the raw .approx PTX instructions
// (raw_inputs.hpp) densely, into mufu_*.bin there: working data for modelling, not committed.
//
//   nvcc -O2 -arch=sm_90 -o sweep tools/intrinsics-sweep/sweep.cu
//   ./sweep OUT_DIR [RAW_DIR]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "../../tests/support/intrinsic_inputs.hpp"
#include "raw_inputs.hpp"

namespace ki = kj::test::intrinsics;

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));  \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

// Index = position in ki::functions(); checked against kNames at start.
static const char* const kNames[] = {
    "__expf",     "__exp10f", "__logf",      "__log2f",     "__log10f",  "__sinf", "__cosf",
    "__tanf",     "rsqrtf",   "__frsqrt_rn", "__saturatef", "__frcp_rn", "sqrtf",  "__fsqrt_rn",
    "__fdividef", "__powf",   "expf",        "logf",        "sinf"};

__device__ float apply(int f, float x, float y) {
  switch (f) {
  case 0:
    return __expf(x);
  case 1:
    return __exp10f(x);
  case 2:
    return __logf(x);
  case 3:
    return __log2f(x);
  case 4:
    return __log10f(x);
  case 5:
    return __sinf(x);
  case 6:
    return __cosf(x);
  case 7:
    return __tanf(x);
  case 8:
    return rsqrtf(x);
  case 9:
    return __frsqrt_rn(x);
  case 10:
    return __saturatef(x);
  case 11:
    return __frcp_rn(x);
  case 12:
    return sqrtf(x);
  case 13:
    return __fsqrt_rn(x);
  case 14:
    return __fdividef(x, y);
  case 15:
    return __powf(x, y);
  case 16:
    return expf(x);
  case 17:
    return logf(x);
  case 18:
    return sinf(x);
  }
  return 0.0f;
}

__global__ void run_function(int f, const float* x, const float* y, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = apply(f, x[i], y[i]);
}

template <int Op>
__device__ float raw(float x) {
  float r;
  if constexpr (Op == 0) asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 1) asm("ex2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 2) asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 3) asm("lg2.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 4) asm("sin.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 5) asm("cos.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 6) asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 7) asm("rcp.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 8) asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  if constexpr (Op == 9) asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

template <int Op>
__global__ void run_raw(const float* x, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = raw<Op>(x[i]);
}

using RawKernel = void (*)(const float*, float*, int);
static const RawKernel kRaw[] = {run_raw<0>, run_raw<1>, run_raw<2>, run_raw<3>, run_raw<4>,
                                 run_raw<5>, run_raw<6>, run_raw<7>, run_raw<8>, run_raw<9>};

static std::vector<float> on_device(int f, const std::vector<float>& x, const std::vector<float>& y,
                                    RawKernel raw_kernel = nullptr) {
  const int n = static_cast<int>(x.size());
  float *dx, *dy, *dout;
  CHECK(cudaMalloc(&dx, n * sizeof(float)));
  CHECK(cudaMalloc(&dy, n * sizeof(float)));
  CHECK(cudaMalloc(&dout, n * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y.empty() ? x.data() : y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  if (raw_kernel)
    raw_kernel<<<(n + 255) / 256, 256>>>(dx, dout, n);
  else
    run_function<<<(n + 255) / 256, 256>>>(f, dx, dy, dout, n);
  CHECK(cudaGetLastError());
  std::vector<float> out(n);
  CHECK(cudaMemcpy(out.data(), dout, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK(cudaFree(dx));
  CHECK(cudaFree(dy));
  CHECK(cudaFree(dout));
  return out;
}

static void append(std::ofstream& f, const std::vector<float>& v) {
  // Result bits as little-endian uint32: the host (x86-64) byte order already.
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [RAW_DIR]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const auto& fs = ki::functions();
  if (fs.size() != sizeof kNames / sizeof kNames[0]) return std::fprintf(stderr, "table\n"), 1;

  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int runtime = 0, driver = 0;
  CHECK(cudaRuntimeGetVersion(&runtime));
  CHECK(cudaDriverGetVersion(&driver));

  std::ofstream results(dir / "results.bin", std::ios::binary);
  std::ofstream manifest(dir / "manifest.txt");
  manifest << "# H200 results of CUDA math intrinsics: tools/intrinsics-sweep/sweep.cu\n"
           << "# device " << prop.name << " sm_" << prop.major << prop.minor << ", runtime "
           << runtime << ", driver " << driver << ", nvcc " << __CUDACC_VER_MAJOR__ << "."
           << __CUDACC_VER_MINOR__ << "." << __CUDACC_VER_BUILD__ << ", default flags\n"
           << "# results.bin: per function in this order, count little-endian uint32 result bits\n"
           << "# name arity count input_fnv1a64\n";
  for (std::size_t k = 0; k < fs.size(); ++k) {
    if (std::string(fs[k].name) != kNames[k]) return std::fprintf(stderr, "order\n"), 1;
    std::vector<float> x, y;
    if (fs[k].arity == 1) {
      x = ki::unary_inputs(fs[k].name);
    } else {
      auto p = ki::binary_inputs(fs[k].name);
      x = std::move(p.x);
      y = std::move(p.y);
    }
    if (x.size() != ki::kCount) return std::fprintf(stderr, "%s: count\n", fs[k].name), 1;
    append(results, on_device(static_cast<int>(k), x, y));
    char h[32];
    std::snprintf(h, sizeof h, "%016llx", static_cast<unsigned long long>(ki::hash_inputs(x, y)));
    manifest << fs[k].name << " " << fs[k].arity << " " << x.size() << " " << h << "\n";
  }

  if (argc > 2) {
    const std::filesystem::path raw_dir = argv[2];
    std::filesystem::create_directories(raw_dir);
    std::map<std::string, std::ofstream> files;
    std::ofstream raw_manifest(raw_dir / "mufu_manifest.txt");
    const auto& ops = kj::sweep::raw_ops();
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::vector<float> x = kj::sweep::raw_inputs(ops[k]);
      auto it = files.find(ops[k].file);
      if (it == files.end())
        it = files.emplace(ops[k].file, std::ofstream(raw_dir / ops[k].file, std::ios::binary))
                 .first;
      append(it->second, on_device(0, x, {}, kRaw[k]));
      raw_manifest << ops[k].ptx << " " << ops[k].file << " " << x.size() << "\n";
    }
  }
  std::printf("done: %zu functions into %s\n", fs.size(), dir.c_str());
  return 0;
}
