# A two-op problem (a row sum, then a scale): no torch op is forbidden by default.
import torch


class Model(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.sum(x, dim=1) * self.scale


def get_inputs():
    return [torch.randn(64, 4096)]


def get_init_inputs():
    return [0.5]
