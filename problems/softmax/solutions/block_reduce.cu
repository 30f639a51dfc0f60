// problems/softmax, correct: one block per row; the threads stride along the row and combine
// their maxima and partial sums with a shared-memory tree, a different order of additions than
// the reference's (the `relative` policy must accept it).
/* kjudge
[[launch]]
kernel = "softmax_block<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void softmax_block(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
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
  __syncthreads();  // everyone has read red[0] before it is reused

  float sum = 0.0f;
  for (int j = t; j < C; j += THREADS) sum += expf(xr[j] - m);
  red[t] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  const float total = red[0];
  for (int j = t; j < C; j += THREADS) yr[j] = expf(xr[j] - m) / total;
}
