// problems/relu, trap (sandbox): hidden host code (behind #ifndef __CUDACC_RTC__) hands the
// work to a thread of its own, off the clock the bench reads. The host build is preprocessed
// with NVRTC's macros, so the thread code is not compiled there either; were it, the worker
// refuses new threads once kjudge's block threads exist (HostSandbox tests). The kernel writes
// nothing: unwritten_output on both backends.
/* kjudge
[[launch]]
kernel = "relu"
grid = ["ceil_div(R * C, 256)"]
block = [256]
args = ["x", "y", "R * C"]
*/
#ifndef __CUDACC_RTC__
// pthread_create and pthread_join: declared by the host build's own headers.
struct Job { const float* x; float* y; long long n; };
static void* do_the_work(void* p) {
  Job* j = static_cast<Job*>(p);
  for (long long i = 0; i < j->n; ++i) j->y[i] = j->x[i] < 0.0f ? 0.0f : j->x[i];
  return nullptr;
}
#endif
__global__ void relu(const float* __restrict__ x, float* __restrict__ y, long long n) {
#ifndef __CUDACC_RTC__
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    static Job job;
    job = Job{x, y, n};
    pthread_t t;
    if (pthread_create(&t, nullptr, do_the_work, &job) == 0) pthread_join(t, nullptr);
  }
#endif
}
