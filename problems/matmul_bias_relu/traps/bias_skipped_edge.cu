// problems/matmul_bias_relu, trap: partial computation at the edge. A 64 x 64 tiled kernel with
// two epilogues: full column tiles take a float4 path with the bias and the ReLU, the last,
// partial tile of columns a scalar path written separately, which forgets the bias. Every public
// N (1024, 1216) is a multiple of 64, so public cases never reach the scalar path; the hidden N
// (383, 2053, 131) and the perturbations (N - 1, N + 1, ...) do, and those columns come out as
// relu(A B) instead of relu(A B + bias): a mismatch.
/* kjudge
[[launch]]
kernel = "matmul_bias_relu_edge"
grid = ["ceil_div(N, 64)", "ceil_div(M, 64)"]
block = [256]
args = ["A", "B", "bias", "C", "M", "N", "K"]
*/
constexpr int BM = 64, BN = 64, BK = 16;

__device__ __forceinline__ float relu(float v) { return v < 0.0f ? 0.0f : v; }

__global__ void __launch_bounds__(256)
matmul_bias_relu_edge(const float* __restrict__ A, const float* __restrict__ B,
                      const float* __restrict__ bias, float* __restrict__ C, int M, int N,
                      int K) {
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = tid; e < BM * BK; e += 256) {  // A tile, stored transposed
      const int r = e / BK, k = e % BK;
      As[k][r] = (m0 + r < M && k0 + k < K) ? A[static_cast<long long>(m0 + r) * K + k0 + k] : 0.0f;
    }
    for (int e = tid; e < BK * BN; e += 256) {
      const int k = e / BN, c = e % BN;
      Bs[k][c] = (k0 + k < K && n0 + c < N) ? B[static_cast<long long>(k0 + k) * N + n0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k)
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] += As[k][ty * 4 + i] * Bs[k][tx * 4 + j];
    __syncthreads();
  }
  const int c0 = n0 + tx * 4;
  for (int i = 0; i < 4; ++i) {
    const int r = m0 + ty * 4 + i;
    if (r >= M) break;
    float* out = C + static_cast<long long>(r) * N + c0;
    if (n0 + BN > N) {  // the last, partial tile: element by element, and the bias forgotten
      for (int j = 0; j < 4; ++j)
        if (c0 + j < N) out[j] = relu(acc[i][j]);
    } else if (N % 4 == 0) {  // a full tile of 16-byte aligned rows: vectorised, with the bias
      const float4 b = *reinterpret_cast<const float4*>(bias + c0);
      *reinterpret_cast<float4*>(out) = make_float4(relu(acc[i][0] + b.x), relu(acc[i][1] + b.y),
                                                    relu(acc[i][2] + b.z), relu(acc[i][3] + b.w));
    } else {  // a full tile whose rows are not 16-byte aligned: element by element, with the bias
      for (int j = 0; j < 4; ++j)
        out[j] = relu(acc[i][j] + bias[c0 + j]);
    }
  }
}
