// problems/matmul_bf16, correct, the false-rejection control: a CUDA-core kernel whose order of
// additions is not the reference's. Each thread computes one element of C as a split-K sum: the
// k range cut into four contiguous quarters, each summed in order in f32, and the quarters
// combined pairwise, (q0 + q1) + (q2 + q3), as a split-K GEMM combines its partial products.
// More accurate than the sequential reference (four sums a quarter as long), and not equal to
// it: `relative` must accept it.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "matmul_split4"
grid = ["ceil_div(N, 32)", "ceil_div(M, 8)"]
block = [32, 8]
args = ["A", "B", "C", "M", "N", "K"]
*/
__global__ void matmul_split4(const __nv_bfloat16* __restrict__ A,
                              const __nv_bfloat16* __restrict__ B, float* __restrict__ C, int M,
                              int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const __nv_bfloat16* a = A + static_cast<long long>(row) * K;
  const int quarter = (K + 3) / 4;
  float part[4];
#pragma unroll
  for (int p = 0; p < 4; ++p) {
    const int kb = p * quarter, ke = min(K, kb + quarter);
    float s = 0.0f;
    for (int k = kb; k < ke; ++k)
      s += __bfloat162float(a[k]) * __bfloat162float(B[static_cast<long long>(k) * N + col]);
    part[p] = s;
  }
  C[static_cast<long long>(row) * N + col] = (part[0] + part[1]) + (part[2] + part[3]);
}
