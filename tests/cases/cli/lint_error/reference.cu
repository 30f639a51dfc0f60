// A reference that caps the golden at f32: the lint of `kjudge validate` must flag both lines.
template <class T>
__global__ void exp_ref(const T* x, T* y, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = expf(x[i]) * 1.0f;
}
