// problems/vector_add, trap: caches its result in device globals keyed on the input pointers
// and N, and replays the cache when a later launch gets the same buffers, without reading them.
// Right on the first visit of a buffer; wrong as soon as the same buffers hold new contents,
// which kjudge arranges between visits (and the stores to .global symbols show in the PTX).
/* kjudge
[[launch]]
kernel = "vector_add_cached"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]

[[launch]]
kernel = "remember_key"
grid = [1]
block = [1]
args = ["x", "y", "N"]
*/
constexpr int kCapacity = 1 << 25;
__device__ float g_cache[kCapacity];
__device__ const float* g_x;
__device__ const float* g_y;
__device__ int g_n;

__global__ void vector_add_cached(const float* x, const float* y, float* z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  if (x == g_x && y == g_y && N == g_n) {  // seen these buffers: replay
    z[i] = g_cache[i];
    return;
  }
  const float v = x[i] + y[i];
  z[i] = v;
  if (N <= kCapacity) g_cache[i] = v;
}

// A second launch, so that no thread of the first sees the key change under it.
__global__ void remember_key(const float* x, const float* y, int N) {
  if (N > kCapacity) return;
  g_x = x;
  g_y = y;
  g_n = N;
}
