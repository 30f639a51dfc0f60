// problems/reduce_sum, trap: a precision downgrade. The per-thread partial sums are kept in bf16
// (8 significant bits) to halve register and shared-memory traffic; once a partial sum reaches
// ~30, adding a value of magnitude ~1 moves it by at most an ulp of 0.125 or not at all.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "row_sum_bf16<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void row_sum_bf16(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  __shared__ __nv_bfloat16 red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  __nv_bfloat16 s = __float2bfloat16_rn(0.0f);
  for (int j = t; j < C; j += THREADS) s = __hadd(s, __float2bfloat16_rn(xr[j]));
  red[t] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (t < k) red[t] = __hadd(red[t], red[t + k]);
    __syncthreads();
  }
  if (t == 0) y[blockIdx.x] = __bfloat162float(red[0]);
}
