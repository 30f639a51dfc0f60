// problems/cross_entropy, correct with other orders everywhere the order matters: one warp per
// row (eight rows per block) with lane-strided passes for the max and the sum of exponentials,
// each combined by butterfly shuffles; then one warp whose lanes each add a contiguous chunk of
// the row losses, combined by a shuffle tree. The false-rejection control of `relative` on the
// one-element output: no addition happens in the reference's order.
/* kjudge
[[launch]]
kernel = "row_losses_warp"
grid = ["ceil_div(N, 8)"]
block = [256]
args = ["logits", "target", "row_loss", "N", "C"]

[[launch]]
kernel = "mean_chunked"
grid = [1]
block = [32]
args = ["row_loss", "loss", "N"]

[[scratch]]
name = "row_loss"
dtype = "f32"
shape = ["N"]
*/
__global__ void row_losses_warp(const float* __restrict__ logits,
                                const long long* __restrict__ target,
                                float* __restrict__ row_loss, int N, int C) {
  const int lane = threadIdx.x % 32;
  const long long i = static_cast<long long>(blockIdx.x) * 8 + threadIdx.x / 32;
  if (i >= N) return;  // a whole warp leaves together, so the shuffles below see full warps
  const float* xr = logits + i * C;

  float m = __int_as_float(0xff800000);  // -inf
  for (int j = lane; j < C; j += 32) m = fmaxf(m, xr[j]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));

  float sum = 0.0f;
  for (int j = lane; j < C; j += 32) sum += expf(xr[j] - m);
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);

  if (lane == 0) row_loss[i] = (m + logf(sum)) - xr[target[i]];
}

__global__ void mean_chunked(const float* __restrict__ row_loss, float* __restrict__ loss, int N) {
  const int lane = threadIdx.x;
  const int chunk = (N + 31) / 32;
  const int begin = min(N, lane * chunk);
  const int end = min(N, begin + chunk);
  float s = 0.0f;
  for (int i = begin; i < end; ++i) s += row_loss[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if (lane == 0) loss[0] = s / static_cast<float>(N);
}
