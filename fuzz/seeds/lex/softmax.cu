/* kjudge
[[launch]]
kernel = "softmax_rows<4>"
grid = ["ceil_div(R, 4)"]
block = [128]
args = ["x", "y", "R", "C"]
*/
#include <cuda_fp16.h>
#define WARP 32 \
  /* lanes */
template <int ROWS, typename T = float>
__global__ void __launch_bounds__(128, 2)
softmax_rows(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
  __shared__ float buf[ROWS][WARP];
  const char* s = "}/*\"";
  auto f = [] __device__ (float v) { return v * 1e-5f + 0x1p-3 + 1'000; };
  if (threadIdx.x >>= 1) { buf[0][0] = f(x[0]); }
}
