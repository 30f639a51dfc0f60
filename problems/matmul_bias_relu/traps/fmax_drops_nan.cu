// problems/matmul_bias_relu, trap: the ReLU written fmaxf(v, 0), the usual one-liner. fmaxf
// returns the other operand when one is NaN, so a NaN pre-activation (a NaN in A, B or bias, or
// an Inf and a -Inf in one dot product) comes out as 0. Right on every finite case; the nan rule
// is "propagate" (torch.relu keeps NaN), so the special-value cases catch it.
/* kjudge
[[launch]]
kernel = "matmul_bias_relu_fmax"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "bias", "C", "M", "N", "K"]
*/
__global__ void matmul_bias_relu_fmax(const float* __restrict__ A, const float* __restrict__ B,
                                      const float* __restrict__ bias, float* __restrict__ C,
                                      int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<long long>(row) * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[static_cast<long long>(k) * N + col];
  C[static_cast<long long>(row) * N + col] = fmaxf(acc + bias[col], 0.0f);
}
