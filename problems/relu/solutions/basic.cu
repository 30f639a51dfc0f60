// problems/relu, correct: one thread per element of the flattened matrix; `v < 0 ? 0 : v`
// keeps a NaN (the comparison is false for it).
/* kjudge
[[launch]]
kernel = "relu"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = x[i];
  y[i] = v < 0.0f ? 0.0f : v;
}
