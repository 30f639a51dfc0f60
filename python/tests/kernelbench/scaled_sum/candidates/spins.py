# A hang: the worker is killed at the deadline, FAIL(timeout).
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()

    def forward(self, x):
        while True:
            pass
