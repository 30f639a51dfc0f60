# Correct: the sum in another order (64 partial sums of 64), float32 throughout.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x.view(64, 64, 64).sum(dim=2).sum(dim=1) * self.scale
