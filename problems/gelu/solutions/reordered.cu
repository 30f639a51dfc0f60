// problems/gelu, correct: the false-rejection control of an elementwise op. Nothing is summed,
// so instead of another order of additions it evaluates the same tanh form with other
// roundings: the inner polynomial in Horner form with an fma, u = x * fma(c1, x*x, c0) with
// c1 = sqrt(2/pi) * 0.044715 folded into one constant, and 0.5 x (1 + t) as fma(0.5 x, t, 0.5 x).
// One thread per element, float math, one rounding to f16 at the end: it must pass.
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "gelu_horner"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void gelu_horner(const __half* __restrict__ x, __half* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  const float u = v * fmaf(0.0356774081f, v * v, 0.7978845608f);
  const float h = 0.5f * v;
  y[i] = __float2half_rn(fmaf(h, tanhf(u), h));
}
