# Correct: the same parameters (so recorded weights load into it), the product without addmm.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, features_in, features_out):
        super().__init__()
        self.linear = torch.nn.Linear(features_in, features_out)

    def forward(self, x):
        return torch.mm(x, self.linear.weight.t()) + self.linear.bias
