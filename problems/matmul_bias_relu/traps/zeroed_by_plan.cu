// problems/matmul_bias_relu, trap (the problem owns initialisation): positive_only.cu with one
// line more, `[outputs.C] init = "zero"`, which once switched the poisoning of C off and let the
// ReLU that stores only positive values pass check and bench. A candidate's plan cannot change
// what the problem decides: launch_error naming the field.
/* kjudge
[[launch]]
kernel = "matmul_bias_relu_skip_zeros"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "bias", "C", "M", "N", "K"]

[outputs.C]
init = "zero"
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
