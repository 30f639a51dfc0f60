// problems/reduce_all, correct: one launch. Each block reduces its share and thread 0 stores the
// block's partial, fences it (__threadfence) and counts the block done with atomicInc; the
// block that counts last adds the partials in block order.
/* kjudge
[[launch]]
kernel = "reduce_last_block"
grid = [64]
block = [256]
args = ["x", "partial", "done", "y", "N"]

[[scratch]]
name = "partial"
dtype = "f32"
shape = [64]

[[scratch]]
name = "done"
dtype = "i32"
shape = [1]
init = "zero"
*/
__global__ void reduce_last_block(const float* x, float* partial, int* done, float* y, int N) {
  __shared__ float red[256];
  __shared__ bool last;
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x)
    s += x[i];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = red[0];
    __threadfence(); // the partial reaches every block before the count does
    const unsigned ticket = atomicInc(reinterpret_cast<unsigned*>(done), gridDim.x);
    last = ticket == gridDim.x - 1;
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float total = 0.0f;
    for (int b = 0; b < static_cast<int>(gridDim.x); ++b) total += partial[b];
    y[0] = total;
  }
}
