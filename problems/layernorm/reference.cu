// The reference of problems/layernorm: one thread per row, three sequential passes in
// kj::acc_t<T> (the mean; the sum of squared deviations from it, the two-pass variance; the
// output). eps arrives as the problem's f32 scalar, so the golden (T = double) adds exactly the
// f32 value a candidate sees.
#include "kjudge/device.cuh"

template <class T>
__global__ void layernorm_ref(const T* __restrict__ x, const T* __restrict__ gamma,
                              const T* __restrict__ beta, T* __restrict__ y, float eps, int R,
                              int C) {
  using A = kj::acc_t<T>;
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  const T* xr = x + r * C;
  T* yr = y + r * C;

  A sum = kj::c<A>(0);
  for (int j = 0; j < C; ++j) sum += static_cast<A>(xr[j]);
  const A mean = sum / static_cast<A>(C);

  A squares = kj::c<A>(0);
  for (int j = 0; j < C; ++j) {
    const A d = static_cast<A>(xr[j]) - mean;
    squares += d * d;
  }
  const A var = squares / static_cast<A>(C);
  const A rstd = kj::c<A>(1) / kj::sqrt(var + static_cast<A>(eps));

  for (int j = 0; j < C; ++j)
    yr[j] = static_cast<T>((static_cast<A>(xr[j]) - mean) * rstd * static_cast<A>(gamma[j]) +
                           static_cast<A>(beta[j]));
}
