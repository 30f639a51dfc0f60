// problems/vector_add, correct: one thread per element, the plainest kernel.
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
  if (i < N) z[i] = x[i] + y[i];
}
