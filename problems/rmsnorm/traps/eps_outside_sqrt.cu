// problems/rmsnorm, trap: 1 / (sqrt(ms) + eps) instead of 1 / sqrt(ms + eps), a common slip.
// Relatively off by eps / sqrt(ms) - eps / (2 ms): 1e-5 at unit scale, far below bf16's
// half ulp (2^-9), but 5% once x is scaled by 0.01 (ms = 1e-4), about 10 bf16 ulps.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "rmsnorm_rows"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "w", "y", "eps", "R", "C"]
*/
__global__ void rmsnorm_rows(const __nv_bfloat16* __restrict__ x,
                             const __nv_bfloat16* __restrict__ w, __nv_bfloat16* __restrict__ y,
                             float eps, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const __nv_bfloat16* xr = x + r * C;
  __nv_bfloat16* yr = y + r * C;
  float squares = 0.0f;
  for (int j = 0; j < C; ++j) {
    const float v = __bfloat162float(xr[j]);
    squares += v * v;
  }
  const float rstd = 1.0f / (sqrtf(squares / C) + eps);
  for (int j = 0; j < C; ++j)
    yr[j] = __float2bfloat16_rn(__bfloat162float(xr[j]) * rstd * __bfloat162float(w[j]));
}
