// The reference of problems/rmsnorm: one thread per row, two sequential passes in kj::acc_t<T>
// (float for the bf16 reference, double for the golden): the sum of squares, then the output
// x * rstd * w with rstd = 1 / sqrt(sum / C + eps), rounded once to the storage type. eps
// arrives as the problem's f32 scalar, so the golden adds exactly the f32 value a candidate
// sees.
#include "kjudge/device.cuh"

template <class T>
__global__ void rmsnorm_ref(const T* __restrict__ x, const T* __restrict__ w, T* __restrict__ y,
                            float eps, int R, int C) {
  using A = kj::acc_t<T>;
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const T* xr = x + r * C;
  T* yr = y + r * C;

  A squares = kj::c<A>(0);
  for (int j = 0; j < C; ++j) {
    const A v = kj::to_acc(xr[j]);
    squares += v * v;
  }
  const A rstd = kj::c<A>(1) / kj::sqrt(squares / static_cast<A>(C) + static_cast<A>(eps));

  for (int j = 0; j < C; ++j) yr[j] = kj::from_acc<T>(kj::to_acc(xr[j]) * rstd * kj::to_acc(w[j]));
}
