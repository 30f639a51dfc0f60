# C = A @ B for square 1024 x 1024 float32 matrices (KernelBench level 1, "1_Square_matrix_
# multiplication_", at a smaller size). The inputs are torch.rand, in [0, 1), so every output
# is near 256: torch.allclose's rtol = 1e-2 then allows about 2.6 an element, which a bf16 or
# TF32 product (off by about 1e-2 to 1e-1) meets easily. kjudge's relative policy does not.
#
# Forbidden: the matrix-product ops, so that a candidate cannot hand the work to cuBLAS
# through a neighbour of torch.matmul either.
import torch
import torch.nn as nn

KJUDGE_FORBIDDEN_OPS = [
    "aten.mm", "aten.matmul", "aten.bmm", "aten.addmm", "aten.addbmm", "aten.baddbmm",
    "aten.mv", "aten.dot", "aten.linear", "aten.einsum", "aten.tensordot",
]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 1024


def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]


def get_init_inputs():
    return []
