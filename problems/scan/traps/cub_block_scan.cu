// problems/scan, trap: a forbidden library. The scan is CUB's cub::BlockScan (one block per row,
// a tile of 256 elements per step, the block aggregate carried between tiles): correct, but CUB
// is the library this problem asks the candidate to replace. The problem's `forbid = ["cub"]`
// makes the static scan refuse it by name, before anything runs.
#include <cub/block/block_scan.cuh>

/* kjudge
[[launch]]
kernel = "scan_cub<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void scan_cub(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  using BlockScan = cub::BlockScan<float, THREADS>;
  __shared__ typename BlockScan::TempStorage temp;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;
  float carry = 0.0f;
  for (long long base = 0; base < C; base += THREADS) {
    const long long j = base + threadIdx.x;
    float v = j < C ? xr[j] : 0.0f;
    float total;
    BlockScan(temp).InclusiveSum(v, v, total);
    if (j < C) yr[j] = carry + v;
    carry += total;
    __syncthreads();  // temp is reused by the next tile
  }
}
