// Row sums written the way a reference must not be: 0.5f and expf pin the golden to f32, and
// the warp shuffle and atomicAdd reduce in an order the relative policy should not measure by.
template <class T>
__global__ void row_sum_ref(const T* x, T* y, int R, int C) {
  T acc = 0.5f;
  for (int j = threadIdx.x; j < C; j += 32) acc += expf(x[blockIdx.x * C + j]);
  acc += __shfl_down_sync(0xffffffffu, acc, 16);
  if (threadIdx.x == 0) atomicAdd(&y[blockIdx.x], acc);
}
