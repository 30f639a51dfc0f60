// problems/cross_entropy, trap: ignores the targets and subtracts the first logit of each row,
// logits[i, 0], as if every target were class 0 (a wrong index, or a copy from a kernel whose
// labels were all 0). The logsumexp is right and the loss has the right size, but the mean of
// N first logits is not the mean of N target logits.
/* kjudge
[[launch]]
kernel = "row_losses_class0"
grid = ["ceil_div(N, 128)"]
block = [128]
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
__global__ void row_losses_class0(const float* __restrict__ logits,
                                  const long long* __restrict__ target,
                                  float* __restrict__ row_loss, int N, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float* xr = logits + i * C;
  float m = xr[0];
  for (int j = 1; j < C; ++j) m = fmaxf(m, xr[j]);
  float sum = 0.0f;
  for (int j = 0; j < C; ++j) sum += expf(xr[j] - m);
  row_loss[i] = (m + logf(sum)) - xr[0];  // should be xr[target[i]]
}

__global__ void mean_in_order(const float* __restrict__ row_loss, float* __restrict__ loss, int N) {
  float total = 0.0f;
  for (int i = 0; i < N; ++i) total += row_loss[i];
  loss[0] = total / static_cast<float>(N);
}
