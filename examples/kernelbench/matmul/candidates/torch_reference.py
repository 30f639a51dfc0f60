# The reference's own torch code, in float32: torch.matmul, which dispatches to aten.mm. The
# problem lists aten.mm (and the other matrix-product ops) in KJUDGE_FORBIDDEN_OPS, so this
# candidate is refused before its values are looked at. (KernelBench accepts it: it is the
# reference.) Expected: FAIL forbidden_op.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)
