// A row copy, clean: the only fault of this problem is in its constraints.
template <class T>
__global__ void copy_ref(const T* x, T* y, int R, int C) {
  if (threadIdx.x != 0) return;
  for (int j = 0; j < C; ++j) y[blockIdx.x * C + j] = x[blockIdx.x * C + j];
}
