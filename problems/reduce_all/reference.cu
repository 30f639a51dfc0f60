// The reference of problems/reduce_all: one thread, left to right, in kj::acc_t<T>.
#include "kjudge/device.cuh"

template <class T>
__global__ void reduce_all_ref(const T* x, T* y, int N) {
  using A = kj::acc_t<T>;
  A sum = kj::c<A>(0);
  for (int i = 0; i < N; ++i) sum += static_cast<A>(x[i]);
  y[0] = static_cast<T>(sum);
}
