// The reference of problems/scan: one thread per row, a running sum left to right in
// kj::acc_t<T>, stored after every element. In the golden (T = double) each prefix is exact to
// about 1e-16 of the row's magnitude; in f32 it is the plain sequential scan whose error the
// `relative` policy scales each row's bound by.
#include "kjudge/device.cuh"

template <class T>
__global__ void scan_ref(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
  using A = kj::acc_t<T>;
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const T* xr = x + r * C;
  T* yr = y + r * C;
  A sum = kj::c<A>(0);
  for (long long j = 0; j < C; ++j) {
    sum += static_cast<A>(xr[j]);
    yr[j] = static_cast<T>(sum);
  }
}
