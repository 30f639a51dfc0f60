// problems/vector_add, trap: reads the GPU's nanosecond clock through inline PTX behind a macro,
// as a kernel would to tell a timed run from a judged one and do less when it is timed. Its
// answer is right; the static scan finds %globaltimer in the PTX, whatever the source calls it.
#define STAMP(t) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t))

/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  unsigned long long started;
  STAMP(started);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  // A real cheat would branch on the time; this one only keeps the read alive.
  if (i < N) z[i] = x[i] + y[i] + (started == 0ull ? 1.0f : 0.0f);
}
