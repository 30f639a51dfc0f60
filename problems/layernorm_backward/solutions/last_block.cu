// problems/layernorm_backward, correct: one launch in the "last block done" pattern of training
// code. Each block takes a run of rows: a warp per row for dinp, then a thread per column for
// the block's partial dweight and dbias sums, stored in a scratch buffer. Every thread fences
// its stores (__threadfence), thread 0 counts the block done with an atomic, and the block that
// counts last adds every block's partials, in block order, into dweight and dbias.
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
  __threadfence(); // this thread's partials reach every block before the count does
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
