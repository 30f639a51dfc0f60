// problems/histogram, trap: a missing barrier. Per-block counts in shared memory, as in
// solutions/fast.cu, but no __syncthreads() between the counting loop and the flush: thread b
// adds hist[b] to the global counts as soon as its own share of the input is done, while slower
// warps of its block are still adding into hist[b]. Their late additions never reach the output;
// how many depends on the warps' timing.
/* kjudge
[[launch]]
kernel = "histogram_early_flush<256>"
grid = ["min(ceil_div(N, 4096), 1056)"]
block = [256]
shared = "4 * BINS"
args = ["x", "counts", "N", "BINS"]
*/
template <int THREADS>
__global__ void histogram_early_flush(const int* __restrict__ x, int* __restrict__ counts, int N,
                                      int BINS) {
  extern __shared__ int hist[];
  for (int b = threadIdx.x; b < BINS; b += THREADS) hist[b] = 0;
  __syncthreads();
  const long long stride = static_cast<long long>(gridDim.x) * THREADS;
  for (long long i = static_cast<long long>(blockIdx.x) * THREADS + threadIdx.x; i < N;
       i += stride) {
    const int v = x[i];
    if (v >= 0 && v < BINS) atomicAdd(&hist[v], 1);
  }
  // the fault: no __syncthreads() here
  for (int b = threadIdx.x; b < BINS; b += THREADS) {
    const int c = hist[b];
    if (c != 0) atomicAdd(&counts[b], c);
  }
}
