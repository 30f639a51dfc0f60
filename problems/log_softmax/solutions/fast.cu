// problems/log_softmax, correct and fast: one block of 256 threads per row, two passes over the
// row instead of three. The first pass reads the row with 16-byte float4 loads (four in flight
// per thread) and keeps an online (max, sum of exp(x - max)) pair per thread, rescaling the sum
// once per 16 values when the max grows; the pairs are merged with butterfly shuffles in each
// warp and then across the 8 warps through shared memory. The second pass re-reads the row
// (from L1/L2) and writes (x - max) - log(sum) with float4 stores. A row whose start is not
// 16-byte aligned (C not a multiple of 4) gets a scalar head up to the first aligned element and
// a scalar tail after the last whole float4.
/* kjudge
[[launch]]
kernel = "log_softmax_fast<256>"
grid = ["R"]
block = [256]
args = ["x", "y", "R", "C"]
*/

#define KJ_NEG_INF __int_as_float(0xff800000)

// Folds the pair (m2, s2) into (m, s): s counts exp(v - m) over the values seen. An empty pair is
// (-inf, 0); two empty pairs stay empty (exp(-inf - -inf) would be NaN).
__device__ __forceinline__ void merge(float& m, float& s, float m2, float s2) {
  const float mn = fmaxf(m, m2);
  if (mn == KJ_NEG_INF) return;
  s = s * expf(m - mn) + s2 * expf(m2 - mn);
  m = mn;
}

// Folds n values (n <= 16, known at compile time when unrolled) with one rescale of the sum.
template <int N>
__device__ __forceinline__ void fold(float& m, float& s, const float (&v)[N]) {
  float vm = v[0];
#pragma unroll
  for (int k = 1; k < N; ++k) vm = fmaxf(vm, v[k]);
  const float mn = fmaxf(m, vm);
  if (mn == KJ_NEG_INF) return;  // only -inf (or NaN) so far: nothing to add yet
  float add = 0.0f;
#pragma unroll
  for (int k = 0; k < N; ++k) add += expf(v[k] - mn);
  s = s * expf(m - mn) + add;
  m = mn;
}

template <int THREADS>
__global__ void __launch_bounds__(THREADS)
    log_softmax_fast(const float* __restrict__ x, float* __restrict__ y, int R, int C) {
  constexpr int WARPS = THREADS / 32;
  __shared__ float warp_m[WARPS];
  __shared__ float warp_s[WARPS];
  const int t = threadIdx.x, lane = t % 32, warp = t / 32;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;

  // Scalar head up to the first 16-byte boundary; all scalar if x and y rows disagree on it.
  const unsigned long long xa = reinterpret_cast<unsigned long long>(xr);
  const unsigned long long ya = reinterpret_cast<unsigned long long>(yr);
  int head = static_cast<int>((16 - (xa & 15)) & 15) / 4;
  if (((xa ^ ya) & 15) != 0 || head > C) head = C;
  const int n4 = (C - head) / 4;
  const int body_end = head + 4 * n4;
  const float4* x4 = reinterpret_cast<const float4*>(xr + head);
  float4* y4 = reinterpret_cast<float4*>(yr + head);

  float m = KJ_NEG_INF, s = 0.0f;
  int i = t;
  for (; i + 3 * THREADS < n4; i += 4 * THREADS) {
    const float4 a = x4[i], b = x4[i + THREADS], c = x4[i + 2 * THREADS],
                 d = x4[i + 3 * THREADS];
    const float v[16] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w,
                         c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w};
    fold(m, s, v);
  }
  for (; i < n4; i += THREADS) {
    const float4 a = x4[i];
    const float v[4] = {a.x, a.y, a.z, a.w};
    fold(m, s, v);
  }
  // Head and tail: fewer than 4 elements each, one per thread.
  if (t < head) {
    const float v[1] = {xr[t]};
    fold(m, s, v);
  }
  if (body_end + t < C) {
    const float v[1] = {xr[body_end + t]};
    fold(m, s, v);
  }

  for (int o = 16; o > 0; o >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, o);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, o);
    merge(m, s, m2, s2);
  }
  if (lane == 0) {
    warp_m[warp] = m;
    warp_s[warp] = s;
  }
  __syncthreads();
  // Every thread merges the warp pairs in the same order, so all hold the same row values and
  // no second barrier or broadcast is needed.
  m = warp_m[0];
  s = warp_s[0];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) merge(m, s, warp_m[w], warp_s[w]);
  const float log_sum = logf(s);

  for (int k = t; k < n4; k += THREADS) {
    const float4 a = x4[k];
    y4[k] = make_float4((a.x - m) - log_sum, (a.y - m) - log_sum, (a.z - m) - log_sum,
                        (a.w - m) - log_sum);
  }
  if (t < head) yr[t] = (xr[t] - m) - log_sum;
  if (body_end + t < C) yr[body_end + t] = (xr[body_end + t] - m) - log_sum;
}
