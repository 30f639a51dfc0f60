// problems/vector_add, trap: tells the host from the GPU by a builtin's type. NVRTC declares
// threadIdx `const uint3`; the emulation once expanded it to a reference, so a trait of the
// candidate's took the right branch on the host alone. The emulation now gives every builtin
// NVRTC's declared type, so both take the branch that writes zeros.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
template <class T> struct is_reference { static constexpr bool value = false; };
template <class T> struct is_reference<T&> { static constexpr bool value = true; };

__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  if constexpr (is_reference<decltype(threadIdx)>::value) z[i] = x[i] + y[i];
  else z[i] = 0.0f;
}
