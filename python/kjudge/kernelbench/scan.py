"""What the KernelBench adapter reads from a candidate's source before anything of it runs: the
constructs it refuses (a way out of the worker's process, or work hidden from the timed stream)
and the names of the kernels the candidate defines, which the launch accounting looks for."""
from __future__ import annotations

import re
from dataclasses import dataclass

# (pattern, why it is refused). Word-bounded, on the source with comments kept: a comment that
# names ctypes is refused too, a price paid for not parsing CUDA C++ inside Python strings.
_FORBIDDEN = [
    (r"\bctypes\b", "ctypes reaches native code and memory outside torch"),
    (r"\bcffi\b", "cffi reaches native code and memory outside torch"),
    # Any spelling: `from os import fork` or `posix_spawn` reach the same call as os.fork.
    (r"\bsubprocess\b|\bos\.(system|popen|kill\w*)\b|\bpty\b|\b(fork\w*|vfork|posix_spawnp?|"
     r"spawn[lv]p?e?|exec[lv]p?e?|setsid|killpg)\b",
     "starts or signals processes"),
    (r"\bsocket\b|\burllib\b|\bhttp\.client\b|\brequests\b", "opens network connections"),
    (r"\bthreading\b|\bmultiprocessing\b|\bconcurrent\.futures\b|\bstd::thread\b|\bpthread_create\b",
     "runs work on another thread, outside the timed stream"),
    (r"\btorch\.cuda\.(Stream|ExternalStream|set_stream|stream)\b|\bcudaStreamCreate\w*\b|"
     r"\bcuStreamCreate\w*\b|\bgetStreamFromPool\b|\bcudaStreamPerThread\b",
     "makes or uses a stream of its own: the work would escape the timed stream"),
    (r"\b(sys\.modules|gc\.get_objects|gc\.get_referrers|inspect\.stack|sys\._getframe)\b|"
     r"\b(import|from)\s+(kjudge|__main__)\b",
     "reaches the judge's own objects"),
    (r"\b(TorchDispatchMode|TorchFunctionMode|_python_dispatch|torch\.profiler|"
     r"torch\._C\._(autograd|profiler)|_DisableTorchDispatch|_EnablePythonDispatcher|"
     r"_DisablePythonDispatcher|_unset_dispatch_mode|_pop_mode|_set_dispatch_mode)\b",
     "tampers with the dispatch or profiler hooks the judge watches through"),
    (r"\b(__builtins__|builtins|importlib)\b|(?<![.\w])(__import__|exec|eval|compile)\s*\(",
     "runs code the scan cannot read"),
]

_CUDA_KERNEL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+"
                          r"(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(")
_TRITON_KERNEL = re.compile(r"@triton\.(?:jit|autotune)[\s\S]*?\bdef\s+(\w+)\s*\(")


@dataclass(frozen=True)
class Finding:
    line: int
    text: str
    why: str

    def __str__(self) -> str:
        return f"line {self.line}: `{self.text}` {self.why}"


def forbidden_constructs(source: str) -> list[Finding]:
    """Every refused construct, by line, in source order."""
    found = []
    for number, line in enumerate(source.splitlines(), 1):
        for pattern, why in _FORBIDDEN:
            match = re.search(pattern, line)
            if match:
                found.append(Finding(number, match.group(0).strip(), why))
    return found


def kernel_names(source: str) -> list[str]:
    """The kernels the candidate defines: CUDA `__global__` functions and `@triton.jit` ones."""
    names = _CUDA_KERNEL.findall(source) + _TRITON_KERNEL.findall(source)
    return sorted(set(names))


def uses_triton(source: str) -> bool:
    """Whether the candidate defines a Triton kernel (compiled at its first launch)."""
    return _TRITON_KERNEL.search(source) is not None
