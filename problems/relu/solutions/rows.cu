// problems/relu, correct: a block per row (grid-striding over rows beyond the grid cap), the
// threads striding along the row. Written `v > 0 || v != v ? v : 0`: NaN passes, and -0 becomes
// +0, which the exact policy treats as equal (signed_zero = "equal", the default).
/* kjudge
[[launch]]
kernel = "relu_rows"
grid = ["min(R, 65535)"]
block = [256]
args = ["x", "y", "R", "C"]
*/
__global__ void relu_rows(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  for (long long r = blockIdx.x; r < R; r += gridDim.x) {
    const float* xr = x + r * C;
    float* yr = y + r * C;
    for (int j = threadIdx.x; j < C; j += blockDim.x) {
      const float v = xr[j];
      yr[j] = (v > 0.0f || v != v) ? v : 0.0f;
    }
  }
}
