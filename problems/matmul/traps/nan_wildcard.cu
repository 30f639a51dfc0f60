// problems/matmul, trap: writes NaN everywhere, betting that the checker treats NaN as "any
// value" (a comparison written `err > tol` is false for NaN, and some harnesses plant NaN as a
// wildcard). A NaN where the golden is finite must fail.
/* kjudge
[[launch]]
kernel = "matmul_nan"
grid = ["ceil_div(M * N, 256)"]
block = [256]
args = ["C", "M * N"]
*/
__global__ void matmul_nan(float* __restrict__ C, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) C[i] = __int_as_float(0x7fc00000);
}
