// problems/vector_add, trap: one source, two programs. The candidate opens namespace std with a
// min that returns zero; NVRTC, which has no std::min, calls it, so the GPU writes zeros. g++
// also sees libstdc++'s std::min template, an exact match for two floats, and calls that: the
// host ran a kernel no GPU runs and passed it. The host build keeps the candidate's own names
// apart from the libraries' (std becomes kjc_std), so it runs the GPU's program and fails it.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
namespace std {
__device__ double min(double, double) { return 0.0; }
} // namespace std

__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const float sum = x[i] + y[i];
  z[i] = static_cast<float>(std::min(sum, sum));
}
