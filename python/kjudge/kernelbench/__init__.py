"""kjudge for KernelBench-format problems and candidates (PyTorch `Model`, `get_inputs()`,
`get_init_inputs()`; a candidate's `ModelNew` with inline CUDA or Triton):

    verdict = kjudge.kernelbench.check("problem.py", "candidate.py", bench=True)
    verdict["correctness"], verdict["reason"], verdict["speedup"]

The golden is the Model in float64, the candidate runs in a confined worker process of its own,
and the verdict carries KernelBench's field names beside kjudge's (docs/kernelbench.md). Nothing
here imports torch until it is used: the worker confines itself before torch starts threads."""
from __future__ import annotations

from kjudge.kernelbench.evaluate import Evaluator, Settings, check
from kjudge.kernelbench.problem import ProblemError

__all__ = ["Evaluator", "Settings", "check", "ProblemError"]
