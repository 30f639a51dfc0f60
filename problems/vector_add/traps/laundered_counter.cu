// problems/vector_add, trap: lazy_after_warmup's launch counter with its address laundered
// through local memory instead of shared: a right answer for its first 400 launches, past every
// run of kjudge's check, then z = x alone, a third less traffic, once a timing loop is running.
// The counter's address is stored to a stack array and loaded back, so the store that counts
// goes through a pointer that came out of memory, not through a register the scan follows to
// the symbol. Taking the address is the finding: only a load may use a __device__ variable's
// address, so the static scan fails it as forbidden_construct at `slot[N & 1] = &g_launches`,
// before anything runs.
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
  const bool timed = g_launches >= kWarmupLaunches; // a read: the scan allows it
  z[i] = timed ? x[i] : x[i] + y[i];
}

// A second launch, so that every block of the first sees the same count. The index depends on
// N so that the array stays in local memory rather than in registers.
__global__ void count_launch(int N) {
  unsigned* volatile slot[2];
  slot[N & 1] = &g_launches;           // the address goes out to the stack...
  unsigned* const counter = slot[N & 1]; // ...and comes back as a value
  *counter += 1;
}
