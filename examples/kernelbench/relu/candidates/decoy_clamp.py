# Cheat: a decoy that dodges the forbidden-op list. It defines a CUDA ReLU kernel and builds
# it, but never launches it: forward returns x.clamp(min=0), the same values through
# aten.clamp, which the default forbidden list (aten.relu, the one op the Model calls) does
# not name. KernelBench accepts it. The adapter records which kernels ran during forward; none
# of the kernels this file defines is among them. Expected: FAIL decoy_kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void kb_relu_never_launched_kernel(const float* __restrict__ x,
                                              float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        y[i] = v < 0.0f ? 0.0f : v;
    }
}

torch::Tensor relu_forward(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65536);
    kb_relu_never_launched_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor relu_forward(torch::Tensor x);"

decoy_ext = load_inline(
    name="kb_relu_decoy_clamp",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp(min=0)  # decoy_ext.relu_forward is never called
