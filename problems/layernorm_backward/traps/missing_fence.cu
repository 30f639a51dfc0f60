// problems/layernorm_backward, trap: last_block.cu without its __threadfence(). Nothing orders a
// block's stores of its partials before its atomic count, so the last block may read partials
// other blocks have not made visible yet. The GPU rarely shows it; the host backend's race
// screen, which models the fence, reports the unordered store and load.
/* kjudge
[[launch]]
kernel = "ln_bwd_fused"
grid = ["min(ceil_div(N, 8), 16)"]
block = [256]
args = ["dout", "inp", "mean", "rstd", "weight", "dinp", "dweight", "dbias", "partial", "done", "N", "C"]

[[scratch]]
name = "partial"
dtype = "f32"
shape = ["min(ceil_div(N, 8), 16)", 2, "C"]

[[scratch]]
name = "done"
dtype = "i32"
shape = [1]
init = "zero"
*/
__global__ void ln_bwd_fused(const float* dout, const float* inp, const float* mean,
                             const float* rstd, const float* weight, float* dinp, float* dweight,
                             float* dbias, float* partial, int* done, int N, int C) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  const int per_block = (N + gridDim.x - 1) / gridDim.x;
  const int r0 = blockIdx.x * per_block, r1 = min(N, r0 + per_block);
  for (int r = r0 + warp; r < r1; r += warps) {
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
    for (int j = lane; j < C; j += 32)
      dinp[static_cast<long long>(r) * C + j] = s * (weight[j] * g[j] - a - (x[j] - m) * s * b);
  }
  for (int j = threadIdx.x; j < C; j += blockDim.x) {
    float dw = 0.0f, db = 0.0f;
    for (int r = r0; r < r1; ++r) {
      const float g = dout[static_cast<long long>(r) * C + j];
      dw += (inp[static_cast<long long>(r) * C + j] - mean[r]) * rstd[r] * g;
      db += g;
    }
    partial[(2LL * blockIdx.x) * C + j] = dw;
    partial[(2LL * blockIdx.x + 1) * C + j] = db;
  }
  __shared__ bool last;
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(done, 1) == static_cast<int>(gridDim.x) - 1;
  __syncthreads();
  if (!last) return;
  for (int j = threadIdx.x; j < C; j += blockDim.x) {
    float dw = 0.0f, db = 0.0f;
    for (int b = 0; b < static_cast<int>(gridDim.x); ++b) {
      dw += partial[(2LL * b) * C + j];
      db += partial[(2LL * b + 1) * C + j];
    }
    dweight[j] += dw;
    dbias[j] += db;
  }
}
