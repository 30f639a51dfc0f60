// problems/cross_entropy, trap: logsumexp as log(sum(exp(x))), without subtracting the row's
// maximum first (one block per row, a shared-memory tree for the sum, the loss gathered into a
// scratch vector and reduced by a second launch, so that its one fault is the missing shift).
// Right for logits below about 88; past that exp overflows, the row's loss is inf - x = inf and
// so is the mean, where the golden is finite.
/* kjudge
[[launch]]
kernel = "row_losses_naive<256>"
grid = ["N"]
block = [256]
args = ["logits", "target", "row_loss", "N", "C"]

[[launch]]
kernel = "mean_in_order"
grid = [1]
block = [1]
args = ["row_loss", "loss", "N"]

[[scratch]]
name = "row_loss"
dtype = "f32"
shape = ["N"]
*/
template <int THREADS>
__global__ void row_losses_naive(const float* __restrict__ logits,
                                 const long long* __restrict__ target,
                                 float* __restrict__ row_loss, int N, int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const float* xr = logits + static_cast<long long>(blockIdx.x) * C;
  float sum = 0.0f;
  for (int j = t; j < C; j += THREADS) sum += expf(xr[j]);
  red[t] = sum;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (t < s) red[t] += red[t + s];
    __syncthreads();
  }
  if (t == 0) row_loss[blockIdx.x] = logf(red[0]) - xr[target[blockIdx.x]];
}

__global__ void mean_in_order(const float* __restrict__ row_loss, float* __restrict__ loss, int N) {
  float total = 0.0f;
  for (int i = 0; i < N; ++i) total += row_loss[i];
  loss[0] = total / static_cast<float>(N);
}
