// problems/reduce_sum, trap: the tree loop's step is written `k / 2` instead of `k /= 2`, so k
// never changes and the loop never ends (it has a barrier and stores in it, so the compiler
// keeps it). The launch must be killed at its deadline.
/* kjudge
[[launch]]
kernel = "row_sum_stuck<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void row_sum_stuck(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float s = 0.0f;
  for (int j = t; j < C; j += THREADS) s += xr[j];
  red[t] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k / 2) {
    if (t < k) red[t] += red[t + k];
    __syncthreads();
  }
  if (t == 0) y[blockIdx.x] = red[0];
}
