// problems/relu, trap: meant to handle two elements per thread, but only the first of each pair
// is written: the odd elements are left as they were (partial computation).
/* kjudge
[[launch]]
kernel = "relu_pairs"
grid = ["ceil_div(R * C, 512)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void relu_pairs(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = 2 * (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const float v = x[i];
  y[i] = v < 0.0f ? 0.0f : v;
}
