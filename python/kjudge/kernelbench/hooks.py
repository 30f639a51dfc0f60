"""What the KernelBench adapter watches while a forward runs: the torch ops it calls (a
TorchDispatchMode, which sees every aten op however it was reached: torch.relu, F.relu, x.relu(),
an nn.Module) and the device kernels it launches (the profiler, with each kernel's stream). Used
in the candidate's worker, and in the judge on the problem's Model to learn the ops it is about.
Both are Python-level views of a process the candidate runs in: `trust = "python"`."""
from __future__ import annotations

from collections import Counter

# Ops that move, view or make memory: never "the op a problem is about".
_PLUMBING = {
    "aten.empty", "aten.empty_like", "aten.empty_strided", "aten.zeros", "aten.zeros_like",
    "aten.ones", "aten.ones_like", "aten.full", "aten.full_like", "aten.fill_", "aten.zero_",
    "aten.copy_", "aten.clone", "aten._to_copy", "aten.to", "aten.view", "aten._unsafe_view",
    "aten.reshape", "aten.expand", "aten.permute", "aten.transpose", "aten.t", "aten.contiguous",
    "aten.detach", "aten.alias", "aten.slice", "aten.select", "aten.unsqueeze", "aten.squeeze",
    "aten.as_strided", "aten.split", "aten.split_with_sizes", "aten.chunk", "aten.unbind",
    "aten.lift_fresh", "aten.new_empty", "aten.new_zeros", "aten.new_ones", "aten.new_full",
    "aten.resize_", "aten.set_", "aten.item", "aten._local_scalar_dense", "aten.is_nonzero",
    "aten.stride", "aten.size", "aten.sym_size", "aten.sym_stride", "aten.sym_numel",
    "aten.flatten", "aten.unflatten", "aten.narrow", "aten.cat", "aten.stack", "aten.record_stream",
}


def _dispatch_mode_base():
    from torch.utils._python_dispatch import TorchDispatchMode
    return TorchDispatchMode


class OpRecorder:
    """Counts the aten ops (by overload packet, "aten.relu") called inside `with`."""

    def __init__(self):
        self.counts: dict[str, int] = {}

    def __enter__(self):
        counts = Counter()

        class _Mode(_dispatch_mode_base()):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                counts[str(func.overloadpacket)] += 1
                return func(*args, **(kwargs or {}))

        self._counts = counts
        self._mode = _Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        self.counts = dict(self._counts)
        return False


def compute_ops(counts: dict[str, int]) -> list[str]:
    """The ops of `counts` that compute (not plumbing), sorted."""
    return sorted(op for op in counts if op not in _PLUMBING)


def profile_call(call, device, kernel_record=None) -> dict:
    """Runs `call` once under torch's profiler, after a marker kernel (a fill on the current
    stream) on CUDA. Returns {"kernels": every device kernel after the marker as {"name",
    "stream", "us"}, "current_stream": the marker's stream (None on the CPU, with no kernels),
    "ops": the aten ops the profiler recorded by overload packet ("aten._softmax": count),
    "kernel_record": which record saw the kernels, "dropped": kernels it lost}.

    The kernels come from `kernel_record` (kjudge._kernel_record, CUPTI read in native code,
    which a candidate's Python cannot rewrite) where the worker opened it, else from the
    profiler's CUDA record (read through Python objects a candidate can replace). The profiler's
    op record is the dispatcher's own (RecordFunction), apart from the dispatch mode OpRecorder
    pushes: a candidate that turns Python dispatch off for a call hides its ops from one of
    them, not both."""
    import torch
    cuda = device.type == "cuda"
    native = cuda and kernel_record is not None
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        marker = torch.empty(1, device=device)
        torch.cuda.synchronize(device)
        if not native:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
    recorded, dropped = [], 0
    with torch.profiler.profile(activities=activities) as prof:
        if native:
            kernel_record.start()
        try:
            if cuda:
                marker.fill_(7.0)
            call()
            if cuda:
                torch.cuda.synchronize(device)
        finally:
            if native:
                recorded, dropped = kernel_record.stop()
    kernels, ops = [], Counter()
    for e in prof.profiler.kineto_results.events():
        name = e.name()
        if e.device_type() != torch.autograd.DeviceType.CUDA:
            if name.startswith("aten::"):
                ops["aten." + name[len("aten::"):]] += 1
            continue
        if native or name.startswith(("Memcpy", "Memset")):
            continue
        kernels.append({"name": name, "stream": int(e.device_resource_id()),
                        "us": e.duration_ns() / 1e3, "start": e.start_ns()})
    if native:
        kernels = _native_kernels(recorded, device)
    kernels.sort(key=lambda k: k["start"])
    profile = {"kernels": [], "current_stream": None, "ops": dict(ops),
               "kernel_record": "cupti" if native else "torch.profiler" if cuda else None,
               "dropped": dropped}
    if not cuda or not kernels:
        return profile
    ops["aten.fill_"] -= 1  # the marker's own fill
    profile.update(kernels=[{k: v for k, v in x.items() if k != "start"} for x in kernels[1:]],
                   current_stream=kernels[0]["stream"],  # the marker: the window's first kernel
                   ops={op: n for op, n in ops.items() if n > 0})
    return profile


def _native_kernels(recorded: list, device) -> list[dict]:
    """CUPTI's records as the profiler's: a kernel on another device than the judged one is on a
    stream of its own (the device in the id's upper bits), never the current stream."""
    index = device.index or 0
    return [{"name": name, "stream": stream if on == index else (on + 1) << 32 | stream,
             "us": (end - start) / 1e3, "start": start}
            for name, stream, on, start, end in recorded]
