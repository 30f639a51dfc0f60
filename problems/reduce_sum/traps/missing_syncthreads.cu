// problems/reduce_sum, trap: the shared-memory tree without the __syncthreads() between its
// levels. A warp reads its partner's slot before the partner's warp has added into it, so which
// partial sums reach red[0] depends on how the warps happen to be scheduled: a race that gives
// wrong sums, different from run to run.
/* kjudge
[[launch]]
kernel = "row_sum_racy<1024>"
grid = ["R"]
block = [1024]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void row_sum_racy(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float s = 0.0f;
  for (int j = t; j < C; j += THREADS) s += xr[j];
  red[t] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];  // no barrier after this level
  }
  if (t == 0) y[blockIdx.x] = red[0];
}
