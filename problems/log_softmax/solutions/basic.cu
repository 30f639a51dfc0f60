// problems/log_softmax, correct: one thread per row, three sequential passes (max, sum of
// exponentials, output) in f32, the reference's order. The control for the policy's floor: the
// same algorithm as the reference, differing only in expf/logf against the reference's build.
/* kjudge
[[launch]]
kernel = "log_softmax_rows"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "y", "R", "C"]
*/
__global__ void log_softmax_rows(const float* __restrict__ x, float* __restrict__ y, int R,
                                 int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  float m = xr[0];
  for (int j = 1; j < C; ++j) m = fmaxf(m, xr[j]);
  float sum = 0.0f;
  for (int j = 0; j < C; ++j) sum += expf(xr[j] - m);
  const float log_sum = logf(sum);
  for (int j = 0; j < C; ++j) yr[j] = (xr[j] - m) - log_sum;
}
