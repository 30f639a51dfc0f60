// problems/rmsnorm, trap: partial computation. One block per row (as solutions/fast.cu) with the
// grid capped at 1024 blocks and no loop over the rows beyond it: right for the second public
// shape (1024 rows), while rows 1024 and up of the first (4096 rows) are never written.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "rmsnorm_block<256>"
grid = ["min(R, 1024)"]
block = [256]
args = ["x", "w", "y", "eps", "R", "C"]
*/
template <int THREADS>
__global__ void rmsnorm_block(const __nv_bfloat16* __restrict__ x,
                              const __nv_bfloat16* __restrict__ w,
                              __nv_bfloat16* __restrict__ y, float eps, int R, int C) {
  __shared__ float warp_sums[THREADS / 32];
  __shared__ float row_rstd;
  const int t = threadIdx.x;
  const __nv_bfloat16* xr = x + static_cast<long long>(blockIdx.x) * C;
  __nv_bfloat16* yr = y + static_cast<long long>(blockIdx.x) * C;

  float s = 0.0f;
  for (int j = t; j < C; j += THREADS) {
    const float v = __bfloat162float(xr[j]);
    s = fmaf(v, v, s);
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (t % 32 == 0) warp_sums[t / 32] = s;
  __syncthreads();
  if (t < 32) {
    float v = t < THREADS / 32 ? warp_sums[t] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (t == 0) row_rstd = 1.0f / sqrtf(v / C + eps);
  }
  __syncthreads();
  const float rstd = row_rstd;
  for (int j = t; j < C; j += THREADS)
    yr[j] = __float2bfloat16_rn(__bfloat162float(xr[j]) * rstd * __bfloat162float(w[j]));
}
