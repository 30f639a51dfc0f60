# Correct Triton row sum in float32: one program per row walks its 65536 columns in blocks of
# 1024, each lane keeping a float32 partial sum (the tail masked to 0), and the row's sum is
# the tree sum of the lanes: another order of summation than torch's, with an error of the
# same size, which kjudge's relative policy must accept. Expected: PASS.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def kb_row_sum_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * row_stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 2 and x.dtype == torch.float32
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty(rows, device=x.device, dtype=x.dtype)
        kb_row_sum_kernel[(rows,)](x, y, cols, x.stride(0), BLOCK=1024, num_warps=4)
        return y
