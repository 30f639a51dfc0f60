// problems/mlp_chain, solution: two launches, a thread per element, each dot product summed in
// f32 and rounded once to bf16; h lies in a bf16 scratch buffer between them, exposed as the
// problem's stage h. `kjudge localize` finds every stage at the reference's quality.
#include <cuda_bf16.h>

/* kjudge
[[scratch]]
name = "hbuf"
dtype = "bf16"
shape = ["M", "H"]
stage = "h"

[[launch]]
kernel = "matmul_f32"
grid = ["ceil_div(H, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["x", "w1", "hbuf", "M", "H", "K"]
stage = "h"

[[launch]]
kernel = "matmul_f32"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["hbuf", "w2", "y", "M", "N", "H"]
*/
__global__ void matmul_f32(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
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
