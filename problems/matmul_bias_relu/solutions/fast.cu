// problems/matmul_bias_relu, correct and fast: a register-blocked shared-memory GEMM with the
// bias and the ReLU fused into its epilogue, so C is written once and never read back. A block
// of 256 threads computes a 64 x 64 tile of C, each thread a 4 x 4 patch of it, over k steps of
// 16: the 64 x 16 tile of A (stored transposed, so a thread reads its 4 rows as one float4) and
// the 16 x 64 tile of B go through two shared-memory buffers, the next step's global loads in
// flight in registers while the current step computes (one barrier per step). Global loads are
// float4 where the row length and the base allow (K or N a multiple of 4), else element loads
// that zero-fill past M, N and K; the zeros past K add exact zeros, rows and columns past M and
// N are never stored. Each element sums its k in order (the reference's order, fused
// multiply-adds).
//
// The epilogue adds the column's bias to the finished sum and applies `v < 0 ? 0 : v`, which
// keeps NaN (fmaxf would not; the problem's nan rule is "propagate").
/* kjudge
[[launch]]
kernel = "matmul_bias_relu_tiled"
grid = ["ceil_div(N, 64)", "ceil_div(M, 64)"]
block = [256]
args = ["A", "B", "bias", "C", "M", "N", "K"]
*/
constexpr int BM = 64, BN = 64, BK = 16;
constexpr int APAD = 4;  // a row of the transposed A tile stays 16-byte aligned

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<unsigned long long>(p) & 15u) == 0;
}

// Four consecutive elements of a row, starting at column c of a rows x cols matrix; zeros past
// its edges.
__device__ __forceinline__ float4 load4(const float* __restrict__ X, int r, int c, int rows,
                                        int cols, bool vec) {
  const float* p = X + static_cast<long long>(r) * cols + c;
  if (vec && r < rows && c + 4 <= cols) return *reinterpret_cast<const float4*>(p);
  float4 v;
  v.x = (r < rows && c + 0 < cols) ? p[0] : 0.0f;
  v.y = (r < rows && c + 1 < cols) ? p[1] : 0.0f;
  v.z = (r < rows && c + 2 < cols) ? p[2] : 0.0f;
  v.w = (r < rows && c + 3 < cols) ? p[3] : 0.0f;
  return v;
}

__device__ __forceinline__ float relu(float v) { return v < 0.0f ? 0.0f : v; }

__global__ void __launch_bounds__(256)
matmul_bias_relu_tiled(const float* __restrict__ A, const float* __restrict__ B,
                       const float* __restrict__ bias, float* __restrict__ C, int M, int N,
                       int K) {
  __shared__ __align__(16) float As[2][BK][BM + APAD];
  __shared__ __align__(16) float Bs[2][BK][BN];

  const int tid = threadIdx.x;
  const int tx = tid % 16, ty = tid / 16;  // this thread's 4 x 4 patch: rows ty*4.., cols tx*4..
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool a_vec = K % 4 == 0 && aligned16(A);
  const bool b_vec = N % 4 == 0 && aligned16(B);

  // The loads of one k step: a float4 of A (row ar, k ak..ak+3) and of B (k br, n bn..bn+3).
  const int ar = tid / 4, ak = (tid % 4) * 4;
  const int br = tid / 16, bn = (tid % 16) * 4;

  float acc[4][4] = {};
  const int steps = (K + BK - 1) / BK;
  float4 ra = load4(A, m0 + ar, ak, M, K, a_vec);
  float4 rb = load4(B, br, n0 + bn, K, N, b_vec);
  for (int s = 0; s < steps; ++s) {
    const int buf = s & 1;
    // The buffer written here was last read in step s - 2, before the barrier of step s - 1.
    As[buf][ak + 0][ar] = ra.x;
    As[buf][ak + 1][ar] = ra.y;
    As[buf][ak + 2][ar] = ra.z;
    As[buf][ak + 3][ar] = ra.w;
    *reinterpret_cast<float4*>(&Bs[buf][br][bn]) = rb;
    __syncthreads();
    if (s + 1 < steps) {  // the next step's loads, in flight while this step computes
      const int k1 = (s + 1) * BK;
      ra = load4(A, m0 + ar, k1 + ak, M, K, a_vec);
      rb = load4(B, k1 + br, n0 + bn, K, N, b_vec);
    }
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(&As[buf][k][ty * 4]);
      const float4 b = *reinterpret_cast<const float4*>(&Bs[buf][k][tx * 4]);
      const float av[4] = {a.x, a.y, a.z, a.w};
      const float bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
  }

  // Epilogue: bias and ReLU, then a float4 store where the four columns are inside C and
  // aligned, element stores at the edges.
  const int c0 = n0 + tx * 4;
  float bv[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) bv[j] = c0 + j < N ? bias[c0 + j] : 0.0f;
  const bool c_vec = N % 4 == 0 && aligned16(C) && c0 + 4 <= N;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = m0 + ty * 4 + i;
    if (r >= M) break;
    float* out = C + static_cast<long long>(r) * N + c0;
    float v[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = relu(acc[i][j] + bv[j]);
    if (c_vec) {
      *reinterpret_cast<float4*>(out) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (c0 + j < N) out[j] = v[j];
    }
  }
}
