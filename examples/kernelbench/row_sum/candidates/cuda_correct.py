# Correct inline-CUDA row sum (dim 1, keepdim=False) in float32. One block per row: each
# thread adds a strided slice of the row (coalesced loads, any row length, tails included),
# then the block combines the partial sums with warp shuffles, the per-warp results meeting
# in shared memory. A different summation order from torch's, which kjudge's relative policy
# allows. Launched on torch's current stream. Expected: PASS.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

constexpr int kThreads = 512;  // a multiple of 32

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, offset);
    return v;
}

__global__ void kb_row_sum_kernel(const float* __restrict__ x, float* __restrict__ out,
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

torch::Tensor row_sum(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2,
                "row_sum: a 2-D float32 CUDA tensor");
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto out = torch::empty({rows}, xc.options());
    if (rows == 0) return out;
    if (cols == 0) return out.zero_();
    kb_row_sum_kernel<<<rows, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), out.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor row_sum(torch::Tensor x);"

row_sum_ext = load_inline(
    name="kb_row_sum_cuda_correct",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["row_sum"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return row_sum_ext.row_sum(x)
