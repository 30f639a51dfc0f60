// The reference of problems/gelu: one thread per element of the flattened matrix, the tanh form
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) evaluated left to right in kj::acc_t<T>
// (float for the f16 reference, double for the golden) and rounded once on the store. The
// constants are double literals through kj::c so that the golden keeps them to 53 bits.
#include "kjudge/device.cuh"

template <class T>
__global__ void gelu_ref(const T* __restrict__ x, T* __restrict__ y, long long n) {
  using A = kj::acc_t<T>;
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const A v = kj::to_acc(x[i]);
  const A inner = kj::c<A>(0.7978845608028654) * (v + kj::c<A>(0.044715) * v * v * v);
  y[i] = kj::from_acc<T>(kj::c<A>(0.5) * v * (kj::c<A>(1) + kj::tanh(inner)));
}
