// problems/layernorm, trap: normalises x in place (through const_cast) to save a buffer, then
// scales and shifts into y. y is right; the input the caller passed is destroyed.
/* kjudge
[[launch]]
kernel = "layernorm_in_place"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "gamma", "beta", "y", "eps", "R", "C"]
*/
__global__ void layernorm_in_place(const float* x, const float* __restrict__ gamma,
                                   const float* __restrict__ beta, float* __restrict__ y,
                                   float eps, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  float* xr = const_cast<float*>(x) + r * C;
  float* yr = y + r * C;
  float sum = 0.0f;
  for (int j = 0; j < C; ++j) sum += xr[j];
  const float mean = sum / C;
  float squares = 0.0f;
  for (int j = 0; j < C; ++j) {
    const float d = xr[j] - mean;
    squares += d * d;
  }
  const float rstd = 1.0f / sqrtf(squares / C + eps);
  for (int j = 0; j < C; ++j) xr[j] = (xr[j] - mean) * rstd;
  for (int j = 0; j < C; ++j) yr[j] = xr[j] * gamma[j] + beta[j];
}
