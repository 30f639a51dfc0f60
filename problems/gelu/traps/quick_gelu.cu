// problems/gelu, trap: an approximation shortcut. "Quick GELU", x * sigmoid(1.702 x), is a
// cheaper curve that some models train with, not this function: it differs from the tanh form by
// up to 0.021 (at x = -2.3). The math is in float with one rounding, so only the formula is
// wrong; an absolute tolerance of 2.5e-2 accepts it everywhere, and KernelBench's 1e-2 rejects it
// only for x in [-3.35, -1.6].
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "quick_gelu"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void quick_gelu(const __half* __restrict__ x, __half* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  y[i] = __float2half_rn(v / (1.0f + expf(-1.702f * v)));
}
