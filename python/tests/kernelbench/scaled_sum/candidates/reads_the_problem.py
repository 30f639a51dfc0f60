# Reaching the judge's files: the problem file (its Model is the reference) is outside what the
# worker may read, so the open fails and the candidate with it.
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        with open(os.path.join(HERE, "..", "problem.py")) as f:
            self.text = f.read()

    def forward(self, x):
        return x.sum(dim=1) * 0.5
