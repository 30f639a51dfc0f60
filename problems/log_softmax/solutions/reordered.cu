// problems/log_softmax, correct with another order of additions: one block of 128 threads per
// row; each thread takes a contiguous chunk of the row (not a stride), and the chunk maxima and
// sums are combined by a pairwise shared-memory tree. The false-rejection control of the
// per-row `relative` policy: it must pass although no addition happens in the reference's order.
/* kjudge
[[launch]]
kernel = "log_softmax_chunks<128>"
grid = ["R"]
block = [128]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void log_softmax_chunks(const float* __restrict__ x, float* __restrict__ y, int R,
                                   int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;
  const int chunk = (C + THREADS - 1) / THREADS;
  const int begin = min(C, t * chunk);
  const int end = min(C, begin + chunk);

  float m = __int_as_float(0xff800000);  // -inf: a thread with an empty chunk adds nothing
  for (int j = begin; j < end; ++j) m = fmaxf(m, xr[j]);
  red[t] = m;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = fmaxf(red[t], red[t + s]);
    __syncthreads();
  }
  m = red[0];
  __syncthreads();  // everyone has read red[0] before it is reused

  float sum = 0.0f;
  for (int j = begin; j < end; ++j) sum += expf(xr[j] - m);
  red[t] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  const float log_sum = logf(red[0]);
  for (int j = begin; j < end; ++j) yr[j] = (xr[j] - m) - log_sum;
}
