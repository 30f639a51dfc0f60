// The reference of problems/matmul_bf16: one thread per element of C, the dot product of a row
// of A and a column of B accumulated sequentially over k in kj::acc_t<T>. T is bf16 for the
// reference (so the sum and C are f32: every product of two bf16 values is exact in f32, and the
// only rounding is the running sum's) and double for the golden (C then f64 as well).
#include "kjudge/device.cuh"

template <class T>
__global__ void matmul_bf16_ref(const T* __restrict__ A, const T* __restrict__ B,
                                kj::acc_t<T>* __restrict__ C, int M, int N, int K) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const T* a = A + row * K;
  kj::acc_t<T> acc = kj::c<kj::acc_t<T>>(0);
  for (long long k = 0; k < K; ++k) acc += kj::to_acc(a[k]) * kj::to_acc(B[k * N + col]);
  C[row * N + col] = acc;
}
