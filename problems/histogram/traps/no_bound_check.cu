// problems/histogram, trap: a missing bound check. Every value is used as an index into counts,
// but the input holds values past the last bin (a heavy tail: ~6% of them beyond 256, some up to
// the i32 maximum), so atomicAdd writes past the end of counts: just past it into the red zone,
// or gigabytes past it, where the address is not mapped and the launch faults.
/* kjudge
[[launch]]
kernel = "histogram_unchecked"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "counts", "N", "BINS"]
*/
__global__ void histogram_unchecked(const int* __restrict__ x, int* __restrict__ counts, int N,
                                    int BINS) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  atomicAdd(&counts[x[i]], 1);  // the fault: x[i] < BINS is never checked
}
