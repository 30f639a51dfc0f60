// problems/rms_chain, solution: three launches, the reference's algorithm, ms and rstd exposed as the
// problem's stages. `kjudge localize` finds every stage at the reference's quality.
#include <cuda_bf16.h>

/* kjudge
[[scratch]]
name = "sq"
dtype = "f32"
shape = ["R"]
stage = "ms"

[[scratch]]
name = "inv"
dtype = "f32"
shape = ["R"]
stage = "rstd"

[[launch]]
kernel = "mean_square"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["x", "sq", "R", "C"]
stage = "ms"

[[launch]]
kernel = "reciprocal"
grid = ["ceil_div(R, 128)"]
block = [128]
args = ["sq", "inv", "eps", "R"]
stage = "rstd"

[[launch]]
kernel = "scale"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "inv", "w", "y", "R", "C"]
*/

__global__ void mean_square(const float* __restrict__ x, float* __restrict__ ms, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  float sum = 0.0f;
  for (long long j = 0; j < C; ++j) sum += x[r * C + j] * x[r * C + j];
  ms[r] = sum / static_cast<float>(C);
}

__global__ void reciprocal(const float* __restrict__ ms, float* __restrict__ rstd, float eps, int R) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  rstd[r] = 1.0f / sqrtf(ms[r] + eps);
}

__global__ void scale(const float* __restrict__ x, const float* __restrict__ rstd,
                      const float* __restrict__ w, float* __restrict__ y, int R, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(R) * C) return;
  y[i] = x[i] * rstd[i / C] * w[i % C];
}
