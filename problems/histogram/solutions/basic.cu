// problems/histogram, correct: one thread per element, a bound check, one global atomicAdd into
// the zeroed counts. Exact in any order; slow where many elements hit the same bin (every atomic
// on bin 1 or 2 queues at the same L2 address).
/* kjudge
[[launch]]
kernel = "histogram_global"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "counts", "N", "BINS"]
*/
__global__ void histogram_global(const int* __restrict__ x, int* __restrict__ counts, int N,
                                 int BINS) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const int v = x[i];
  if (v >= 0 && v < BINS) atomicAdd(&counts[v], 1);
}
