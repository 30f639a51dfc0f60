// problems/scan, correct with another association: one block per row, walking it in tiles of
// 1024 elements; each tile is scanned by Blelloch's work-efficient tree in shared memory (an
// up-sweep of pairwise sums, then a down-sweep that hands every node the sum of everything to
// its left), and a running carry joins the tiles. Its sums pair elements quite differently from
// the reference's left-to-right order and from fast.cu's lanes and warps: the false-rejection
// control for `relative`. The tile total is taken before the down-sweep clears the root, so
// every prefix is still a sum of earlier elements only (NaN and Inf stay where they belong).
/* kjudge
[[launch]]
kernel = "scan_blelloch<512>"
grid = ["R"]
block = [512]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void scan_blelloch(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  constexpr int kTile = 2 * THREADS;
  __shared__ float s[kTile];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;
  float carry = 0.0f;
  for (long long base = 0; base < C; base += kTile) {
    const long long a = base + 2 * t, b = a + 1;
    const float xa = a < C ? xr[a] : 0.0f;
    const float xb = b < C ? xr[b] : 0.0f;
    s[2 * t] = xa;
    s[2 * t + 1] = xb;
    int offset = 1;
    for (int d = THREADS; d > 0; d >>= 1) {  // up-sweep
      __syncthreads();
      if (t < d) s[offset * (2 * t + 2) - 1] += s[offset * (2 * t + 1) - 1];
      offset <<= 1;
    }
    __syncthreads();
    const float total = s[kTile - 1];
    __syncthreads();
    if (t == 0) s[kTile - 1] = 0.0f;
    for (int d = 1; d < kTile; d <<= 1) {  // down-sweep
      offset >>= 1;
      __syncthreads();
      if (t < d) {
        const int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
        const float left = s[ai];
        s[ai] = s[bi];
        s[bi] += left;
      }
    }
    __syncthreads();
    if (a < C) yr[a] = carry + (s[2 * t] + xa);
    if (b < C) yr[b] = carry + (s[2 * t + 1] + xb);
    carry += total;
    __syncthreads();  // s is refilled by the next tile
  }
}
