// problems/layernorm, trap: one block per row with the grid capped at 1024 blocks and no loop
// over the remaining rows, so rows 1024 and up are never written (the first public shape has
// 4096 rows).
/* kjudge
[[launch]]
kernel = "layernorm_block<256>"
grid = ["min(R, 1024)"]
block = [256]
args = ["x", "gamma", "beta", "y", "eps", "R", "C"]
*/
template <int THREADS>
__device__ float block_sum(float v, float* red) {
  const int t = threadIdx.x;
  red[t] = v;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  const float total = red[0];
  __syncthreads();
  return total;
}

template <int THREADS>
__global__ void layernorm_block(const float* __restrict__ x, const float* __restrict__ gamma,
                                const float* __restrict__ beta, float* __restrict__ y, float eps,
                                int R, int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;
  float s = 0.0f;
  for (int j = t; j < C; j += THREADS) s += xr[j];
  const float mean = block_sum<THREADS>(s, red) / C;
  float q = 0.0f;
  for (int j = t; j < C; j += THREADS) {
    const float d = xr[j] - mean;
    q += d * d;
  }
  const float rstd = 1.0f / sqrtf(block_sum<THREADS>(q, red) / C + eps);
  for (int j = t; j < C; j += THREADS) yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
}
