/* kjudge
[[launch]]
kernel = "vector_add"
grid = [1]
block = [1]
args = ["x", "y", "z", "N"]
*/
// Correct, and as slow as a kernel can be: one thread adds every element. On the GPU each run
// of public0 takes about 0.5 s, so the check stops at its time budget rather than spend a
// minute of the machine.
__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  for (int i = 0; i < N; ++i) z[i] = x[i] + y[i];
}
