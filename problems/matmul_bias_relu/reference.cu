// The reference of problems/matmul_bias_relu: one thread per element of C, the dot product of a
// row of A and a column of B accumulated sequentially over k in kj::acc_t<T>, the column's bias
// added to the finished sum, and the ReLU written `v < 0 ? 0 : v` so that a NaN (for which
// `v < 0` is false) passes through, as torch.relu keeps it (kj::max, like fmax, would drop it).
#include "kjudge/device.cuh"

template <class T>
__global__ void matmul_bias_relu_ref(const T* __restrict__ A, const T* __restrict__ B,
                                     const T* __restrict__ bias, T* __restrict__ C, int M, int N,
                                     int K) {
  using Acc = kj::acc_t<T>;
  const long long col = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long row = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  const T* a = A + row * K;
  Acc acc = kj::c<Acc>(0);
  for (long long k = 0; k < K; ++k)
    acc += static_cast<Acc>(a[k]) * static_cast<Acc>(B[k * N + col]);
  const Acc v = acc + static_cast<Acc>(bias[col]);
  C[row * N + col] = static_cast<T>(v < kj::c<Acc>(0) ? kj::c<Acc>(0) : v);
}
