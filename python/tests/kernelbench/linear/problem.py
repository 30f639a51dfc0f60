# A layer with weights (nn.Linear): the recorded-artifacts test replays weights, inputs and
# predictions into it. Its one compute op (aten.addmm) is forbidden by default.
import torch


class Model(torch.nn.Module):
    def __init__(self, features_in, features_out):
        super().__init__()
        self.linear = torch.nn.Linear(features_in, features_out)

    def forward(self, x):
        return self.linear(x)


def get_inputs():
    return [torch.randn(32, 256)]


def get_init_inputs():
    return [256, 128]
