// The reference of problems/mlp_chain, both of its matmuls: one thread per element of C, the dot
// product summed over k in order in kj::acc_t<T> (f32 for the bf16 reference, double for the
// golden), rounded once to T. The golden's h is therefore exact, the reference's h in bf16.
#include "kjudge/device.cuh"

template <class T>
__global__ void matmul_ref(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                           int M, int N, int K) {
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  kj::acc_t<T> acc = kj::c<kj::acc_t<T>>(0);
  for (long long k = 0; k < K; ++k) acc += kj::to_acc(A[row * K + k]) * kj::to_acc(B[k * N + col]);
  C[row * N + col] = kj::from_acc<T>(acc);
}
