// problems/relu, trap (sandbox): a static constructor that would open the judge's
// /proc/<ppid>/mem when the module loads and read the golden out of the oracle's heap. Its
// declaration is __host__ __device__, which NVRTC accepts (it ignores the attribute); its body
// is hidden from NVRTC, and from the host build too, which is preprocessed with NVRTC's macros.
// The host backend compiles the program NVRTC compiled, where `constructor` is a word of the
// candidate's own (kept apart as kjc_constructor, which g++ ignores as NVRTC does): no
// constructor, and the kernel writes zeros on both backends (mismatch). A spelling g++ still
// honours is refused as code that runs at load; the worker's Landlock, user namespace and the
// oracle's non-dumpable memory would refuse the open.
/* kjudge
[[launch]]
kernel = "relu"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
#ifndef __CUDACC_RTC__
extern "C" int open(const char*, int, ...);
extern "C" int getppid();
extern "C" int snprintf(char*, unsigned long, const char*, ...);
static int judge_memory = -1;
#endif
__attribute__((constructor)) __host__ __device__ void open_the_judge() {
#ifndef __CUDACC_RTC__
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", getppid());
  judge_memory = open(path, 0);
#endif
}
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = 0.0f * x[i];
}
