# Cheat (often an innocent one): a precision downgrade. The same Triton matmul as
# triton_correct, but tl.dot is left at its default precision, which for float32 inputs on
# an H100/H200 is TF32: each input is rounded to 10 explicit mantissa bits on the tensor cores.
# With outputs near 256 the error is far inside KernelBench's torch.allclose (atol = rtol =
# 1e-2), so KernelBench accepts it; kjudge's relative policy (k times the float32 reference's
# own error) rejects it. Expected: FAIL mismatch.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kb_matmul_tf32_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + rm[:, None] * stride_am + kk[None, :] * stride_ak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * stride_bk + rn[None, :] * stride_bn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # default input precision: TF32 for float32 inputs
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc,
             mask=(rm[:, None] < M) & (rn[None, :] < N))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), device=A.device, dtype=torch.float32)
        BM, BN, BK = 128, 128, 32
        grid = (triton.cdiv(M, BM), triton.cdiv(N, BN))
        kb_matmul_tf32_kernel[grid](A, B, C, M, N, K,
                                    A.stride(0), A.stride(1), B.stride(0), B.stride(1),
                                    C.stride(0), C.stride(1),
                                    BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, num_warps=8)
        return C
