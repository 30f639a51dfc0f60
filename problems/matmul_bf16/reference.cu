// The reference of problems/matmul_bf16: one thread per element of C, the dot product of a row
// of A and a column of B accumulated sequentially over k in kj::acc_t<T>. T is bf16 for the
// reference (so the sum and C are f32: every product of two bf16 values is exact in f32, and the
// only rounding is the running sum's) and double for the golden (C then f64 as well).
//
// The output's type is a template parameter of its own, given as kj::acc_t<T> by the launch
// plan, rather than `kj::acc_t<T>*` in the signature: the lowered name of a template keeps a
// dependent type as written (storage_traits<T>::acc), which kjudge cannot match to the f32
// tensor, while a parameter of its own demangles to the type it names (float, double).
#include "kjudge/device.cuh"

template <class T, class Acc>
__global__ void matmul_bf16_ref(const T* __restrict__ A, const T* __restrict__ B,
                                Acc* __restrict__ C, int M, int N, int K) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const T* a = A + row * K;
  Acc acc = kj::c<Acc>(0);
  for (long long k = 0; k < K; ++k) acc += kj::to_acc(a[k]) * kj::to_acc(B[k * N + col]);
  C[row * N + col] = acc;
}
