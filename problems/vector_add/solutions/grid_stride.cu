// problems/vector_add, correct: a capped grid that strides over the vector, UNROLL elements per
// thread and iteration (coalesced: the UNROLL elements of a thread are a block apart).
/* kjudge
[[launch]]
kernel = "vector_add_strided<4>"
grid = ["min(ceil_div(N, 1024), 2048)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
template <int UNROLL>
__global__ void vector_add_strided(const float* __restrict__ x, const float* __restrict__ y,
                                   float* __restrict__ z, int N) {
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x * UNROLL;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x * UNROLL + threadIdx.x;
       base < N; base += step) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const long long i = base + static_cast<long long>(u) * blockDim.x;
      if (i < N) z[i] = x[i] + y[i];
    }
  }
}
