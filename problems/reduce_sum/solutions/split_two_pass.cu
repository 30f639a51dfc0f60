// problems/reduce_sum, correct: two launches. The first splits every row into 16 chunks, one
// block per (chunk, row), and writes each chunk's sum to a scratch buffer; the second adds a
// row's 16 partial sums. More blocks in flight for a few long rows (R = 64, C = 10^6).
/* kjudge
[[launch]]
kernel = "chunk_sums<256>"
grid = [16, "R"]
block = [256]
args = ["x", "partial", "R", "C"]

[[launch]]
kernel = "add_chunks"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["partial", "y", "R"]

[[scratch]]
name = "partial"
dtype = "f32"
shape = ["R", 16]
*/
constexpr int kChunks = 16;

template <int THREADS>
__global__ void chunk_sums(const float* __restrict__ x, float* __restrict__ partial, int R,
                           int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const int chunk = (C + kChunks - 1) / kChunks;
  const int begin = blockIdx.x * chunk;
  const int end = min(C, begin + chunk);
  const float* xr = x + static_cast<long long>(blockIdx.y) * C;
  float s = 0.0f;
  for (int j = begin + t; j < end; j += THREADS) s += xr[j];
  red[t] = s;
  __syncthreads();
  for (int k = THREADS / 2; k > 0; k >>= 1) {
    if (t < k) red[t] += red[t + k];
    __syncthreads();
  }
  if (t == 0) partial[static_cast<long long>(blockIdx.y) * kChunks + blockIdx.x] = red[0];
}

__global__ void add_chunks(const float* __restrict__ partial, float* __restrict__ y, int R) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= R) return;
  float s = 0.0f;
  for (int c = 0; c < kChunks; ++c) s += partial[static_cast<long long>(r) * kChunks + c];
  y[r] = s;
}
