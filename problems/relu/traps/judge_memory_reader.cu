// problems/relu, trap (sandbox): host code hidden from NVRTC behind #ifndef __CUDACC_RTC__, a
// static constructor that opens the judge's /proc/<ppid>/mem when the module loads and reads
// the golden out of the oracle's heap. On the host backend the module is refused
// (forbidden_construct: code that runs at load); even loaded, the worker's Landlock, user
// namespace and the oracle's non-dumpable memory refuse the open. On the GPU it is a kernel that
// writes zeros: mismatch.
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
__attribute__((constructor)) static void open_the_judge() {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/mem", getppid());
  judge_memory = open(path, 0);
}
#endif
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = 0.0f * x[i];
}
