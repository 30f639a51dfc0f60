// The reference of problems/rms_chain, three launches in T (f32 for the reference, double for the
// golden): each row's mean square summed in order, its reciprocal square root, the scale.
#include "kjudge/device.cuh"

template <class T>
__global__ void mean_square_ref(const T* __restrict__ x, T* __restrict__ ms, int R, int C) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  T sum = kj::c<T>(0);
  for (long long j = 0; j < C; ++j) sum += x[r * C + j] * x[r * C + j];
  ms[r] = sum / static_cast<T>(C);
}

template <class T>
__global__ void reciprocal_ref(const T* __restrict__ ms, T* __restrict__ rstd, float eps, int R) {
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= R) return;
  rstd[r] = kj::c<T>(1) / kj::sqrt(ms[r] + static_cast<T>(eps));
}

template <class T>
__global__ void scale_ref(const T* __restrict__ x, const T* __restrict__ rstd,
                          const T* __restrict__ w, T* __restrict__ y, int R, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(R) * C) return;
  y[i] = x[i] * rstd[i / C] * w[i % C];
}
