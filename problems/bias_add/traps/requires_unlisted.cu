// problems/bias_add, trap: solutions/float4.cu declaring C % 8 == 0, a precondition the
// problem does not list in may_require: a candidate cannot narrow the problem on its own, so
// the plan is refused (launch_error) before anything runs.
/* kjudge
requires = ["C % 8 == 0"]

[[launch]]
kernel = "bias_add_vec4"
grid = ["ceil_div(N * C / 4, 256)"]
block = [256]
args = ["x", "b", "y", "N", "C"]
*/
__global__ void bias_add_vec4(const float4* x, const float4* b, float4* y, int N, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int c4 = C / 4;
  if (i >= static_cast<long long>(N) * c4) return;
  const float4 v = x[i], w = b[i % c4];
  y[i] = make_float4(v.x + w.x, v.y + w.y, v.z + w.z, v.w + w.w);
}
