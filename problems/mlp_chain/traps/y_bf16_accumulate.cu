// problems/mlp_chain, trap: the first matmul is right, the second keeps its running sum in bf16.
// h is at the reference's quality, so `kjudge localize` must name the output's own stage, y.
#include <cuda_bf16.h>

/* kjudge
[[scratch]]
name = "hbuf"
dtype = "bf16"
shape = ["M", "H"]
stage = "h"

[[launch]]
kernel = "first_f32"
grid = ["ceil_div(H, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["x", "w1", "hbuf", "M", "H", "K"]
stage = "h"

[[launch]]
kernel = "second_bf16"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["hbuf", "w2", "y", "M", "N", "H"]
*/
__global__ void first_f32(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                       __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k)
    acc += __bfloat162float(A[static_cast<long long>(row) * K + k]) *
           __bfloat162float(B[static_cast<long long>(k) * N + col]);
  C[static_cast<long long>(row) * N + col] = __float2bfloat16_rn(acc);
}

// The running sum rounded to bf16 at every step: the precision downgrade this file is about.
__global__ void second_bf16(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                       __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  __nv_bfloat16 acc = __float2bfloat16_rn(0.0f);
  for (int k = 0; k < K; ++k)
    acc = __float2bfloat16_rn(__bfloat162float(acc) +
                              __bfloat162float(A[static_cast<long long>(row) * K + k]) *
                                  __bfloat162float(B[static_cast<long long>(k) * N + col]));
  C[static_cast<long long>(row) * N + col] = acc;
}
