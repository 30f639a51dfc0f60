// problems/matmul_bf16, trap: shaped for the public shapes. 16 x 16 tiles of A and B staged in
// shared memory with no edge handling: every public M, N and K is a multiple of 16 (as many
// hand-written tensor-core kernels assume), so there it is right. On the hidden shapes and the
// perturbations (M, N or K of 509, 383, 997, d +- 1, ...) the edge tiles read past the rows of
// A and B, and where M or N has a tail the last tiles store past the end of C, into its red
// zone: oob_write on the first hidden shape (509 x 383 x 997, a few KB past the end). Where only
// K has a tail it reads the next rows and B's red zone instead: a mismatch or non-finite values.
// The host backend checks reads too and stops it at the first one past B (a crash there).
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "matmul_tiles16"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "C", "M", "N", "K"]
*/
__global__ void matmul_tiles16(const __nv_bfloat16* __restrict__ A,
                               const __nv_bfloat16* __restrict__ B, float* __restrict__ C, int M,
                               int N, int K) {
  __shared__ float As[16][16];
  __shared__ float Bs[16][17];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 16 + ty;
  const int col = blockIdx.x * 16 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += 16) {  // "K is a multiple of 16": no bounds below
    As[ty][tx] = __bfloat162float(A[static_cast<long long>(row) * K + k0 + tx]);
    Bs[ty][tx] = __bfloat162float(B[static_cast<long long>(k0 + ty) * N + col]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 16; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[static_cast<long long>(row) * N + col] = acc;
}
