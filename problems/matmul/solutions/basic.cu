// problems/matmul, correct: one thread per element of C, the dot product over k in order (the
// reference's order).
/* kjudge
[[launch]]
kernel = "matmul_naive"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "C", "M", "N", "K"]
*/
__global__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B,
                             float* __restrict__ C, int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<long long>(row) * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[static_cast<long long>(k) * N + col];
  C[static_cast<long long>(row) * N + col] = acc;
}
