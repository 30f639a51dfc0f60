// problems/matmul, correct: the classic shared-memory tiling, TILE x TILE tiles of A and B
// staged in shared memory, zero-filled past the edges so that any M, N and K work. The k order
// is the reference's; the zero-filled terms add exact zeros.
/* kjudge
[[launch]]
kernel = "matmul_tiled<32>"
grid = ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block = [32, 32]
args = ["A", "B", "C", "M", "N", "K"]
*/
template <int TILE>
__global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                             float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[static_cast<long long>(row) * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[static_cast<long long>(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[static_cast<long long>(row) * N + col] = acc;
}
