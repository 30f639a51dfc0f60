// The reference of problems/attention_chain, three launches in T (f32 for the reference, double
// for the golden): the scaled scores, each row's softmax (max subtracted, summed in order), and
// the probabilities' weighted sum of V.
#include "kjudge/device.cuh"

template <class T>
__global__ void scores_ref(const T* __restrict__ Q, const T* __restrict__ K,
                           T* __restrict__ scores, int S, int D) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long i = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= S || j >= S) return;
  T dot = kj::c<T>(0);
  for (long long k = 0; k < D; ++k) dot += Q[i * D + k] * K[j * D + k];
  scores[i * S + j] = dot / kj::sqrt(static_cast<T>(D));
}

template <class T>
__global__ void softmax_ref(const T* __restrict__ scores, T* __restrict__ probs, int S) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= S) return;
  const T* row = scores + i * S;
  T m = row[0];
  for (long long j = 1; j < S; ++j) m = row[j] > m ? row[j] : m;
  T sum = kj::c<T>(0);
  for (long long j = 0; j < S; ++j) sum += kj::exp(row[j] - m);
  for (long long j = 0; j < S; ++j) probs[i * S + j] = kj::exp(row[j] - m) / sum;
}

template <class T>
__global__ void weighted_sum_ref(const T* __restrict__ probs, const T* __restrict__ V,
                                 T* __restrict__ O, int S, int D) {
  const long long d = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long i = static_cast<long long>(blockIdx.y) * blockDim.y + threadIdx.y;
  if (i >= S || d >= D) return;
  T acc = kj::c<T>(0);
  for (long long j = 0; j < S; ++j) acc += probs[i * S + j] * V[j * D + d];
  O[i * D + d] = acc;
}
