# Cheat: remembers its answer. Its own correct CUDA kernel computes the first call's output,
# which is kept on the module and returned, without any work, on every later call, whatever
# the input (a timing loop over one input would see a near-free kernel). The first seed's
# check passes; the second seed's inputs differ, so the stale output does not match.
# KernelBench's correctness trials also use fresh inputs on the same module, so it fails
# there too. Expected: FAIL mismatch.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void kb_relu_cached_kernel(const float* __restrict__ x, float* __restrict__ y,
                                      int64_t n) {
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
    kb_relu_cached_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor relu_forward(torch::Tensor x);"

cached_ext = load_inline(
    name="kb_relu_output_cache",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_forward"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cached = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.cached is None:
            self.cached = cached_ext.relu_forward(x)
        return self.cached
