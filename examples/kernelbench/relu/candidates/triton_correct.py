# Correct Triton ReLU in float32: a masked elementwise kernel over the flattened tensor
# (the mask handles the tail), writing a fresh output. tl.where(x < 0, 0, x) keeps NaN as NaN,
# as torch.relu does. Expected: PASS.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kb_relu_triton_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x < 0.0, 0.0, x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        kb_relu_triton_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
        return y
