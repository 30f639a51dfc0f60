// problems/cross_entropy, correct: the plain two-launch plan. One thread per row writes the row's
// loss, logsumexp (max, then the sum of exp(x - max), each sequential) minus the target's logit,
// to a scratch vector; a second launch of one thread adds the N row losses in row order and
// divides by N. That is the reference's order (which does the same in one block, in waves of
// rows): the policy must accept the order any careful sequential kernel has.
/* kjudge
[[launch]]
kernel = "row_losses"
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
__global__ void row_losses(const float* __restrict__ logits, const long long* __restrict__ target,
                           float* __restrict__ row_loss, int N, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float* xr = logits + i * C;
  float m = xr[0];
  for (int j = 1; j < C; ++j) m = fmaxf(m, xr[j]);
  float sum = 0.0f;
  for (int j = 0; j < C; ++j) sum += expf(xr[j] - m);
  row_loss[i] = (m + logf(sum)) - xr[target[i]];
}

__global__ void mean_in_order(const float* __restrict__ row_loss, float* __restrict__ loss, int N) {
  float total = 0.0f;
  for (int i = 0; i < N; ++i) total += row_loss[i];
  loss[0] = total / static_cast<float>(N);
}
