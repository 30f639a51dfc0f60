// tests/cases/bench, for `bench --against problems/gelu/solutions/basic.cu`: a tuning-only
// change of that kernel (blocks of 128 threads instead of 256, the same expression per element),
// so every output is bit-identical to the old kernel's and the configuration tier passes.
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "gelu_block128"
grid = ["ceil_div(R * C, 128)"]
block = [128]
args = ["x", "y", "R * C"]
*/
__global__ void gelu_block128(const __half* __restrict__ x, __half* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  const float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
  y[i] = __float2half_rn(0.5f * v * (1.0f + tanhf(inner)));
}
