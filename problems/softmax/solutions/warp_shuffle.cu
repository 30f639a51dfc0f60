// problems/softmax, correct: one warp per row, eight rows per block; lanes stride along the row
// and combine maxima and sums with butterfly shuffles (every lane ends with the row's values).
/* kjudge
[[launch]]
kernel = "softmax_warp"
grid = ["ceil_div(R, 8)"]
block = [256]
args = ["x", "y", "R", "C"]
*/
__global__ void softmax_warp(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  const int lane = threadIdx.x % 32;
  const long long r = static_cast<long long>(blockIdx.x) * 8 + threadIdx.x / 32;
  if (r >= R) return;  // a whole warp leaves together, so the shuffles below see full warps
  const float* xr = x + r * C;
  float* yr = y + r * C;

  float m = __int_as_float(0xff800000);  // -inf
  for (int j = lane; j < C; j += 32) m = fmaxf(m, xr[j]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));

  float sum = 0.0f;
  for (int j = lane; j < C; j += 32) sum += expf(xr[j] - m);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);

  const float inv = 1.0f / sum;
  for (int j = lane; j < C; j += 32) yr[j] = expf(xr[j] - m) * inv;
}
