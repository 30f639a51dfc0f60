# Correct inline-CUDA softmax over dim 1, in float32. One block per row: the block finds the
# row's maximum, then the sum of exp(x - max), each by a warp-shuffle reduction whose per-warp
# partials meet in shared memory, then writes exp(x - max) / sum. Threads stride over the row,
# so any row length works (tails included). Launched on torch's current stream.
# Expected: PASS.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <math.h>

constexpr int kThreads = 512;  // a multiple of 32

__device__ float warp_max(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
    return v;
}

__device__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffff, v, offset);
    return v;
}

// The whole block's maximum (or sum) of v, handed to every thread.
template <bool IsMax>
__device__ float block_reduce(float v, float* partials) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
    v = IsMax ? warp_max(v) : warp_sum(v);
    if (lane == 0) partials[warp] = v;
    __syncthreads();
    if (warp == 0) {
        float w = lane < warps ? partials[lane] : (IsMax ? -INFINITY : 0.0f);
        w = IsMax ? warp_max(w) : warp_sum(w);
        if (lane == 0) partials[0] = w;
    }
    __syncthreads();
    const float result = partials[0];
    __syncthreads();  // partials is reused by the next reduction
    return result;
}

__global__ void kb_softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y,
                                       int64_t cols) {
    __shared__ float partials[32];
    const float* xr = x + blockIdx.x * cols;
    float* yr = y + blockIdx.x * cols;

    float m = -INFINITY;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, xr[c]);
    m = block_reduce<true>(m, partials);

    float s = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) s += expf(xr[c] - m);
    s = block_reduce<false>(s, partials);

    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = expf(xr[c] - m) / s;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32 && x.dim() == 2,
                "softmax_rows: a 2-D float32 CUDA tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    if (rows == 0 || cols == 0) return y;
    kb_softmax_rows_kernel<<<rows, kThreads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_rows(torch::Tensor x);"

softmax_ext = load_inline(
    name="kb_softmax_small_cuda_correct",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_rows"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return softmax_ext.softmax_rows(x)
