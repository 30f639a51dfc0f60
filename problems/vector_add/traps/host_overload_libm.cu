// problems/vector_add, trap: a name only the host's C library declares. C23's fadd(double,
// double) rounds a sum to float; glibc declares it, NVRTC has no such function. The candidate's
// own fadd takes ints and returns zero: NVRTC calls it, g++ prefers glibc's (a promotion beats a
// conversion) and adds right. With the candidate's names kept apart (kjc_fadd) both call the
// candidate's, and both fail.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__device__ float fadd(int, int) { return 0.0f; }

__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) z[i] = fadd(x[i], y[i]);
}
