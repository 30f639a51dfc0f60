// problems/histogram, trap: partial computation. The grid is sized like a persistent kernel's
// (2 blocks of 256 threads per SM of an H200: 264 blocks) but the kernel has no grid-stride loop:
// each thread counts one element, so only the first 67584 elements are ever counted. Right for
// small N only; every public shape (and the host's N = 100003) has far more.
/* kjudge
[[launch]]
kernel = "histogram_one_pass<256>"
grid = ["min(ceil_div(N, 256), 264)"]
block = [256]
shared = "4 * BINS"
args = ["x", "counts", "N", "BINS"]
*/
template <int THREADS>
__global__ void histogram_one_pass(const int* __restrict__ x, int* __restrict__ counts, int N,
                                   int BINS) {
  extern __shared__ int hist[];
  for (int b = threadIdx.x; b < BINS; b += THREADS) hist[b] = 0;
  __syncthreads();
  const long long i = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x;
  if (i < N) {  // the fault: no loop over the rest of the input
    const int v = x[i];
    if (v >= 0 && v < BINS) atomicAdd(&hist[v], 1);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += THREADS) {
    const int c = hist[b];
    if (c != 0) atomicAdd(&counts[b], c);
  }
}
