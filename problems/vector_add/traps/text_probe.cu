// problems/vector_add, trap: a feature probe pasted together outside any #if, where both
// preprocessors still answer it, each its own way: g++ knows __builtin_ia32_pause (1) and adds,
// NVRTC does not (0) and writes zeros. (libcu++'s _CCCL_HAS_BUILTIN is the same probe under a
// header's name.) The text the host would compile, given to NVRTC, is another program, so the
// host refuses it.
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
  constexpr bool on_host = PASTE(__has_, builtin)(__builtin_ia32_pause);
  if (i < N) z[i] = on_host ? x[i] + y[i] : 0.0f;
}
