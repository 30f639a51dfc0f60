// One kernel, launched three wrong ways by problem.toml.
template <class T>
__global__ void scale_ref(const T* x, T* y, int R, int C) {
  if (threadIdx.x != 0) return;
  for (int j = 0; j < C; ++j) y[blockIdx.x * C + j] = x[blockIdx.x * C + j] + x[blockIdx.x * C + j];
}
