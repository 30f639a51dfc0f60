// problems/vector_add, trap: a name the toolkit's headers mention but NVRTC does not declare.
// The candidate's variadic time() returns zero, and NVRTC calls it: zeros on the GPU. g++ also
// sees glibc's time(time_t*), a better match for nullptr than `...`, which is never zero: the sum
// on the host. `time` is read from the toolkit's headers as one of CUDA's names, so the host
// asks NVRTC which of the C library's names it really declares and keeps the others apart.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__device__ long time(...) { return 0; }

__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = time(nullptr) != 0 ? x[i] + y[i] : 0.0f;
}
