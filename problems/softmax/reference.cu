// The reference of problems/softmax: one thread per row, and each of the three passes over a row
// (max, sum of exponentials, normalise) sequential in kj::acc_t<T>. A plain order is the fairest
// yardstick for the `relative` policy: a tree-reduced reference would reject correct sequential
// candidates. Templated on T so that the golden is the same code in double.
#include "kjudge/device.cuh"

template <class T>
__global__ void softmax_ref(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
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
  for (int j = 0; j < C; ++j) yr[j] = static_cast<T>(kj::exp(static_cast<A>(xr[j]) - m) / sum);
}
