// problems/vector_add, trap: accumulates into x in place and copies the sum out. z is right,
// but the kernel writes its const input (through const_cast), which a caller does not expect.
/* kjudge
[[launch]]
kernel = "vector_add_in_place"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__global__ void vector_add_in_place(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  float* acc = const_cast<float*>(x);
  acc[i] += y[i];
  z[i] = acc[i];
}
