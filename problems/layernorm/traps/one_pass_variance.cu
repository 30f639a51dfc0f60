// problems/layernorm, trap: the variance in one pass as E[x^2] - E[x]^2. Exact in real numbers,
// catastrophic in f32 once the mean is large against the spread: with x ~ N(10, 1) both terms
// are about 100 and their difference about 1, so the sums' rounding (100 x 2^-24 per element)
// becomes far more of the variance than the bound allows. No scaling of x moves the mean away
// from zero, so of the cancellation only the mean-offset case (x + 10) shows anything; x^2 also
// overflows where x is dtype_max (a special-value case), where two-pass solutions do not.
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
  float sum = 0.0f, squares = 0.0f;
  for (int j = 0; j < C; ++j) {
    sum += xr[j];
    squares += xr[j] * xr[j];
  }
  const float mean = sum / C;
  const float var = squares / C - mean * mean;
  const float rstd = 1.0f / sqrtf(var + eps);
  for (int j = 0; j < C; ++j) yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
}
