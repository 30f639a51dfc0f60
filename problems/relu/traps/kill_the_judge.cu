// problems/relu, trap (sandbox): a wrong kernel whose hidden host code (behind
// #ifndef __CUDACC_RTC__) signals the oracle, SIGKILL to its parent and SIGSTOP to every process
// it may signal, so that its FAIL becomes no verdict at all. The host build is preprocessed with
// NVRTC's macros, so the calls are not compiled there either (the program is the one NVRTC
// saw); were they, the worker's seccomp filter and Landlock's signal scope refuse them
// (HostSandbox tests). The wrong output is judged: mismatch on both backends.
/* kjudge
[[launch]]
kernel = "relu"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
#ifndef __CUDACC_RTC__
extern "C" int kill(int, int);
extern "C" int getppid();
#endif
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
#ifndef __CUDACC_RTC__
  if (i == 0) {
    kill(getppid(), 9);
    kill(-1, 19);
  }
#endif
  if (i >= n) return;
  y[i] = -x[i];
}
