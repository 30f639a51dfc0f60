// problems/relu, trap: the grid is R * C / 256 rounded down (and the kernel, trusting it, has no
// guard), so the last (R * C) % 256 elements are never written. Right whenever 256 divides R * C,
// as it does for the first public shape.
/* kjudge
[[launch]]
kernel = "relu_full_blocks"
grid = ["R * C / 256"]
block = [256]
args = ["x", "y"]
*/
__global__ void relu_full_blocks(const float* __restrict__ x, float* __restrict__ y) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const float v = x[i];
  y[i] = v < 0.0f ? 0.0f : v;
}
