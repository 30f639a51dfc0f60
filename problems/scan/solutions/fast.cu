// problems/scan, correct and fast: reduce-then-scan in three launches, for any R and C. A row is
// cut into chunks of 4096 elements, one block each, so long rows (R = 64, C = 10^6) still fill
// the GPU. (1) each block sums its chunk; (2) one block per row turns the chunk sums into
// exclusive offsets; (3) each block scans its chunk again, starting from its offset. Inside a
// block: 16-byte loads and stores where the row start is aligned (scalar with zero padding at
// the tail), a sequential scan of each thread's 4 elements, a __shfl_up_sync scan across the
// lanes, then one across the warp totals. x is read twice and y written once (12 bytes per
// element against the floor's 8), with no serial dependence between blocks. Every prefix is
// built from earlier elements only (an exclusive prefix is shifted, never `inclusive - x`), so a
// NaN or Inf reaches exactly the elements after it, as nan = "propagate" demands.
/* kjudge
[[launch]]
kernel = "chunk_sums<256>"
grid = ["ceil_div(C, 4096)", "R"]
block = [256]
args = ["x", "partial", "R", "C"]

[[launch]]
kernel = "scan_chunk_sums<256>"
grid = ["R"]
block = [256]
args = ["partial", "R", "ceil_div(C, 4096)"]

[[launch]]
kernel = "scan_chunks<256>"
grid = ["ceil_div(C, 4096)", "R"]
block = [256]
args = ["x", "partial", "y", "R", "C"]

[[scratch]]
name = "partial"
dtype = "f32"
shape = ["R", "ceil_div(C, 4096)"]
*/
constexpr int kVec = 4;     // elements per thread per round: one 16-byte access
constexpr int kRounds = 4;  // rounds per chunk: 256 threads x 4 x 4 = 4096 elements
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15u) == 0;
}

// Elements [j, j + 4) of a row, zero past `end`: one float4 when the whole group is in the row
// and the row start is 16-byte aligned (then so is j, a multiple of 4).
__device__ __forceinline__ float4 load4(const float* row, long long j, long long end, bool vec) {
  if (vec && j + kVec <= end) return *reinterpret_cast<const float4*>(row + j);
  float4 v;
  v.x = j < end ? row[j] : 0.0f;
  v.y = j + 1 < end ? row[j + 1] : 0.0f;
  v.z = j + 2 < end ? row[j + 2] : 0.0f;
  v.w = j + 3 < end ? row[j + 3] : 0.0f;
  return v;
}

__device__ __forceinline__ void store4(float* row, long long j, long long end, bool vec,
                                       float4 v) {
  if (vec && j + kVec <= end) {
    *reinterpret_cast<float4*>(row + j) = v;
    return;
  }
  if (j < end) row[j] = v.x;
  if (j + 1 < end) row[j + 1] = v.y;
  if (j + 2 < end) row[j + 2] = v.z;
  if (j + 3 < end) row[j + 3] = v.w;
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(kFull, v, o);
  return v;
}

