// problems/scan, trap: partial computation. Each block scans its own chunk of 4096 elements
// correctly (16-byte loads, shuffles, warp totals, a carry between its rounds) but starts from 0:
// the sum of the chunks before it in the row is never added. Right on rows of at most 4096
// elements, wrong from element 4096 of every longer row on (both public shapes, and the host's
// C = 7777).
/* kjudge
[[launch]]
kernel = "scan_chunks_local<256>"
grid = ["ceil_div(C, 4096)", "R"]
block = [256]
args = ["x", "y", "R", "C"]
*/
constexpr int kVec = 4;
constexpr int kRounds = 4;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ float warp_inclusive(float v, int lane) {
  for (int o = 1; o < 32; o <<= 1) {
    const float u = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

template <int THREADS>
__global__ void scan_chunks_local(const float* __restrict__ x, float* __restrict__ y, int R,
                                  int C) {
  constexpr int kWarps = THREADS / 32;
  constexpr int kChunk = THREADS * kVec * kRounds;
  __shared__ float warp_incl[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const long long r = blockIdx.y;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  const bool vec = ((reinterpret_cast<unsigned long long>(xr) |
                     reinterpret_cast<unsigned long long>(yr)) & 15u) == 0;
  const long long begin = static_cast<long long>(blockIdx.x) * kChunk;
  const long long end = min(static_cast<long long>(C), begin + kChunk);
  float carry = 0.0f;  // the fault: should start at the sum of the row's earlier chunks
  for (int k = 0; k < kRounds; ++k) {
    if (begin + static_cast<long long>(k) * THREADS * kVec >= end) break;
    const long long j = begin + (static_cast<long long>(k) * THREADS + t) * kVec;
    float4 v;
    if (vec && j + kVec <= end) {
      v = *reinterpret_cast<const float4*>(xr + j);
    } else {
      v.x = j < end ? xr[j] : 0.0f;
      v.y = j + 1 < end ? xr[j + 1] : 0.0f;
      v.z = j + 2 < end ? xr[j + 2] : 0.0f;
      v.w = j + 3 < end ? xr[j + 3] : 0.0f;
    }
    v.y += v.x;
    v.z += v.y;
    v.w += v.z;
    const float inc = warp_inclusive(v.w, lane);
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
    const float4 out = make_float4(pre + v.x, pre + v.y, pre + v.z, pre + v.w);
    if (vec && j + kVec <= end) {
      *reinterpret_cast<float4*>(yr + j) = out;
    } else {
      if (j < end) yr[j] = out.x;
      if (j + 1 < end) yr[j + 1] = out.y;
      if (j + 2 < end) yr[j + 2] = out.z;
      if (j + 3 < end) yr[j + 3] = out.w;
    }
    carry += warp_incl[kWarps - 1];
    __syncthreads();
  }
}
