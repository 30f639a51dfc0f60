# Sum over dim 1 of a (256, 65536) float32 tensor, keepdim=False (after KernelBench level 1,
# "47_Sum_reduction_over_a_dimension"). Each output adds 65536 terms, long enough for the
# order of summation to show in the low bits: a correct float32 kernel with another order
# must pass, and kjudge's relative policy measures it against the reference's own error.
# One compute op, so by default the adapter forbids aten.sum to candidates.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


rows = 256
cols = 65536


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
