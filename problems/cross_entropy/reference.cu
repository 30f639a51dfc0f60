// The reference of problems/cross_entropy: the mean over rows of logsumexp(row) - row[target], in
// kj::acc_t<T>. One block of 1024 threads (launched with exactly that many): it works through the
// rows in waves of 1024, one thread per row, each pass over a row sequential (max, then the sum
// of exp(x - max)); the wave's row losses go to shared memory and thread 0 adds them to the total
// in row order, so the sum over rows is the plain sequential sum a two-launch kernel (row losses
// to scratch, then one thread) computes. One block because a reference has no scratch buffer:
// the only memory that outlives a launch is the one-element output. Templated on T so that the
// golden is the same code in double.
#include "kjudge/device.cuh"

constexpr int kRefThreads = 1024;

template <class T>
__global__ void cross_entropy_ref(const T* __restrict__ logits,
                                  const long long* __restrict__ target, T* __restrict__ loss,
                                  int N, int C) {
  using A = kj::acc_t<T>;
  __shared__ A row_loss[kRefThreads];
  const int t = threadIdx.x;
  A total = kj::c<A>(0);  // thread 0's running sum
  for (long long base = 0; base < N; base += kRefThreads) {
    const long long i = base + t;
    if (i < N) {
      const T* xr = logits + i * C;
      A m = static_cast<A>(xr[0]);
      for (int j = 1; j < C; ++j) {
        const A v = static_cast<A>(xr[j]);
        if (!(v <= m)) m = v;  // written so that a NaN propagates instead of being skipped
      }
      A sum = kj::c<A>(0);
      for (int j = 0; j < C; ++j) sum += kj::exp(static_cast<A>(xr[j]) - m);
      row_loss[t] = (m + kj::log(sum)) - static_cast<A>(xr[target[i]]);
    }
    __syncthreads();
    if (t == 0) {
      const long long rows = N - base < kRefThreads ? N - base : kRefThreads;
      for (long long k = 0; k < rows; ++k) total += row_loss[k];
    }
    __syncthreads();  // the wave's losses are read before the next wave overwrites them
  }
  if (t == 0) loss[0] = static_cast<T>(total / static_cast<A>(N));
}
