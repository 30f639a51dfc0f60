// problems/bias_add, correct: one thread per element, no precondition.
/* kjudge
[[launch]]
kernel = "bias_add"
grid = ["ceil_div(N * C, 256)"]
block = [256]
args = ["x", "b", "y", "N", "C"]
*/
__global__ void bias_add(const float* x, const float* b, float* y, int N, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < static_cast<long long>(N) * C) y[i] = x[i] + b[i % C];
}
