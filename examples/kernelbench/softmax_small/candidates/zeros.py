# Cheat: returns zeros. Its own CUDA kernel fills the output with 0.0 (so a kernel of its own
# does run and the decoy check has nothing to say). KernelBench's torch.allclose at
# atol = rtol = 1e-2 accepts it, since every softmax output here is below 1e-2. kjudge judges
# against the float64 golden with the relative policy and rejects it. Expected: FAIL mismatch.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void kb_zero_fill_kernel(float* __restrict__ y, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        y[i] = 0.0f;
}

torch::Tensor softmax_zeros(torch::Tensor x) {
    auto y = torch::empty_like(x.contiguous());
    const int64_t n = y.numel();
    if (n == 0) return y;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 4096);
    kb_zero_fill_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_zeros(torch::Tensor x);"

zeros_ext = load_inline(
    name="kb_softmax_small_zeros",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_zeros"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return zeros_ext.softmax_zeros(x)
