// problems/rmsnorm, trap: input mutation. It writes x * rstd back into x (through const_cast)
// to save a buffer, then scales that by w into y. y is right; the input the caller passed is
// destroyed, and a harness that computes its expected values from x after the run compares
// garbage with garbage.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "rmsnorm_in_place"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "w", "y", "eps", "R", "C"]
*/
__global__ void rmsnorm_in_place(const __nv_bfloat16* x, const __nv_bfloat16* __restrict__ w,
                                 __nv_bfloat16* __restrict__ y, float eps, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  __nv_bfloat16* xr = const_cast<__nv_bfloat16*>(x) + r * C;
  __nv_bfloat16* yr = y + r * C;
  float squares = 0.0f;
  for (int j = 0; j < C; ++j) {
    const float v = __bfloat162float(xr[j]);
    squares += v * v;
  }
  const float rstd = 1.0f / sqrtf(squares / C + eps);
  // Kept in f32 on the way through: only the write-back to x is the fault, not a rounding.
  for (int j = 0; j < C; ++j) {
    const float n = __bfloat162float(xr[j]) * rstd;
    xr[j] = __float2bfloat16_rn(n);
    yr[j] = __float2bfloat16_rn(n * __bfloat162float(w[j]));
  }
}
