// problems/matmul_bf16, trap: a precision downgrade. The running sum is kept in bf16 (each step
// a fused multiply-add rounded back to 8 significant bits, what __hfma on bf16 does), as if
// "bf16 GEMM" meant bf16 all the way; only the final value is widened to the f32 output. Once the sum reaches ~30 a product
// near 1 moves it by at most an ulp of 0.125, so the error is some 10^4 times the f32
// accumulation's, far outside `relative`, though near torch's bf16 rtol of 1.6e-2.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "matmul_bf16_acc"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "C", "M", "N", "K"]
*/
__global__ void matmul_bf16_acc(const __nv_bfloat16* __restrict__ A,
                                const __nv_bfloat16* __restrict__ B, float* __restrict__ C,
                                int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const __nv_bfloat16* a = A + static_cast<long long>(row) * K;
  __nv_bfloat16 acc = __float2bfloat16_rn(0.0f);
  for (int k = 0; k < K; ++k) {
    const float p = __bfloat162float(a[k]) * __bfloat162float(B[static_cast<long long>(k) * N + col]);
    acc = __float2bfloat16_rn(__bfloat162float(acc) + p);
  }
  C[static_cast<long long>(row) * N + col] = __bfloat162float(acc);
}
