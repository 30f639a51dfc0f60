# Cheat: works in place. Its own CUDA kernel writes relu(x) back into x and forward returns x
# itself, saving the output allocation. The values returned are right, but the candidate has
# changed its input. KernelBench does not look at the inputs after the call (and relu is
# idempotent, so even a reference run after it gets the same answer), so it accepts this; the
# adapter compares the inputs with a copy taken before the call. Expected: FAIL input_modified.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void kb_relu_inplace_kernel(float* __restrict__ x, int64_t n) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float v = x[i];
        x[i] = v < 0.0f ? 0.0f : v;
    }
}

torch::Tensor relu_inplace(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
                "relu_inplace: a contiguous float32 CUDA tensor");
    const int64_t n = x.numel();
    if (n == 0) return x;
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, 65536);
    kb_relu_inplace_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return x;
}
"""

cpp_source = "torch::Tensor relu_inplace(torch::Tensor x);"

inplace_ext = load_inline(
    name="kb_relu_input_mutation",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_inplace"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return inplace_ext.relu_inplace(x)
