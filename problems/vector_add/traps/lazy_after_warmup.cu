// problems/vector_add, trap: tells the timed runs from the judged ones by counting launches.
// A harness that checks a few outputs first and then times many (or checks only the last) sees
// right answers; from its 400th launch on, past every run of kjudge's check (124 on the GPU,
// fewer on the host backend), this kernel drops y and returns x alone, a third less traffic.
// The count lives in __device__ state, and its address makes a round trip through shared
// memory, so that the store that counts goes through a pointer loaded back from memory, which
// no register-following scan can trace to the symbol. The static scan therefore forbids taking
// such an address at all (only a load may use it) and fails this kernel as forbidden_construct
// at `counter = &g_launches`. With the scan off it passes the check, and only `kjudge bench`,
// which judges every timed output, fails it (stale_output).
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
