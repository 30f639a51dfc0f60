# ReLU of a (4096, 4096) float32 tensor (KernelBench level 1, "19_ReLU", at another shape).
# One compute op, so by default the adapter forbids aten.relu to candidates.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


rows = 4096
cols = 4096


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
