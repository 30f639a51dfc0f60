# The right values in the wrong dtype (float64).
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x.double().sum(dim=1) * self.scale
