// The reference of problems/layernorm_backward: one thread per row for dinp (two sums over the
// row, then the formula), one thread per column for dweight and dbias, each summing over the
// rows top to bottom in kj::acc_t<T> and adding the sum to what the tensor held.
#include "kjudge/device.cuh"

template <class T>
__global__ void ln_bwd_dinp_ref(const T* dout, const T* inp, const T* mean, const T* rstd,
                                const T* weight, T* dinp, int N, int C) {
  using A = kj::acc_t<T>;
  const long long r = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= N) return;
  const T* g = dout + r * C;
  const T* x = inp + r * C;
  const A m = static_cast<A>(mean[r]), s = static_cast<A>(rstd[r]);
  A dnorm_mean = kj::c<A>(0), dnorm_norm_mean = kj::c<A>(0);
  for (int j = 0; j < C; ++j) {
    const A norm = (static_cast<A>(x[j]) - m) * s;
    const A dnorm = static_cast<A>(weight[j]) * static_cast<A>(g[j]);
    dnorm_mean += dnorm;
    dnorm_norm_mean += dnorm * norm;
  }
  dnorm_mean /= static_cast<A>(C);
  dnorm_norm_mean /= static_cast<A>(C);
  for (int j = 0; j < C; ++j) {
    const A norm = (static_cast<A>(x[j]) - m) * s;
    const A dnorm = static_cast<A>(weight[j]) * static_cast<A>(g[j]);
    dinp[r * C + j] = static_cast<T>(s * (dnorm - dnorm_mean - norm * dnorm_norm_mean));
  }
}

template <class T>
__global__ void ln_bwd_params_ref(const T* dout, const T* inp, const T* mean, const T* rstd,
                                  T* dweight, T* dbias, int N, int C) {
  using A = kj::acc_t<T>;
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= C) return;
  A dw = kj::c<A>(0), db = kj::c<A>(0);
  for (long long r = 0; r < N; ++r) {
    const A g = static_cast<A>(dout[r * C + j]);
    const A norm = (static_cast<A>(inp[r * C + j]) - static_cast<A>(mean[r])) * static_cast<A>(rstd[r]);
    dw += norm * g;
    db += g;
  }
  dweight[j] = static_cast<T>(static_cast<A>(dweight[j]) + dw);
  dbias[j] = static_cast<T>(static_cast<A>(dbias[j]) + db);
}
