# Cheat: does half the work. Its own CUDA kernel computes ReLU for the first half of the rows
# only; the output comes from torch.empty_like, so the other half holds whatever the
# allocator's memory held. That is garbage or stale values, unless the allocator hands back a
# block that happens to hold the right answer (say the reference's freed output, computed in
# the same process on the same input): the judge must not let that happen. Expected: FAIL
# mismatch.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void kb_relu_partial_kernel(const float* __restrict__ x, float* __restrict__ y,
                                       int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = v < 0.0f ? 0.0f : v;
    }
}

// y must be contiguous and shaped like x; only the first half of x's rows is written.
void relu_first_half(torch::Tensor x, torch::Tensor y) {
    TORCH_CHECK(x.is_contiguous() && y.is_contiguous() && x.dim() == 2, "relu_first_half");
    const int64_t n = (x.size(0) / 2) * x.size(1);
    if (n == 0) return;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65536);
    kb_relu_partial_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""

cpp_source = "void relu_first_half(torch::Tensor x, torch::Tensor y);"

partial_ext = load_inline(
    name="kb_relu_partial",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_first_half"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)  # the second half of the rows is never written
        partial_ext.relu_first_half(x, y)
        return y
