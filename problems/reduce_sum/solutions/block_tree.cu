// problems/reduce_sum, correct: one block per row; each thread sums a strided subset of the
// row, then a shared-memory tree combines the partial sums (a different order than the
// reference's, which the `relative` policy must accept).
/* kjudge
[[launch]]
kernel = "row_sum_tree<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void row_sum_tree(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float s = 0.0f;
  for (int j = t; j < C; j += THREADS) s += xr[j];
  red[t] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    __syncthreads();
  }
  if (t == 0) y[blockIdx.x] = red[0];
}
