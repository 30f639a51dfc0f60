// problems/scan, trap: a precision downgrade. A two-launch scan that stores each chunk's sum in a
// bf16 scratch buffer (to halve the traffic of the partial sums) and adds the rounded sums of the
// earlier chunks as the chunk's offset. A chunk of 4096 normal values sums to ~64, which bf16
// keeps to within ~0.25: every element after the first chunk of a row is off by that much, far
// beyond the f32 reference's error (~1e-3 on rows of 10^6).
#include <cuda_bf16.h>

/* kjudge
[[launch]]
kernel = "chunk_sums_bf16<256>"
grid = ["ceil_div(C, 4096)", "R"]
block = [256]
args = ["x", "partial", "R", "C"]

[[launch]]
kernel = "scan_chunks_offset<256>"
grid = ["ceil_div(C, 4096)", "R"]
block = [256]
args = ["x", "partial", "y", "R", "C"]

[[scratch]]
name = "partial"
dtype = "bf16"
shape = ["R", "ceil_div(C, 4096)"]
*/
constexpr int kChunk = 4096;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ float warp_inclusive(float v, int lane) {
  for (int o = 1; o < 32; o <<= 1) {
    const float u = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

template <int THREADS>
__global__ void chunk_sums_bf16(const float* __restrict__ x, __nv_bfloat16* __restrict__ partial,
                                int R, int C) {
  __shared__ float warp_sums[THREADS / 32];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const float* xr = x + static_cast<long long>(blockIdx.y) * C;
  const long long begin = static_cast<long long>(blockIdx.x) * kChunk;
  const long long end = min(static_cast<long long>(C), begin + kChunk);
  float s = 0.0f;
  for (long long j = begin + t; j < end; j += THREADS) s += xr[j];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(kFull, s, o);
  if (lane == 0) warp_sums[warp] = s;
  __syncthreads();
  if (t == 0) {
    float w = 0.0f;
    for (int i = 0; i < THREADS / 32; ++i) w += warp_sums[i];
    partial[static_cast<long long>(blockIdx.y) * gridDim.x + blockIdx.x] = __float2bfloat16_rn(w);
  }
}

template <int THREADS>
__global__ void scan_chunks_offset(const float* __restrict__ x,
                                   const __nv_bfloat16* __restrict__ partial,
                                   float* __restrict__ y, int R, int C) {
  constexpr int kWarps = THREADS / 32;
  __shared__ float warp_incl[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const long long r = blockIdx.y;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  float carry = 0.0f;  // the rounded sums of the chunks before this one
  for (unsigned c = 0; c < blockIdx.x; ++c) carry += __bfloat162float(partial[r * gridDim.x + c]);
  const long long begin = static_cast<long long>(blockIdx.x) * kChunk;
  const long long end = min(static_cast<long long>(C), begin + kChunk);
  for (long long base = begin; base < end; base += THREADS) {
    const long long j = base + t;
    const float inc = warp_inclusive(j < end ? xr[j] : 0.0f, lane);
    if (lane == 31) warp_incl[warp] = inc;
    __syncthreads();
    if (warp == 0) {
      float w = lane < kWarps ? warp_incl[lane] : 0.0f;
      w = warp_inclusive(w, lane);
      if (lane < kWarps) warp_incl[lane] = w;
    }
    __syncthreads();
    if (j < end) yr[j] = carry + ((warp > 0 ? warp_incl[warp - 1] : 0.0f) + inc);
    carry += warp_incl[kWarps - 1];
    __syncthreads();
  }
}
