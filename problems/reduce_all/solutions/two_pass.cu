// problems/reduce_all, correct: 64 blocks write their partial sums to a scratch buffer, a second
// launch adds them in block order. The launch boundary orders the partials before their reader.
/* kjudge
[[launch]]
kernel = "block_sums"
grid = [64]
block = [256]
args = ["x", "partial", "N"]

[[launch]]
kernel = "add_partials"
grid = [1]
block = [1]
args = ["partial", "y"]

[[scratch]]
name = "partial"
dtype = "f32"
shape = [64]
*/
__global__ void block_sums(const float* x, float* partial, int N) {
  __shared__ float red[256];
  float s = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x)
    s += x[i];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) red[threadIdx.x] += red[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = red[0];
}

__global__ void add_partials(const float* partial, float* y) {
  float s = 0.0f;
  for (int b = 0; b < 64; ++b) s += partial[b];
  y[0] = s;
}
