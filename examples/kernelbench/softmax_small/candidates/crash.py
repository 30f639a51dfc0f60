# Faulty: a softmax kernel whose thread 0 of every block also stores far out of bounds, at
# element 1 << 36 past the output (256 GiB beyond it, more than the card's memory, so no
# allocation of the process is there). The store faults with an illegal memory access, which
# torch reports at the next synchronisation. The judge must survive it and report it.
# Expected: FAIL runtime_error.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <math.h>

__global__ void kb_softmax_crash_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int64_t cols) {
    // Deliberately one thread a row computes the whole row (slow but simple) ...
    if (threadIdx.x != 0) return;
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;
    float m = -INFINITY;
    for (int64_t c = 0; c < cols; ++c) m = fmaxf(m, xr[c]);
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) s += expf(xr[c] - m);
    for (int64_t c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) / s;
    // ... and then writes far past the end of the output.
    yr[(int64_t)1 << 36] = s;
}

torch::Tensor softmax_crash(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    kb_softmax_crash_kernel<<<rows, 32, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_crash(torch::Tensor x);"

crash_ext = load_inline(
    name="kb_softmax_small_crash",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_crash"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return crash_ext.softmax_crash(x)
