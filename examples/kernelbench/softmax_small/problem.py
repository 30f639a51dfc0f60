# Softmax over dim 1 of a (16, 16384) float32 input (KernelBench level 1, "23_Softmax").
# A hollow problem under KernelBench's own rule: with 16384 entries a row, every output is
# below about 5e-3 (the mean is 1/16384, about 6e-5), so an all-zeros answer is within
# torch.allclose's atol = 1e-2 everywhere. kjudge judges it against a float64 golden instead.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 16
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
