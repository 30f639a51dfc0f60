// problems/layernorm, trap: 1 / (sqrt(var) + eps) instead of 1 / sqrt(var + eps), a common
// slip. Relatively off by eps / sqrt(var) - eps / (2 var): 5e-6 for unit variance (tens of
// ulps), and 5% once the inputs are scaled by 0.01 (variance 1e-4).
/* kjudge
[[launch]]
kernel = "layernorm_rows"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "gamma", "beta", "y", "eps", "R", "C"]
*/
__global__ void layernorm_rows(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y, float eps,
                               int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  float sum = 0.0f;
  for (int j = 0; j < C; ++j) sum += xr[j];
  const float mean = sum / C;
  float squares = 0.0f;
  for (int j = 0; j < C; ++j) {
    const float d = xr[j] - mean;
    squares += d * d;
  }
  const float rstd = 1.0f / (sqrtf(squares / C) + eps);
  for (int j = 0; j < C; ++j) yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
}
