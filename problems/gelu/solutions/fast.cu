// problems/gelu, correct and fast: a grid-stride loop over 16-byte vectors (8 halves per load
// and per store), then a scalar tail for the last n % 8 elements (the hidden and perturbed
// counts are odd). Tensors start 256-byte aligned, so the flat vector view is aligned. The math
// is in float with one rounding to f16 at the end, in the sigmoid form of the same function:
// 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)), so y = x / (1 + exp(-2u)) costs one exp and one
// reciprocal (two special-function ops) instead of tanhf's branches, which keeps the kernel
// memory-bound. The form has no cancellation in the negative tail (1 + tanh(u) with tanh near -1
// loses digits); its error is far below f16's half ulp.
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "gelu_vec8"
# 2112 = 16 blocks per SM of an H200 (132 SMs), twice what fits at once; larger counts loop.
grid = ["min(ceil_div(R * C, 8 * 256), 2112)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__device__ __forceinline__ float gelu_f(float v) {
  // u = sqrt(2/pi) (v + 0.044715 v^3) = v (c0 + c1 v^2); e = exp(-2u).
  const float c0 = 0.7978845608f;
  const float c1 = 0.0356774081f;  // sqrt(2/pi) * 0.044715
  const float u = v * fmaf(c1, v * v, c0);
  return __fdividef(v, 1.0f + __expf(-2.0f * u));
}

__device__ __forceinline__ uint4 gelu8(uint4 raw) {
  __half2* h = reinterpret_cast<__half2*>(&raw);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __half22float2(h[k]);
    h[k] = __floats2half2_rn(gelu_f(f.x), gelu_f(f.y));
  }
  return raw;
}

__global__ void gelu_vec8(const __half* __restrict__ x, __half* __restrict__ y, long long n) {
  const long long nvec = n / 8;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  uint4* yv = reinterpret_cast<uint4*>(y);
  // Two vectors per step, both loads issued before either is used: 32 bytes in flight per
  // thread, enough to cover HBM latency at this occupancy.
  long long i = first;
  for (; i + stride < nvec; i += 2 * stride) {
    const uint4 a = xv[i];
    const uint4 b = xv[i + stride];
    yv[i] = gelu8(a);
    yv[i + stride] = gelu8(b);
  }
  if (i < nvec) yv[i] = gelu8(xv[i]);
  // The tail: fewer than 8 elements, one per thread of the grid's first threads.
  const long long t = nvec * 8 + first;
  if (t < n) y[t] = __float2half_rn(gelu_f(__half2float(x[t])));
}
