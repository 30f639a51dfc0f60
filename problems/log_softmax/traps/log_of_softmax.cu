// problems/log_softmax, trap: log(softmax(x)), the log taken of the normalised probability
// exp(x - max) / sum instead of (x - max) - log(sum). The max is subtracted and the sum is a
// tree, so ordinary rows come out within an ulp or two; but for a logit far below its row's max
// (x - max < -104) exp underflows to 0 and log(0) = -inf, where the golden is a finite, very
// negative log-probability: the dtype-max special value (a row holding 3.4e38) shows it.
/* kjudge
[[launch]]
kernel = "log_of_softmax<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void log_of_softmax(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
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
  for (int j = t; j < C; j += THREADS) yr[j] = logf(expf(xr[j] - m) / total);
}
