// problems/layernorm, trap: declares the row length as `float C` (it is only ever divided by),
// but the plan passes the integer dim C: the launch plan and the kernel disagree on the type of
// argument 7, which kjudge reads from the compiled kernel and refuses to launch.
/* kjudge
[[launch]]
kernel = "layernorm_rows"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "gamma", "beta", "y", "eps", "R", "C"]
*/
__global__ void layernorm_rows(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y, float eps,
                               int R, float C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const int n = static_cast<int>(C);
  const float* xr = x + r * n;
  float* yr = y + r * n;
  float sum = 0.0f;
  for (int j = 0; j < n; ++j) sum += xr[j];
  const float mean = sum / C;
  float squares = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float d = xr[j] - mean;
    squares += d * d;
  }
  const float rstd = 1.0f / sqrtf(squares / C + eps);
  for (int j = 0; j < n; ++j) yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
}
