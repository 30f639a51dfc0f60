# The reference's own torch code, in float32: torch.sum over dim 1 (aten.sum). The problem's
# Model calls exactly that one compute op, so the adapter forbids it by default and this
# candidate is refused before its values are looked at. (KernelBench accepts it: it is the
# reference.) Expected: FAIL forbidden_op.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)
