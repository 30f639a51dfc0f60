// problems/matmul_bf16, trap: a forbidden library. The kernel the problem asks for is replaced
// by a call to cuBLAS, the library it is timed against (a host wrapper around cublasGemmEx, as
// generated code often ships). A launch plan names only the candidate's own kernels and no
// candidate host code runs, and the header is not on kjudge's include allow-list, so the
// compile fails at the #include before anything else is looked at.
#include <cublas_v2.h>
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "matmul_unused"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "C", "M", "N", "K"]
*/
// What the author meant to run: row-major C = A B as column-major C^T = B^T A^T.
void matmul_cublas(cublasHandle_t handle, const __nv_bfloat16* A, const __nv_bfloat16* B,
                   float* C, int M, int N, int K) {
  const float one = 1.0f, zero = 0.0f;
  cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, CUDA_R_16BF, N, A,
               CUDA_R_16BF, K, &zero, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
               CUBLAS_GEMM_DEFAULT);
}

// A kernel for the plan to name; it does nothing, the work was to be cuBLAS's.
__global__ void matmul_unused(const __nv_bfloat16* __restrict__ A,
                              const __nv_bfloat16* __restrict__ B, float* __restrict__ C, int M,
                              int N, int K) {}
