// problems/matmul_bias_relu, correct, the false-rejection control: the dot products are summed
// backwards, from k = K - 1 down to 0. 32 x 32 shared-memory tiles of A and B (zero-filled past
// the edges) are walked from the last k tile to the first and each tile from its highest k
// down, so every element's rounding is as large as the sequential reference's but independent
// of it: `relative` must accept it. The bias is added to the finished sum, then the ReLU as
// `v < 0 ? 0 : v` (NaN kept).
/* kjudge
[[launch]]
kernel = "matmul_bias_relu_reversed<32>"
grid = ["ceil_div(N, 32)", "ceil_div(M, 32)"]
block = [32, 32]
args = ["A", "B", "bias", "C", "M", "N", "K"]
*/
template <int TILE>
__global__ void matmul_bias_relu_reversed(const float* __restrict__ A, const float* __restrict__ B,
                                          const float* __restrict__ bias, float* __restrict__ C,
                                          int M, int N, int K) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = (K - 1) / TILE * TILE; k0 >= 0; k0 -= TILE) {
    As[ty][tx] = (row < M && k0 + tx < K) ? A[static_cast<long long>(row) * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = (k0 + ty < K && col < N) ? B[static_cast<long long>(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = TILE - 1; k >= 0; --k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) {
    const float v = acc + bias[col];
    C[static_cast<long long>(row) * N + col] = v < 0.0f ? 0.0f : v;
  }
}
