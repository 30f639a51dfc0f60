// problems/softmax, correct: one thread per row, the online form (a running max, the sum of
// exponentials rescaled whenever the max grows) in one pass, then the normalising pass. Its
// rounding is as large as the reference's and independent of it: the case the per-slice floor
// of relative (docs/design.md "Comparison") exists for.
/* kjudge
[[launch]]
kernel = "softmax_online"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "y", "R", "C"]
*/
__global__ void softmax_online(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  float m = -INFINITY, sum = 0.0f;
  for (int j = 0; j < C; ++j) {
    const float v = xr[j];
    if (v == -INFINITY) continue; // exp(-inf) adds nothing (and -inf - -inf is NaN)
    if (v > m) {
      sum = sum * expf(m - v) + 1.0f;
      m = v;
    } else {
      sum += expf(v - m);
    }
  }
  for (int j = 0; j < C; ++j) yr[j] = expf(xr[j] - m) / sum;
}
