// Row sums with Kahan's compensation, one thread per row, in kj::acc_t<T>.
#include "kjudge/device.cuh"

template <class T>
__global__ void kahan_sum_ref(const T* __restrict__ x, T* __restrict__ y, int R, int C) {
  using A = kj::acc_t<T>;
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const T* xr = x + r * C;
  A sum = kj::c<A>(0), lost = kj::c<A>(0);
  for (long long j = 0; j < C; ++j) {
    const A v = static_cast<A>(xr[j]) - lost;
    const A t = sum + v;
    lost = (t - sum) - v; // what t could not hold of v
    sum = t;
  }
  y[r] = static_cast<T>(sum);
}
