// problems/relu, trap: left-over debugging, #include <stdio.h> and a printf. The header is not
// on kjudge's include allow-list (a candidate is device code against pinned headers), so the
// compile fails; printf itself would be a forbidden construct (vprintf) in the PTX scan.
#include <stdio.h>

/* kjudge
[[launch]]
kernel = "relu"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i == 0) printf("relu: n = %lld\n", n);
  if (i >= n) return;
  const float v = x[i];
  y[i] = v < 0.0f ? 0.0f : v;
}
