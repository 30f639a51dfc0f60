// cuBLAS, opened at run time for the bench's trusted built-in baselines (`[[baseline]] builtin =
// "cublas:gemm"`) and for the peak rate behind its FLOP floor. kjudge never links cuBLAS: a
// machine without it still judges and benches, and says why the baseline is missing. cuBLAS runs
// in the oracle's process, on the primary context current on the calling thread, on the stream
// given.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <cuda.h>

#include "kjudge/tensor.hpp"

namespace kj {

class Cublas {
public:
  // cuBLAS opened (libcublas.so.13, .12, or the unversioned name) with a handle on `stream`;
  // null with the reason in *why when it cannot be.
  static std::unique_ptr<Cublas> open(CUstream stream, std::string* why);
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  // Row-major C[m, n] = A[m, k] B[k, n], asynchronous on the stream. Operands in `operand`
  // (f32, f64, f16, bf16), C in `result` (the operand's dtype, or f32 for f16 and bf16);
  // accumulation in f64 for f64, else in f32, or with TF32 tensor cores when `tf32` (f32
  // only). Throws InternalError for a size over 2^31 - 1 or a failing call.
  void gemm(CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, DType operand, DType result,
            std::int64_t m, std::int64_t n, std::int64_t k, bool tf32 = false);
  // "cuBLAS 13.0.2"
  const std::string& version() const { return version_; }

  struct Api;

private:
  Cublas() = default;
  const Api* api_ = nullptr;
  void* handle_ = nullptr; // cublasHandle_t
  std::string version_;
};

} // namespace kj
