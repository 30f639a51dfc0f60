// The reference of problems/reduce_sum: one thread per row, summing left to right in
// kj::acc_t<T>. In the golden (T = double) the sum is exact to about 1e-16 of the row's
// magnitude, far below any f32 kernel's error; in f32 it is the plain sequential sum whose
// error the `relative` policy scales the bound by.
#include "kjudge/device.cuh"

template <class T>
__global__ void reduce_sum_ref(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
  using A = kj::acc_t<T>;
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const T* xr = x + r * C;
  A sum = kj::c<A>(0);
  for (long long j = 0; j < C; ++j) sum += static_cast<A>(xr[j]);
  y[r] = static_cast<T>(sum);
}
