// problems/softmax, trap: writes zeros. Every output of a 4096-wide softmax is about 2.4e-4, so
// an absolute tolerance such as 1e-2 would pass it; the bound must scale with the signal.
/* kjudge
[[launch]]
kernel = "softmax_zeros"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["y", "R * C"]
*/
__global__ void softmax_zeros(float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.0f;
}
