// cuBLAS opened at run time (kjudge/cublas.hpp). Only the handful of entry points the bench
// uses are resolved; their prototypes come from cublas_api.h, so a header/library mismatch in
// the ABI is the toolkit's, not ours. The row-major product is cuBLAS's column-major one with
// the operands swapped: C^T = B^T A^T, where a row-major matrix read column-major is its
// transpose.
#include "kjudge/cublas.hpp"

#include <dlfcn.h>

#include <climits>
#include <mutex>
#include <type_traits>

#include <cublas_api.h>
#include <fmt/format.h>

#include "kjudge/error.hpp"

namespace kj {

struct Cublas::Api {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasGetVersion_v2) get_version = nullptr;
  decltype(&::cublasGetStatusString) status_string = nullptr;
  // The C entry point; the header also declares C++ overloads of the name, so it is spelled out.
  using GemmEx = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                    int, int, const void*, const void*, cudaDataType, int,
                                    const void*, cudaDataType, int, const void*, void*,
                                    cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmEx gemm_ex = nullptr;
  std::string error; // why the library is unusable
};

namespace {

const Cublas::Api& api() {
  static Cublas::Api loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = nullptr;
    std::string tried;
    for (const char* name : {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}) {
      lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib) break;
      const char* err = dlerror();
      tried += fmt::format("{}{}", tried.empty() ? "" : "; ", err ? err : name);
    }
    if (!lib) {
      loaded.error = "cuBLAS not found: " + tried;
      return;
    }
    auto resolve = [&](auto& member, const char* symbol) {
      member = reinterpret_cast<std::remove_reference_t<decltype(member)>>(dlsym(lib, symbol));
      if (!member && loaded.error.empty()) loaded.error = fmt::format("cuBLAS lacks {}", symbol);
    };
    resolve(loaded.create, "cublasCreate_v2");
    resolve(loaded.destroy, "cublasDestroy_v2");
    resolve(loaded.set_stream, "cublasSetStream_v2");
    resolve(loaded.get_version, "cublasGetVersion_v2");
    resolve(loaded.status_string, "cublasGetStatusString");
    resolve(loaded.gemm_ex, "cublasGemmEx");
  });
  return loaded;
}

cudaDataType cuda_type(DType d) {
  switch (d) {
  case DType::f64: return CUDA_R_64F;
  case DType::f32: return CUDA_R_32F;
  case DType::f16: return CUDA_R_16F;
  case DType::bf16: return CUDA_R_16BF;
  default: break;
  }
  throw InternalError(fmt::format("cuBLAS GEMM takes no {} operands", dtype_name(d)));
}

} // namespace

std::unique_ptr<Cublas> Cublas::open(CUstream stream, std::string* why) {
  const Api& a = api();
  if (!a.error.empty()) {
    if (why) *why = a.error;
    return nullptr;
  }
  std::unique_ptr<Cublas> out(new Cublas());
  out->api_ = &a;
  cublasHandle_t handle = nullptr;
  if (const cublasStatus_t s = a.create(&handle); s != CUBLAS_STATUS_SUCCESS) {
    if (why) *why = fmt::format("cublasCreate: {}", a.status_string(s));
    return nullptr;
  }
  out->handle_ = handle;
  a.set_stream(handle, reinterpret_cast<cudaStream_t>(stream));
  int version = 0;
  a.get_version(handle, &version);
  // CUBLAS_VERSION's encoding: major * 10000 + minor * 100 + patch.
  out->version_ = fmt::format("cuBLAS {}.{}.{}", version / 10000, version / 100 % 100,
                              version % 100);
  return out;
}

Cublas::~Cublas() {
  if (handle_) api_->destroy(static_cast<cublasHandle_t>(handle_));
}

void Cublas::gemm(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, DType operand, DType result,
                  std::int64_t m, std::int64_t n, std::int64_t k, bool tf32) {
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
    throw InternalError(fmt::format("cuBLAS GEMM of {} x {} x {}: a size over 2^31 - 1", m, n, k));
  const bool f64 = operand == DType::f64;
  const double alpha64 = 1, beta64 = 0;
  const float alpha32 = 1, beta32 = 0;
  const void* alpha = f64 ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = f64 ? static_cast<const void*>(&beta64) : &beta32;
  const cublasComputeType_t compute =
      f64 ? CUBLAS_COMPUTE_64F : (tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F);
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
  const cublasStatus_t s = api_->gemm_ex(
      static_cast<cublasHandle_t>(handle_), CUBLAS_OP_N, CUBLAS_OP_N, ni, mi, ki, alpha,
      reinterpret_cast<const void*>(b), cuda_type(operand), ni, reinterpret_cast<const void*>(a),
      cuda_type(operand), ki, beta, reinterpret_cast<void*>(c), cuda_type(result), ni, compute,
      CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS)
    throw InternalError(fmt::format("cublasGemmEx ({} x {} x {}, {} -> {}): {}", m, n, k,
                                    dtype_name(operand), dtype_name(result),
                                    api_->status_string(s)));
}

} // namespace kj
