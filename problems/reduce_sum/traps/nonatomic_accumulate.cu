// problems/reduce_sum, trap: splits each row over 8 blocks and lets every block add its chunk's
// sum into acc[row] with a plain `+=` (its own scratch, zeroed), then copies acc into y. Blocks
// of one row run at the same time, so read-add-write sequences interleave and partial sums are
// lost: atomicAdd was needed.
/* kjudge
[[launch]]
kernel = "row_sum_split<256>"
grid = [8, "R"]
block = [256]
args = ["x", "acc", "R", "C"]

[[launch]]
kernel = "copy_rows"
grid = ["ceil_div(R, 256)"]
block = [256]
args = ["acc", "y", "R"]

[[scratch]]
name = "acc"
dtype = "f32"
shape = ["R"]
init = "zero"
*/
template <int THREADS>
__global__ void row_sum_split(const float* __restrict__ x, float* y, int R, int C) {
  __shared__ float red[THREADS];
  const int t = threadIdx.x;
  const int chunk = (C + gridDim.x - 1) / gridDim.x;
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
  if (t == 0) y[blockIdx.y] += red[0];  // not atomic
}

__global__ void copy_rows(const float* __restrict__ acc, float* __restrict__ y, int R) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < R) y[r] = acc[r];
}
