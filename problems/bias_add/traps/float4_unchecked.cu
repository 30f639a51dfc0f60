// problems/bias_add, trap: solutions/float4.cu's idea without declaring C % 4 == 0 (a dropped
// precondition), over the tensor as flat float4s: where C % 4 != 0 a float4 straddles two rows
// and takes the wrong bias, and the last N*C % 4 elements are never written.
/* kjudge
[[launch]]
kernel = "bias_add_flat4"
grid = ["ceil_div(N * C / 4, 256)"]
block = [256]
args = ["x", "b", "y", "N", "C"]
*/
__global__ void bias_add_flat4(const float* x, const float* b, float* y, int N, int C) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= static_cast<long long>(N) * C / 4) return;
  const float4 v = reinterpret_cast<const float4*>(x)[i];
  const int c = static_cast<int>((4 * i) % C);
  const float4 out = make_float4(v.x + b[c], v.y + b[(c + 1) % C], v.z + b[(c + 2) % C],
                                 v.w + b[(c + 3) % C]);
  reinterpret_cast<float4*>(y)[i] = out;
}
