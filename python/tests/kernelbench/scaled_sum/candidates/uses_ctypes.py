# Refused before it runs: ctypes reaches memory outside torch.
import ctypes

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x.sum(dim=1) * self.scale
