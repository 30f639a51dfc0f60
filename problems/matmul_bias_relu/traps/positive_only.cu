// problems/matmul_bias_relu, trap: stale memory. It stores only the positive outputs, "saving"
// the stores of the zeros on the assumption that C starts zeroed (as a fresh torch.zeros or a
// memset would leave it). kjudge poisons every output before each launch, so the elements the
// ReLU clamps (about half) keep the poison: unwritten_output.
/* kjudge
[[launch]]
kernel = "matmul_bias_relu_skip_zeros"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "bias", "C", "M", "N", "K"]
*/
__global__ void matmul_bias_relu_skip_zeros(const float* __restrict__ A,
                                            const float* __restrict__ B,
                                            const float* __restrict__ bias, float* __restrict__ C,
                                            int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<long long>(row) * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[static_cast<long long>(k) * N + col];
  const float v = acc + bias[col];
  if (v > 0.0f) C[static_cast<long long>(row) * N + col] = v;  // zeros "are already there"
}
