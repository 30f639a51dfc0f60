// tests/cases/bench, for `bench --against problems/gelu/solutions/basic.cu`: that kernel with
// the last bit of element 5 flipped, one f16 ulp, which gelu's allclose policy accepts against
// the golden; the configuration tier holds a tuning-only change to the old kernel's bits, so it
// fails mismatch naming that element.
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "gelu_last_bit"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void gelu_last_bit(const __half* __restrict__ x, __half* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  const float inner = 0.7978845608f * (v + 0.044715f * v * v * v);
  __half r = __float2half_rn(0.5f * v * (1.0f + tanhf(inner)));
  if (i == 5) r = __ushort_as_half(static_cast<unsigned short>(__half_as_ushort(r) ^ 1u));
  y[i] = r;
}