// Inclusive scan across the lanes (Hillis-Steele over shuffles); a lane below the offset keeps
// its value rather than adding anything.
__device__ __forceinline__ float warp_inclusive(float v, int lane) {
  for (int o = 1; o < 32; o <<= 1) {
    const float u = __shfl_up_sync(kFull, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

// The exclusive prefix of this thread within the block, from every thread's inclusive value
// `inc` and the block's inclusive warp totals; lane 0 of warp 0 gets 0.
__device__ __forceinline__ float block_exclusive(float inc, int lane, int warp,
                                                 const float* warp_incl) {
  float lane_excl = __shfl_up_sync(kFull, inc, 1);
  if (lane == 0) lane_excl = 0.0f;
  const float warp_excl = warp > 0 ? warp_incl[warp - 1] : 0.0f;
  return warp_excl + lane_excl;
}

// Warp 0 turns the per-warp totals into inclusive warp prefixes, in place.
template <int WARPS>
__device__ __forceinline__ void scan_warp_totals(float* warp_incl, int lane, int warp) {
  if (warp != 0) return;
  float w = lane < WARPS ? warp_incl[lane] : 0.0f;
  w = warp_inclusive(w, lane);
  if (lane < WARPS) warp_incl[lane] = w;
}

template <int THREADS>
__global__ void chunk_sums(const float* __restrict__ x, float* __restrict__ partial, int R,
                           int C) {
  constexpr int kWarps = THREADS / 32;
  constexpr int kChunk = THREADS * kVec * kRounds;
  __shared__ float warp_sums[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const long long r = blockIdx.y;
  const float* xr = x + r * C;
  const bool vec = aligned16(xr);
  const long long begin = static_cast<long long>(blockIdx.x) * kChunk;
  const long long end = min(static_cast<long long>(C), begin + kChunk);
  float s = 0.0f;
  for (int k = 0; k < kRounds; ++k) {
    const long long j = begin + (static_cast<long long>(k) * THREADS + t) * kVec;
    const float4 v = load4(xr, j, end, vec);
    s += (v.x + v.y) + (v.z + v.w);
  }
  s = warp_sum(s);
  if (lane == 0) warp_sums[warp] = s;
  __syncthreads();
  if (warp == 0) {
    const float w = warp_sum(lane < kWarps ? warp_sums[lane] : 0.0f);
    if (lane == 0) partial[r * gridDim.x + blockIdx.x] = w;
  }
}

// In place: partial[r, c] becomes the sum of the chunks before c (0 for the first).
template <int THREADS>
__global__ void scan_chunk_sums(float* __restrict__ partial, int R, int n) {
  constexpr int kWarps = THREADS / 32;
  __shared__ float warp_incl[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  float* p = partial + static_cast<long long>(blockIdx.x) * n;
  float carry = 0.0f;
  for (int base = 0; base < n; base += THREADS) {
    const int i = base + t;
    const float inc = warp_inclusive(i < n ? p[i] : 0.0f, lane);
    if (lane == 31) warp_incl[warp] = inc;
    __syncthreads();
    scan_warp_totals<kWarps>(warp_incl, lane, warp);
    __syncthreads();
    const float excl = block_exclusive(inc, lane, warp, warp_incl);
    if (i < n) p[i] = carry + excl;
    carry += warp_incl[kWarps - 1];
    __syncthreads();  // warp_incl is rewritten by the next group
  }
}

template <int THREADS>
__global__ void scan_chunks(const float* __restrict__ x, const float* __restrict__ partial,
                            float* __restrict__ y, int R, int C) {
  constexpr int kWarps = THREADS / 32;
  constexpr int kChunk = THREADS * kVec * kRounds;
  __shared__ float warp_incl[kWarps];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const long long r = blockIdx.y;
  const float* xr = x + r * C;
  float* yr = y + r * C;
  const bool vec = aligned16(xr) && aligned16(yr);
  const long long begin = static_cast<long long>(blockIdx.x) * kChunk;
  const long long end = min(static_cast<long long>(C), begin + kChunk);
  float carry = partial[r * gridDim.x + blockIdx.x];
  for (int k = 0; k < kRounds; ++k) {
    // The same for every thread of the block, so no thread leaves before a barrier.
    if (begin + static_cast<long long>(k) * THREADS * kVec >= end) break;
    const long long j = begin + (static_cast<long long>(k) * THREADS + t) * kVec;
    float4 v = load4(xr, j, end, vec);
    v.y += v.x;
    v.z += v.y;
    v.w += v.z;
    const float inc = warp_inclusive(v.w, lane);
    if (lane == 31) warp_incl[warp] = inc;
    __syncthreads();
    scan_warp_totals<kWarps>(warp_incl, lane, warp);
    __syncthreads();
    const float pre = carry + block_exclusive(inc, lane, warp, warp_incl);
    store4(yr, j, end, vec, make_float4(pre + v.x, pre + v.y, pre + v.z, pre + v.w));
    carry += warp_incl[kWarps - 1];
    __syncthreads();  // warp_incl is rewritten by the next round
  }
}
