// problems/gelu, trap: side streams. The work is meant to escape the timed region: a host
// wrapper (the part of generated code that a harness calling `forward()` would run) starts the
// real kernel on a stream of its own and returns at once, so a harness timing the default
// stream sees almost nothing; the kernel the plan names only marks the launch as done. It
// declares the runtime API by hand, so no include stops it. kjudge runs no candidate host
// code: NVRTC compiles in JIT mode, where a host function is an error, so the wrapper ends in a
// compile_error naming its line (and were it accepted, it would never be called: the marker
// writes no output, and the poisoned output would say so).
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "gelu_done_marker"
grid = [1]
block = [32]
args = ["x", "y", "R * C"]
*/
__global__ void gelu_on_side_stream(const __half* __restrict__ x, __half* __restrict__ y,
                                    long long n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = __half2float(x[i]);
  y[i] = __float2half_rn(0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v))));
}

// What a harness that runs candidate host code would time: nothing but this marker.
__global__ void gelu_done_marker(const __half*, __half*, long long) {}

// The runtime API, declared rather than included.
using side_stream_t = struct side_stream_opaque*;
extern "C" int cudaStreamCreateWithFlags(side_stream_t* stream, unsigned flags);

// The wrapper a harness would call: the real launch on a non-blocking stream, never waited for.
void gelu_forward(const __half* x, __half* y, long long n) {
  static side_stream_t side = nullptr;
  if (side == nullptr) cudaStreamCreateWithFlags(&side, 1u /* cudaStreamNonBlocking */);
  gelu_on_side_stream<<<static_cast<unsigned>((n + 255) / 256), 256, 0,
                        reinterpret_cast<struct CUstream_st*>(side)>>>(x, y, n);
  gelu_done_marker<<<1, 32>>>(x, y, n);
}
