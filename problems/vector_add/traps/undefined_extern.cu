// problems/vector_add, trap: a function declared and never defined. No CUDA library has fadd, so
// NVRTC's assembler refuses the module (compile_error); the host build, had it compiled, would
// have linked glibc's fadd and passed. NVRTC compiles first on both backends.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
extern "C" __device__ float fadd(double, double);

__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = fadd(x[i], y[i]);
}
