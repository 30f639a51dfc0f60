// problems/cross_entropy, trap: a distribution shortcut. For C logits drawn from normal(mu, s)
// and a target drawn independently of them, E[logsumexp] is about mu + s^2 / 2 + log(C) and
// E[logit at the target] is mu, so the expected loss is log(C) + s^2 / 2 whatever N is. This
// kernel reads the first row only (to estimate s, so that it follows a rescaled input too) and
// returns that expectation: a closed form for predictable inputs, reading 1/N of the data. The
// sample mean over N rows differs from it by far more than rounding (and the approximation is
// poor for spread-out logits), so it must fail as a mismatch.
/* kjudge
[[launch]]
kernel = "expected_loss"
grid = [1]
block = [256]
args = ["logits", "loss", "N", "C"]
*/
__global__ void expected_loss(const float* __restrict__ logits, float* __restrict__ loss, int N,
                              int C) {
  __shared__ float sum_x[256];
  __shared__ float sum_xx[256];
  const int t = threadIdx.x;
  float a = 0.0f, b = 0.0f;
  for (int j = t; j < C; j += 256) {
    a += logits[j];
    b += logits[j] * logits[j];
  }
  sum_x[t] = a;
  sum_xx[t] = b;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (t < s) {
      sum_x[t] += sum_x[t + s];
      sum_xx[t] += sum_xx[t + s];
    }
    __syncthreads();
  }
  if (t == 0) {
    const float mean = sum_x[0] / C;
    const float var = fmaxf(sum_xx[0] / C - mean * mean, 0.0f);
    loss[0] = logf(static_cast<float>(C)) + 0.5f * var;
  }
}
