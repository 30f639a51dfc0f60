// problems/gelu, trap: a precision downgrade. Everything but the tanh is done in f16 arithmetic
// on pairs (__hmul2, __hadd2: twice the f32 rate), and the tanh comes back rounded to f16, as
// htanh does. Each of the ~7 operations rounds to 11 bits, and 1 + tanh(u) cancels in f16 for
// negative x (tanh near -1 keeps only 2^-11 of absolute precision), so y is off by several ulps
// across the bend and by up to 100% in the negative tail (x < -3), where |y| < 0.004.
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "gelu_half2"
grid = ["ceil_div(ceil_div(R * C, 2), 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__device__ __forceinline__ __half2 tanh_h2(__half2 u) {
  const float2 f = __half22float2(u);
  return __floats2half2_rn(tanhf(f.x), tanhf(f.y));
}

__global__ void gelu_half2(const __half* __restrict__ x, __half* __restrict__ y, long long n) {
  const long long p = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long i = 2 * p;
  if (i >= n) return;
  // Pairs read element by element: the pair at an odd start of a row is not 4-byte aligned
  // in general, and the last pair of an odd count has one element.
  const __half2 v = __halves2half2(x[i], i + 1 < n ? x[i + 1] : __float2half_rn(0.0f));
  const __half2 c0 = __float2half2_rn(0.7978845608f);
  const __half2 c1 = __float2half2_rn(0.044715f);
  const __half2 half = __float2half2_rn(0.5f);
  const __half2 one = __float2half2_rn(1.0f);
  const __half2 v3 = __hmul2(__hmul2(v, v), v);
  const __half2 u = __hmul2(c0, __hadd2(v, __hmul2(c1, v3)));
  const __half2 out = __hmul2(__hmul2(half, v), __hadd2(one, tanh_h2(u)));
  y[i] = __low2half(out);
  if (i + 1 < n) y[i + 1] = __high2half(out);
}
