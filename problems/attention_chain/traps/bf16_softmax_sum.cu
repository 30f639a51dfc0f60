// problems/attention_chain, trap: the scores are right, each row's sum of exponentials is kept in
// bf16. `kjudge localize` must name probs: inherited at the cut at probs, not at scores.
#include <cuda_bf16.h>

/* kjudge
[[scratch]]
name = "s"
dtype = "f32"
shape = ["S", "S"]
stage = "scores"

[[scratch]]
name = "p"
dtype = "f32"
shape = ["S", "S"]
stage = "probs"

[[launch]]
kernel = "scores"
grid = ["ceil_div(S, 16)", "ceil_div(S, 16)"]
block = [16, 16]
args = ["Q", "K", "s", "S", "D"]
stage = "scores"

[[launch]]
kernel = "softmax_rows"
grid = ["ceil_div(S, 128)"]
block = [128]
args = ["s", "p", "S"]
stage = "probs"

[[launch]]
kernel = "weighted_sum"
grid = ["ceil_div(D, 16)", "ceil_div(S, 16)"]
block = [16, 16]
args = ["p", "V", "O", "S", "D"]
*/

__global__ void scores(const float* __restrict__ Q, const float* __restrict__ K,
                       float* __restrict__ s, int S, int D) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long i = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= S || j >= S) return;
  float dot = 0.0f;
  for (long long k = 0; k < D; ++k) dot += Q[i * D + k] * K[j * D + k];
  s[i * S + j] = dot / sqrtf(static_cast<float>(D));
}

// Each row's sum of exponentials kept in bf16: the error this trap is about.
__global__ void softmax_rows(const float* __restrict__ s, float* __restrict__ p, int S) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= S) return;
  const float* row = s + i * S;
  float m = row[0];
  for (long long j = 1; j < S; ++j) m = fmaxf(m, row[j]);
  __nv_bfloat16 sum = __float2bfloat16_rn(0.0f);
  for (long long j = 0; j < S; ++j)
    sum = __float2bfloat16_rn(__bfloat162float(sum) + expf(row[j] - m));
  for (long long j = 0; j < S; ++j) p[i * S + j] = expf(row[j] - m) / __bfloat162float(sum);
}

__global__ void weighted_sum(const float* __restrict__ p, const float* __restrict__ V,
                             float* __restrict__ O, int S, int D) {
  const long long d = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long i = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= S || d >= D) return;
  float acc = 0.0f;
  for (long long j = 0; j < S; ++j) acc += p[i * S + j] * V[j * D + d];
  O[i * D + d] = acc;
}
