// problems/matmul, trap: shaped for the public shapes. The k loop walks whole tiles of 8,
// which is exact for K = 512 and K = 1000, and silently drops the last K % 8 terms of every dot
// product on any other K (the hidden K = 997 and 4099, the perturbations K - 1 and K + 1).
/* kjudge
[[launch]]
kernel = "matmul_tk8"
grid = ["ceil_div(N, 32)", "ceil_div(M, 8)"]
block = [32, 8]
args = ["A", "B", "C", "M", "N", "K"]
*/
constexpr int TK = 8;

__global__ void matmul_tk8(const float* __restrict__ A, const float* __restrict__ B,
                           float* __restrict__ C, int M, int N, int K) {
  __shared__ float As[8][TK];
  __shared__ float Bs[TK][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int row = blockIdx.y * 8 + ty;
  const int col = blockIdx.x * 32 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 + TK <= K; k0 += TK) {  // whole tiles only: K % 8 == 0 "always"
    if (tx < TK) As[ty][tx] = row < M ? A[static_cast<long long>(row) * K + k0 + tx] : 0.0f;
    Bs[ty][tx] = col < N ? B[static_cast<long long>(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TK; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[static_cast<long long>(row) * N + col] = acc;
}
