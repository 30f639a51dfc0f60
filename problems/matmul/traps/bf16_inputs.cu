// problems/matmul, trap: a precision downgrade. It rounds A and B to bf16 before multiplying (as
// a bf16 tensor-core path would) and accumulates in f32: each product carries a relative error
// near 2^-9, some 10^4 times the f32 rounding, yet KernelBench's atol = rtol = 1e-2 accepts it
// on these outputs (magnitude ~sqrt(K), errors ~0.05).
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "matmul_bf16_inputs"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "C", "M", "N", "K"]
*/
__device__ __forceinline__ float to_bf16(float v) {
  return __bfloat162float(__float2bfloat16_rn(v));
}

__global__ void matmul_bf16_inputs(const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<long long>(row) * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += to_bf16(a[k]) * to_bf16(B[static_cast<long long>(k) * N + col]);
  C[static_cast<long long>(row) * N + col] = acc;
}
