# Does not import: FAIL(compile_error).
import torch


class ModelNew(torch.nn.Module)
    pass
