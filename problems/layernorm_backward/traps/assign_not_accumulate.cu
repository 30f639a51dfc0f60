// problems/layernorm_backward, trap: two_kernels.cu with `=` where training code needs `+=`:
// dweight and dbias lose the gradients they held (here normal(0, 1)), a bug a zeroed output hides.
/* kjudge
[[launch]]
kernel = "ln_bwd_dinp"
grid = ["ceil_div(N, 8)"]
block = [256]
args = ["dout", "inp", "mean", "rstd", "weight", "dinp", "N", "C"]

[[launch]]
kernel = "ln_bwd_params"
grid = ["ceil_div(C, 128)"]
block = [128]
args = ["dout", "inp", "mean", "rstd", "dweight", "dbias", "N", "C"]
*/
__global__ void ln_bwd_dinp(const float* dout, const float* inp, const float* mean,
                            const float* rstd, const float* weight, float* dinp, int N, int C) {
  const int r = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= N) return; // a whole warp leaves together
  const float* g = dout + static_cast<long long>(r) * C;
  const float* x = inp + static_cast<long long>(r) * C;
  const float m = mean[r], s = rstd[r];
  float a = 0.0f, b = 0.0f;
  for (int j = lane; j < C; j += 32) {
    const float dn = weight[j] * g[j];
    a += dn;
    b += dn * ((x[j] - m) * s);
  }
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  a /= C;
  b /= C;
  for (int j = lane; j < C; j += 32) {
    const float norm = (x[j] - m) * s;
    dinp[static_cast<long long>(r) * C + j] = s * (weight[j] * g[j] - a - norm * b);
  }
}

__global__ void ln_bwd_params(const float* dout, const float* inp, const float* mean,
                              const float* rstd, float* dweight, float* dbias, int N, int C) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= C) return;
  float dw = 0.0f, db = 0.0f;
  for (int r = 0; r < N; ++r) {
    const float g = dout[static_cast<long long>(r) * C + j];
    dw += (inp[static_cast<long long>(r) * C + j] - mean[r]) * rstd[r] * g;
    db += g;
  }
  dweight[j] = dw;
  dbias[j] = db;
}
