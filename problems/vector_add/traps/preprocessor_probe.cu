// problems/vector_add, trap: a branch the preprocessors decide apart. g++ says it has
// __builtin_bswap32, NVRTC says it has not: the sum on the host, zeros on the GPU. The host
// refuses the probes whose answers are the compiler's (FAIL(forbidden_construct)).
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if __has_builtin(__builtin_bswap32)
  if (i < N) z[i] = x[i] + y[i];
#else
  if (i < N) z[i] = 0.0f;
#endif
}
