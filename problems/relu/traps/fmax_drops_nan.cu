// problems/relu, trap: fmaxf(v, 0) is the usual one-liner, but fmaxf returns the other operand
// when one is NaN, so a NaN input becomes 0. The problem's nan rule is "propagate" (torch.relu
// keeps NaN), so this is wrong exactly on the special-value cases with a NaN input.
/* kjudge
[[launch]]
kernel = "relu_fmax"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void relu_fmax(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
