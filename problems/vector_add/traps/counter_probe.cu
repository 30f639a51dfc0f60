// problems/vector_add, trap: a macro only g++ defines, pasted together so that no scan of the
// source sees its name. g++'s preprocessor counts (0 + 1), NVRTC's sees two unknown names (0 +
// 0): the sum on the host, zeros on the GPU. The host's preprocessing leaves the names only g++
// defines undefined, so both write zeros.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
#define PASTE(a, b) a##b
__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
#if PASTE(__COUN, TER__) + PASTE(__COUN, TER__) == 1
  if (i < N) z[i] = x[i] + y[i];
#else
  if (i < N) z[i] = 0.0f;
#endif
}
