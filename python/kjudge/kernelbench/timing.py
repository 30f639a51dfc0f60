"""One timing loop for the candidate (in its worker) and the reference (in the judge), so the two
times compare: warm-up calls, then trials each on an input set of its own that no call before
it saw (a candidate cannot answer a trial from a cache of earlier ones), the L2 cache flushed
before each (a 256 MiB write, as KernelBench and triton's do_bench do), timed by CUDA events on
the current stream (wall clock on the CPU)."""
from __future__ import annotations

import math
import time
from typing import Callable, Sequence

FLUSH_BYTES = 256 << 20


def time_calls(call: Callable[[list], object], input_sets: Sequence[list], *, warmup: int,
               keep: Sequence[int] = ()) -> tuple[list[float], dict[int, object]]:
    """Milliseconds of each trial and the outputs of the trials in `keep`. The first `warmup`
    sets are the warm-up calls' and each later set is one trial's: len(input_sets) - warmup
    trials, every call on inputs no call before it saw."""
    import torch
    device = _device_of(input_sets[0])
    cuda = device.type == "cuda"
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.float32, device=device) if cuda else None
    for inputs in input_sets[:warmup]:
        call(list(inputs))
    _synchronize(device)
    times, kept = [], {}
    for t, inputs in enumerate(input_sets[warmup:]):
        inputs = list(inputs)
        if cuda:
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            out = call(inputs)
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            began = time.perf_counter()
            out = call(inputs)
            times.append((time.perf_counter() - began) * 1e3)
        if t in keep:
            kept[t] = out
    return times, kept


def valid_times(times: object, trials: int) -> bool:
    """Whether a worker's answer holds `trials` finite positive milliseconds: anything else was
    not measured by the loop above."""
    return isinstance(times, list) and len(times) == trials and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0
        for x in times)


def summary(times: Sequence[float]) -> dict[str, float]:
    """KernelBench's figure (the mean) beside the median and the spread."""
    ordered = sorted(times)
    n = len(ordered)
    mean = sum(ordered) / n
    std = (sum((x - mean) ** 2 for x in ordered) / max(n - 1, 1)) ** 0.5
    return {"mean": mean, "median": ordered[n // 2] if n % 2 else
            (ordered[n // 2 - 1] + ordered[n // 2]) / 2, "min": ordered[0], "max": ordered[-1],
            "std": std, "trials": n}


def _device_of(inputs: list):
    import torch
    for x in inputs:
        if isinstance(x, torch.Tensor):
            return x.device
    return torch.device("cpu")


def _synchronize(device) -> None:
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)
