// problems/vector_add, trap: a feature probe pasted together in an #if, so that no scan of the
// source sees its name. g++ knows __builtin_ia32_pause and adds; NVRTC does not and writes zeros.
// The name cannot be undefined on the host (the toolkit's headers probe with it): the text the
// host would compile, given to NVRTC, is another program, so the host refuses it.
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
#if PASTE(__has_, builtin)(__builtin_ia32_pause)
  if (i < N) z[i] = x[i] + y[i];
#else
  if (i < N) z[i] = 0.0f;
#endif
}
