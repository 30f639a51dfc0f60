# Correct inline-CUDA matmul in float32: the classic tiled kernel. Each 32 x 32 block of
# threads computes a 32 x 32 tile of C, stepping along K through 32 x 32 tiles of A and B
# staged in shared memory; loads past an edge read 0 and stores past an edge are skipped, so
# any M, N, K works. Accumulates in float (a different summation order from cuBLAS, which
# kjudge's relative policy allows). Launched on torch's current stream. Expected: PASS.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

constexpr int TILE = 32;

__global__ void kb_matmul_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        const int ak = k0 + threadIdx.x, bk = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[(int64_t)row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[(int64_t)bk * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(int64_t)row * N + col] = acc;
}

torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda() && A.scalar_type() == torch::kFloat32 &&
                B.scalar_type() == torch::kFloat32 && A.dim() == 2 && B.dim() == 2 &&
                A.size(1) == B.size(0), "matmul_tiled: float32 CUDA matrices, (M, K) @ (K, N)");
    auto a = A.contiguous(), b = B.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto C = torch::empty({M, N}, a.options());
    if (M == 0 || N == 0) return C;
    const dim3 block(TILE, TILE);
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    kb_matmul_tiled_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, N, K);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

cpp_source = "torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B);"

matmul_ext = load_inline(
    name="kb_matmul_cuda_correct",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul_tiled"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matmul_ext.matmul_tiled(A, B)
