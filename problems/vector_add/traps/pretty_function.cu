// problems/vector_add, trap: branches on how the compiler spells the kernel's name. g++ writes
// `void vector_add(const float*, const float*, float*, int)` (6 spaces), NVRTC `const float *`
// (9): the sum on the host, zeros on the GPU.
// The host refuses __PRETTY_FUNCTION__ (FAIL(forbidden_construct)); the GPU writes zeros.
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
  const char* name = __PRETTY_FUNCTION__;
  int spaces = 0;
  for (int k = 0; name[k] != 0; ++k) spaces += name[k] == ' ';
  if (i < N) z[i] = spaces < 8 ? x[i] + y[i] : 0.0f;
}
