// problems/rms_chain, trap: ms and rstd are right, the scale reads w as bf16. `kjudge localize`
// must name the output's own launch, y.
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

// The gain w read as bf16: the error this trap is about.
__global__ void scale(const float* __restrict__ x, const float* __restrict__ rstd,
                      const float* __restrict__ w, float* __restrict__ y, int R, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(R) * C) return;
  y[i] = x[i] * rstd[i / C] * __bfloat162float(__float2bfloat16_rn(w[i % C]));
}
