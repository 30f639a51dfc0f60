# Cheat (spelled out): hides work on a stream of its own. The row-sum kernel is correct, but
# forward launches it on a torch.cuda.Stream() it creates, then synchronises that stream. A
# timer on the current stream need not see such work (KernelBench's timing records events on
# the current stream); here the sync happens to keep it honest, and KernelBench accepts the
# values. The adapter's static scan of the source finds the stream creation and refuses the
# file before anything runs. Expected: FAIL forbidden_construct.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

constexpr int kThreads = 512;

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, offset);
    return v;
}

__global__ void kb_row_sum_side_kernel(const float* __restrict__ x, float* __restrict__ out,
                                       int64_t cols) {
    __shared__ float partials[32];
    const float* xr = x + blockIdx.x * cols;
    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += xr[c];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    s = warp_sum(s);
    if (lane == 0) partials[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < warps ? partials[lane] : 0.0f;
        s = warp_sum(s);
        if (lane == 0) out[blockIdx.x] = s;
    }
}

// Launches on the stream whose handle (a cudaStream_t as an integer) the caller passes.
torch::Tensor row_sum_on(torch::Tensor x, int64_t stream_handle) {
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto out = torch::empty({rows}, xc.options());  // empty: no fill kernel to race with
    if (rows == 0) return out;
    if (cols == 0) return out.zero_();
    auto stream = reinterpret_cast<cudaStream_t>(stream_handle);
    kb_row_sum_side_kernel<<<rows, kThreads, 0, stream>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor row_sum_on(torch::Tensor x, int64_t stream_handle);"

side_ext = load_inline(
    name="kb_row_sum_side_stream_static",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["row_sum_on"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.side is None:
            self.side = torch.cuda.Stream(device=x.device)
        self.side.wait_stream(torch.cuda.current_stream(x.device))  # x is ready
        out = side_ext.row_sum_on(x, self.side.cuda_stream)
        self.side.synchronize()
        return out
