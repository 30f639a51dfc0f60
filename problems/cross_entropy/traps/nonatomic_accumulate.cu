// problems/cross_entropy, trap: one block per row, each adding its row's loss / N into a scalar of
// its own scratch (zeroed) with a plain `+=`, then copied into the output. Thousands of blocks read-add-write the same
// address at the same time, so updates are lost, a different number on every run: atomicAdd
// (or a second launch over a scratch vector) was needed.
/* kjudge
[[launch]]
kernel = "row_loss_into_mean<256>"
grid = ["N"]
block = [256]
args = ["logits", "target", "acc", "N", "C"]

[[launch]]
kernel = "copy_scalar"
grid = [1]
block = [1]
args = ["acc", "loss"]

[[scratch]]
name = "acc"
dtype = "f32"
shape = [1]
init = "zero"
*/
template <int THREADS>
__global__ void row_loss_into_mean(const float* __restrict__ logits,
                                   const long long* __restrict__ target, float* loss, int N,
                                   int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = logits + static_cast<long long>(blockIdx.x) * C;

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
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  if (t == 0) {
    const float row = (m + logf(red[0])) - xr[target[blockIdx.x]];
    loss[0] += row / static_cast<float>(N);  // not atomic
  }
}

__global__ void copy_scalar(const float* __restrict__ acc, float* __restrict__ loss) {
  loss[0] = acc[0];
}
