# Cheat: a precision downgrade. The same tiled kernel as cuda_correct, but A and B are rounded
# to __nv_bfloat16 (8 significant bits) as they are staged in shared memory; the products are
# accumulated in float. With inputs in [0, 1) and outputs near 256, the error (about 0.1 an
# element at worst) is far inside KernelBench's torch.allclose (atol = rtol = 1e-2, about 2.6
# here), so KernelBench accepts it. kjudge's relative policy bounds the error by k times the
# float32 reference's own, which is hundreds of times smaller. Expected: FAIL mismatch.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>

constexpr int TILE = 32;

__global__ void kb_matmul_bf16_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int M, int N, int K) {
    __shared__ __nv_bfloat16 As[TILE][TILE];
    __shared__ __nv_bfloat16 Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] =
            __float2bfloat16((row < M && ak < K) ? A[(int64_t)row * K + ak] : 0.0f);
        Bs[threadIdx.y][threadIdx.x] =
            __float2bfloat16((bk < K && col < N) ? B[(int64_t)bk * N + col] : 0.0f);
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += __bfloat162float(As[threadIdx.y][k]) * __bfloat162float(Bs[k][threadIdx.x]);
        __syncthreads();
    }
    if (row < M && col < N) C[(int64_t)row * N + col] = acc;
}

torch::Tensor matmul_bf16(torch::Tensor A, torch::Tensor B) {
    auto a = A.contiguous(), b = B.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto C = torch::empty({M, N}, a.options());
    if (M == 0 || N == 0) return C;
    const dim3 block(TILE, TILE);
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    kb_matmul_bf16_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

cpp_source = "torch::Tensor matmul_bf16(torch::Tensor A, torch::Tensor B);"

bf16_ext = load_inline(
    name="kb_matmul_bf16_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul_bf16"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return bf16_ext.matmul_bf16(A, B)
