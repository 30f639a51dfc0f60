// problems/rmsnorm, trap: a precision downgrade. The naive thread-per-row kernel with its sum of
// squares kept in the storage type, bf16 (8 significant bits), as a kernel templated on the
// element type writes `T sum = 0`. Once the sum passes 256 its ulp is 2 and every square below 1
// (68% of a unit normal's) rounds away; on rows of thousands the sum stalls at a fraction of
// its value and rstd comes out tens of percent high (8191 elements: about 40 times the bound).
// Short rows hide it (rows of 64 stay within relative(4)); the long rows of every public shape
// do not.
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "rmsnorm_rows_bf16"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "w", "y", "eps", "R", "C"]
*/
__global__ void rmsnorm_rows_bf16(const __nv_bfloat16* __restrict__ x,
                                  const __nv_bfloat16* __restrict__ w,
                                  __nv_bfloat16* __restrict__ y, float eps, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const __nv_bfloat16* xr = x + r * C;
  __nv_bfloat16* yr = y + r * C;
  __nv_bfloat16 squares = __float2bfloat16_rn(0.0f);
  for (int j = 0; j < C; ++j) squares = __hadd(squares, __hmul(xr[j], xr[j]));
  const float rstd = 1.0f / sqrtf(__bfloat162float(squares) / C + eps);
  for (int j = 0; j < C; ++j)
    yr[j] = __float2bfloat16_rn(__bfloat162float(xr[j]) * rstd * __bfloat162float(w[j]));
}
