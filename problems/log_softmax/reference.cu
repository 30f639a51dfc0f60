// The reference of problems/log_softmax: one thread per row, and each of the three passes over a
// row (max, sum of exponentials, output) sequential in kj::acc_t<T>. The output is formed as
// (x - max) - log(sum), the stable form: no exponential of an unshifted input, no log of a
// normalised probability (which underflows to log(0) for very negative logits). A plain order is
// the fairest yardstick for the `relative` policy; templated on T so that the golden is the same
// code in double.
#include "kjudge/device.cuh"

template <class T>
__global__ void log_softmax_ref(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
  using A = kj::acc_t<T>;
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const T* xr = x + r * C;
  T* yr = y + r * C;

  A m = static_cast<A>(xr[0]);
  for (int j = 1; j < C; ++j) {
    const A v = static_cast<A>(xr[j]);
    if (!(v <= m)) m = v;  // written so that a NaN propagates instead of being skipped
  }
  A sum = kj::c<A>(0);
  for (int j = 0; j < C; ++j) sum += kj::exp(static_cast<A>(xr[j]) - m);
  const A log_sum = kj::log(sum);
  for (int j = 0; j < C; ++j) yr[j] = static_cast<T>((static_cast<A>(xr[j]) - m) - log_sum);
}
