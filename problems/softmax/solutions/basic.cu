// problems/softmax, correct: one thread per row, three sequential passes (max, sum of
// exponentials, normalise) in f32, the same order as the reference.
/* kjudge
[[launch]]
kernel = "softmax_rows"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "y", "R", "C"]
*/
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  float m = xr[0];
  for (int j = 1; j < C; ++j) m = fmaxf(m, xr[j]);
  float sum = 0.0f;
  for (int j = 0; j < C; ++j) sum += expf(xr[j] - m);
  for (int j = 0; j < C; ++j) yr[j] = expf(xr[j] - m) / sum;
}
