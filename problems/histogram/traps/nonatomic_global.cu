// problems/histogram, trap: a race. One thread per element adds into the global counts with a
// plain `counts[v] += 1`: a load, an add and a store, which interleave between threads that hit
// the same bin (about 18% of the elements land on bin 1, another 18% on bin 2), so updates are
// lost, a different number on every run. atomicAdd was needed.
/* kjudge
[[launch]]
kernel = "histogram_racy"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "counts", "N", "BINS"]
*/
__global__ void histogram_racy(const int* __restrict__ x, int* counts, int N, int BINS) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const int v = x[i];
  if (v >= 0 && v < BINS) counts[v] += 1;  // not atomic
}
