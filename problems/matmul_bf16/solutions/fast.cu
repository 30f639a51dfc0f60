// problems/matmul_bf16, correct and fast: tensor cores through WMMA (nvcuda::wmma, bf16 16x16x16
// fragments with f32 accumulators). A block computes a 128 x 128 tile of C with 8 warps, each
// a 32 x 64 sub-tile (2 x 4 fragments); the 128 x 32 tile of A and the 32 x 128 tile of B are
// staged in shared memory per step, with 16-byte loads where the row length and the base allow
// (K or N a multiple of 8) and element loads that zero-fill past M, N and K otherwise, so any
// shape works: the zeros past K add exact zeros (both operands are zero there), and rows and
// columns past M and N are never stored. C goes out through a per-warp 16 x 16 staging buffer in
// shared memory, because store_matrix_sync writes whole fragments and needs an aligned row
// stride; the lanes store the elements that lie inside C.
//
// The order of additions differs from the reference's: each fragment step adds 16 products to
// the f32 accumulator at once, as the tensor core rounds it. The host backend cannot run tensor
// cores (expect_host = "unsupported").
#include <cuda_bf16.h>
#include <mma.h>

/* kjudge
[[launch]]
kernel = "matmul_wmma"
grid = ["ceil_div(N, 128)", "ceil_div(M, 128)"]
block = [256]
args = ["A", "B", "C", "M", "N", "K"]
*/
using namespace nvcuda;

constexpr int BM = 128, BN = 128, BK = 32;
constexpr int PAD = 8;                     // keeps rows 16-byte aligned, staggers the banks
constexpr int WARPS_N = 2;                 // 8 warps: 4 along M by 2 along N
constexpr int WM = 32, WN = 64;            // a warp's sub-tile
constexpr int FM = WM / 16, FN = WN / 16;  // its fragments

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15u) == 0;
}

__global__ void __launch_bounds__(256)
matmul_wmma(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
            float* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(128) __nv_bfloat16 As[BM][BK + PAD];
  __shared__ __align__(128) __nv_bfloat16 Bs[BK][BN + PAD];
  __shared__ __align__(128) float Cs[8][16 * 16];

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  // 16-byte loads need every row start aligned: the base and a row length that is a multiple
  // of 8 elements.
  const bool a_vec = K % 8 == 0 && aligned16(A);
  const bool b_vec = N % 8 == 0 && aligned16(B);
  const __nv_bfloat16 zero = __float2bfloat16_rn(0.0f);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    // A: 128 rows of 32, as 512 chunks of 8 elements, two per thread.
    for (int c = tid; c < BM * BK / 8; c += 256) {
      const int r = c / (BK / 8), kc = (c % (BK / 8)) * 8;
      const int gr = m0 + r, gk = k0 + kc;
      __nv_bfloat16* dst = &As[r][kc];
      const __nv_bfloat16* src = A + static_cast<long long>(gr) * K + gk;
      if (a_vec && gr < M && gk + 8 <= K) {
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = (gr < M && gk + e < K) ? src[e] : zero;
      }
    }
    // B: 32 rows of 128, as 512 chunks of 8 elements, two per thread.
    for (int c = tid; c < BK * BN / 8; c += 256) {
      const int r = c / (BN / 8), nc = (c % (BN / 8)) * 8;
      const int gk = k0 + r, gn = n0 + nc;
      __nv_bfloat16* dst = &Bs[r][nc];
      const __nv_bfloat16* src = B + static_cast<long long>(gk) * N + gn;
      if (b_vec && gk < K && gn + 8 <= N) {
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = (gk < K && gn + e < N) ? src[e] : zero;
      }
    }
    __syncthreads();

#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> af[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> bf[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(af[i], &As[wm * WM + i * 16][kk], BK + PAD);
#pragma unroll
      for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(bf[j], &Bs[kk][wn * WN + j * 16], BN + PAD);
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
    __syncthreads();  // the next step overwrites the tiles the fragments were loaded from
  }

  float* stage = Cs[warp];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      const int r0 = m0 + wm * WM + i * 16, c0 = n0 + wn * WN + j * 16;
      if (r0 >= M || c0 >= N) continue;  // the same for the whole warp
      wmma::store_matrix_sync(stage, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      for (int e = lane; e < 16 * 16; e += 32) {
        const int r = r0 + e / 16, c = c0 + e % 16;
        if (r < M && c < N) C[static_cast<long long>(r) * N + c] = stage[e];
      }
      __syncwarp();  // the lanes have read the stage before the next fragment overwrites it
    }
}
