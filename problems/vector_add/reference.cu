// The reference of problems/vector_add: one thread per element. In the golden (T = double) the
// sum of two floats is exact, and rounding it to f32 gives the f32 sum, so the reference, the
// golden and any correct candidate agree bit for bit.
#include "kjudge/device.cuh"

template <class T>
__global__ void vector_add_ref(const T* __restrict__ x, const T* __restrict__ y,
                               T* __restrict__ z, int N) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < N) z[i] = x[i] + y[i];
}
