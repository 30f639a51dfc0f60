"""One timing loop for the candidate (in its worker) and the reference (in the judge), so the two
times compare: warm-up calls, then trials each on a fresh copy of the next input set, the L2
cache flushed before each (a 256 MiB write, as KernelBench and triton's do_bench do), timed by
CUDA events on the current stream (wall clock on the CPU)."""
from __future__ import annotations

import time
from typing import Callable, Sequence

FLUSH_BYTES = 256 << 20


def time_calls(call: Callable[[list], object], input_sets: Sequence[list], *, trials: int,
               warmup: int = 3) -> tuple[list[float], list[object]]:
    """Milliseconds of each trial, and the output of the last trial on each input set (trial t
    runs on set t mod len(input_sets), cloned just before it, outside the timed region)."""
    import torch
    device = _device_of(input_sets[0])
    cuda = device.type == "cuda"
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.float32, device=device) if cuda else None
    for w in range(warmup):
        call(_fresh(input_sets[w % len(input_sets)]))
    _synchronize(device)
    times, last = [], [None] * len(input_sets)
    for t in range(trials):
        which = t % len(input_sets)
        inputs = _fresh(input_sets[which])
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
        last[which] = out
    return times, last


def summary(times: Sequence[float]) -> dict[str, float]:
    """KernelBench's figure (the mean) beside the median and the spread."""
    ordered = sorted(times)
    n = len(ordered)
    mean = sum(ordered) / n
    std = (sum((x - mean) ** 2 for x in ordered) / max(n - 1, 1)) ** 0.5
    return {"mean": mean, "median": ordered[n // 2] if n % 2 else
            (ordered[n // 2 - 1] + ordered[n // 2]) / 2, "min": ordered[0], "max": ordered[-1],
            "std": std, "trials": n}


def _fresh(inputs: list) -> list:
    return [x.clone() if hasattr(x, "clone") else x for x in inputs]


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
