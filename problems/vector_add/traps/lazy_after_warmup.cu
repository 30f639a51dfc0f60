// problems/vector_add, trap: tells the timed runs from the judged ones by counting launches.
// A harness that checks a few outputs first and then times many (or checks only the last) sees
// right answers; from its 400th launch on, past every run of kjudge's check (124 on the GPU,
// fewer on the host backend), this kernel drops y and returns x alone, a third less traffic.
// The count lives in __device__ state, which the static scan forbids, but its address makes a
// round trip through shared memory first: the scan follows such an address through registers,
// not through memory, so it misses the stores. No finite check can see a kernel change after
// its runs; `kjudge bench` judges every timed output, so it fails there as stale_output.
/* kjudge
[[launch]]
kernel = "vector_add_lazy"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]

[[launch]]
kernel = "count_launch"
grid = [1]
block = [1]
args = ["N"]
*/
constexpr unsigned kWarmupLaunches = 400;
__device__ unsigned g_launches;

__global__ void vector_add_lazy(const float* __restrict__ x, const float* __restrict__ y,
                                float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const bool timed = g_launches >= kWarmupLaunches;  // a read: the scan allows it
  z[i] = timed ? x[i] : x[i] + y[i];
}

// A second launch, so that every block of the first sees the same count.
__global__ void count_launch(int) {
  __shared__ unsigned* volatile counter;
  counter = &g_launches;      // the address goes out to shared memory...
  unsigned* const c = counter; // ...and comes back as a value the scan does not track
  *c += 1;
}
