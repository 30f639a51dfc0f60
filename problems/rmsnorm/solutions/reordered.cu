// problems/rmsnorm, correct: the false-rejection control. One warp per row, eight rows per
// block; each lane keeps four interleaved f32 accumulators (element j goes to accumulator
// (j / 32) % 4), adds them pairwise, and the lanes combine with a butterfly: split accumulators
// and a tree in place of the reference's left-to-right sum. The rest is rounded differently too:
// rsqrtf for 1 / sqrt, the mean as a product by 1/C, and x * (rstd * w) for x * rstd * w.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "rmsnorm_warp_split"
grid = ["ceil_div(R, 8)"]
block = [256]
args = ["x", "w", "y", "eps", "R", "C"]
*/
__global__ void rmsnorm_warp_split(const __nv_bfloat16* __restrict__ x,
                                   const __nv_bfloat16* __restrict__ w,
                                   __nv_bfloat16* __restrict__ y, float eps, int R, int C) {
  const int lane = threadIdx.x % 32;
  const long long r = static_cast<long long>(blockIdx.x) * 8 + threadIdx.x / 32;
  if (r >= R) return;  // a whole warp leaves together: the shuffles below see full warps
  const __nv_bfloat16* xr = x + r * C;
  __nv_bfloat16* yr = y + r * C;

  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  int j = lane;
  for (; j + 96 < C; j += 128) {
#pragma unroll
    for (int a = 0; a < 4; ++a) {
      const float v = __bfloat162float(xr[j + 32 * a]);
      acc[a] = fmaf(v, v, acc[a]);
    }
  }
  for (int a = 0; j < C; j += 32, ++a) {
    const float v = __bfloat162float(xr[j]);
    acc[a] = fmaf(v, v, acc[a]);
  }
  float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);

  const float rstd = rsqrtf(s * (1.0f / C) + eps);
  for (int k = lane; k < C; k += 32)
    yr[k] = __float2bfloat16_rn(__bfloat162float(xr[k]) * (rstd * __bfloat162float(w[k])));
}
