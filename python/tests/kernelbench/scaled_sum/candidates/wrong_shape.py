# keepdim=True: (64, 1), not (64,).
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x.sum(dim=1, keepdim=True) * self.scale
