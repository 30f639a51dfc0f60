// problems/matmul_bias_relu, trap: the epilogue in the wrong order, relu(A B) + bias instead of
// relu(A B + bias). Every element whose product is negative comes out as its bias instead of 0
// (or of the ReLU of the biased sum), an error of the bias's size (~1) against a bound of ~1e-4:
// a mismatch on the first case.
/* kjudge
[[launch]]
kernel = "matmul_relu_then_bias"
grid = ["ceil_div(N, 16)", "ceil_div(M, 16)"]
block = [16, 16]
args = ["A", "B", "bias", "C", "M", "N", "K"]
*/
__global__ void matmul_relu_then_bias(const float* __restrict__ A, const float* __restrict__ B,
                                      const float* __restrict__ bias, float* __restrict__ C,
                                      int M, int N, int K) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<long long>(row) * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[static_cast<long long>(k) * N + col];
  C[static_cast<long long>(row) * N + col] = (acc < 0.0f ? 0.0f : acc) + bias[col];
}
