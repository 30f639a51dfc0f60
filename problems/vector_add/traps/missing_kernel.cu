// problems/vector_add, trap: the launch plan names a kernel the source does not define (it was
// renamed to vec_add and the plan kept the old name). The TOML is fine; the launch is not.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__global__ void vec_add(const float* __restrict__ x, const float* __restrict__ y,
                        float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
}
