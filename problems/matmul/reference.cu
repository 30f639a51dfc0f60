// The reference of problems/matmul: one thread per element of C, the dot product of a row of A
// and a column of B accumulated sequentially over k in kj::acc_t<T>.
#include "kjudge/device.cuh"

template <class T>
__global__ void matmul_ref(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                           int M, int N, int K) {
  using Acc = kj::acc_t<T>;
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const T* a = A + row * K;
  Acc acc = kj::c<Acc>(0);
  for (long long k = 0; k < K; ++k)
    acc += static_cast<Acc>(a[k]) * static_cast<Acc>(B[k * N + col]);
  C[row * N + col] = static_cast<T>(acc);
}
