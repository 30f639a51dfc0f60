// problems/relu, trap: rounds the input pointer down to 16 bytes through a 32-bit `unsigned`
// (meant `unsigned long long`), which drops the upper half of the address: the loads go to an
// address no allocation covers, an illegal address.
/* kjudge
[[launch]]
kernel = "relu_aligned"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void relu_aligned(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned base = static_cast<unsigned>(reinterpret_cast<unsigned long long>(x)) & ~15u;
  const float* xa = reinterpret_cast<const float*>(static_cast<unsigned long long>(base));
  const float v = xa[i];
  y[i] = v < 0.0f ? 0.0f : v;
}
