// problems/gelu, trap: hard-coded shapes. The 16-byte vector loop of solutions/fast.cu without
// its scalar tail: it assumes the element count is a multiple of 8, as both public shapes are
// (8192 x 4096 and 6000 x 5000), so the last n % 8 elements of an odd count (every hidden shape,
// most perturbed ones) are never written.
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "gelu_vec8_no_tail"
grid = ["min(ceil_div(R * C, 8 * 256), 2112)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__device__ __forceinline__ float gelu_f(float v) {
  const float u = v * fmaf(0.0356774081f, v * v, 0.7978845608f);
  return __fdividef(v, 1.0f + __expf(-2.0f * u));
}

__global__ void gelu_vec8_no_tail(const __half* __restrict__ x, __half* __restrict__ y,
                                  long long n) {
  const long long nvec = n / 8;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  uint4* yv = reinterpret_cast<uint4*>(y);
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < nvec;
       i += stride) {
    uint4 raw = xv[i];
    __half2* h = reinterpret_cast<__half2*>(&raw);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(h[k]);
      h[k] = __floats2half2_rn(gelu_f(f.x), gelu_f(f.y));
    }
    yv[i] = raw;
  }
}
