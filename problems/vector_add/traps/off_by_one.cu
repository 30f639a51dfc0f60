// problems/vector_add, trap: the bounds guard is `<=`, so the thread with i == N (there is one
// whenever N is not a multiple of the block) writes one element past the end of z.
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
  if (i <= N) z[i] = x[i] + y[i];
}
