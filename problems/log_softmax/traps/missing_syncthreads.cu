// problems/log_softmax, trap: one block of 1024 threads per row whose shared-memory tree for the
// sum of exponentials has no __syncthreads() between its levels (the max tree has them: a racy
// max would still give the right answer, since log-sum-exp does not depend on the shift). A warp
// reads its partner's slot before the partner's warp has added into it, so which partial sums
// reach red[0] depends on scheduling: a wrong log(sum), shifting the whole row, different from
// run to run.
/* kjudge
[[launch]]
kernel = "log_softmax_racy<1024>"
grid = ["R"]
block = [1024]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void log_softmax_racy(const float* __restrict__ x, float* __restrict__ y, int R,
                                 int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;

  float m = __int_as_float(0xff800000);  // -inf
  for (int j = t; j < C; j += THREADS) m = fmaxf(m, xr[j]);
  red[t] = m;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmaxf(red[t], red[t + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();

  float sum = 0.0f;
  for (int j = t; j < C; j += THREADS) sum += expf(xr[j] - m);
  red[t] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];  // no barrier after this level
  }
  __syncthreads();  // too late: the levels above already raced
  const float log_sum = logf(red[0]);
  for (int j = t; j < C; j += THREADS) yr[j] = (xr[j] - m) - log_sum;
}
