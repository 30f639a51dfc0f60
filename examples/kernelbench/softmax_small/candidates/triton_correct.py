# Correct Triton softmax over dim 1, in float32: one program per row holds the whole row
# (the block is the next power of two at or above the row length, the tail masked with -inf),
# takes its maximum, exponentiates with libdevice's exp (accurate to a couple of ulp, not the
# fast approximate exp), and divides by the row's sum with a correctly rounded division
# (Triton's `/` on float32 is the approximate div.full). Expected: PASS.
import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def kb_softmax_row_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride,
                          BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.where(mask, libdevice.exp(x), 0.0)
    y = tl.math.div_rn(e, tl.sum(e, axis=0))
    tl.store(y_ptr + row * y_row_stride + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 2 and x.dtype == torch.float32
        x = x.contiguous()
        y = torch.empty_like(x)
        rows, cols = x.shape
        block = triton.next_power_of_2(cols)
        num_warps = 16 if block >= 8192 else (8 if block >= 2048 else 4)
        kb_softmax_row_kernel[(rows,)](x, y, cols, x.stride(0), y.stride(0),
                                       BLOCK=block, num_warps=num_warps)
        return y
