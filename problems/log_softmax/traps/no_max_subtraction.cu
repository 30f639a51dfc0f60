// problems/log_softmax, trap: y = x - log(sum(exp(x))) without subtracting the row maximum (one
// block per row, a shared-memory tree for the sum, so that the order of additions is not what
// fails it). As accurate as the stable form for ordinary inputs, but exp overflows once an input
// passes about 88: a row holding the f32 maximum gives log(inf) = inf and y = x - inf = -inf
// where the golden is finite.
/* kjudge
[[launch]]
kernel = "log_softmax_naive<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void log_softmax_naive(const float* __restrict__ x, float* __restrict__ y, int R,
                                  int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;
  float sum = 0.0f;
  for (int j = t; j < C; j += THREADS) sum += expf(xr[j]);
  red[t] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  const float log_sum = logf(red[0]);
  for (int j = t; j < C; j += THREADS) yr[j] = xr[j] - log_sum;
}
