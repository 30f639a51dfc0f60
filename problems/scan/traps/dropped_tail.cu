// problems/scan, trap: hard-coded shapes. One block per row, each thread owning 4 consecutive
// elements of a tile of 1024; the tile loop runs while a whole group of 4 remains
// (`j + 3 < C`), which is every element when 4 divides C, as it does for both public shapes.
// For any other C the last C % 4 elements of every row are never written: the hidden and
// perturbed shapes must find them.
/* kjudge
[[launch]]
kernel = "scan_groups_of_four<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ float warp_inclusive(float v, int lane) {
  for (int o = 1; o < 32; o <<= 1) {
    const float u = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

template <int THREADS>
__global__ void scan_groups_of_four(const float* __restrict__ x, float* __restrict__ y, int R,
                                    int C) {
  constexpr int kWarps = THREADS / 32;
  __shared__ float warp_incl[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;
  float carry = 0.0f;
  for (long long base = 0; base + 3 < C; base += 4 * THREADS) {
    const long long j = base + 4 * t;
    const bool whole = j + 3 < C;  // the fault: a partial last group is treated as absent
    float a = whole ? xr[j] : 0.0f, b = whole ? xr[j + 1] : 0.0f;
    float c = whole ? xr[j + 2] : 0.0f, d = whole ? xr[j + 3] : 0.0f;
    b += a;
    c += b;
    d += c;
    const float inc = warp_inclusive(d, lane);
    if (lane == 31) warp_incl[warp] = inc;
    __syncthreads();
    if (warp == 0) {
      float w = lane < kWarps ? warp_incl[lane] : 0.0f;
      w = warp_inclusive(w, lane);
      if (lane < kWarps) warp_incl[lane] = w;
    }
    __syncthreads();
    float lane_excl = __shfl_up_sync(kFull, inc, 1);
    if (lane == 0) lane_excl = 0.0f;
    const float pre = carry + ((warp > 0 ? warp_incl[warp - 1] : 0.0f) + lane_excl);
    if (whole) {
      yr[j] = pre + a;
      yr[j + 1] = pre + b;
      yr[j + 2] = pre + c;
      yr[j + 3] = pre + d;
    }
    carry += warp_incl[kWarps - 1];
    __syncthreads();
  }
}
