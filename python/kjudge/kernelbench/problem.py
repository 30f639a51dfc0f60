"""A KernelBench-format problem in the judge's process: its module (`Model`, `get_inputs()`,
`get_init_inputs()`), its cases (`get_inputs()` under several seeds, and kjudge's scalings where
they keep the problem meaningful), each with its golden (Model in float64) and reference (Model
in the problem's dtype), both with TF32 and reduced-precision reductions off, and the torch ops
the problem is about (which a candidate may not call)."""
from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib.util
import os
from dataclasses import dataclass, field
from typing import Any, Optional

from kjudge.kernelbench.hooks import OpRecorder, compute_ops


class ProblemError(Exception):
    """The problem file cannot be judged (kjudge's spec_error): the message names the file."""


@dataclass
class Case:
    id: str
    arguments: list            # tensors (CPU, the problem's dtypes) and other values, in order
    golden: list = field(default_factory=list)     # float64, on the judging device
    reference: list = field(default_factory=list)  # the problem's dtype, on the judging device

    def wire_arguments(self) -> tuple[list, list]:
        """The arguments as the worker's request lists them, and the tensors in order."""
        import torch
        slots, tensors = [], []
        for a in self.arguments:
            if isinstance(a, torch.Tensor):
                slots.append("tensor")
                tensors.append(a)
            else:
                slots.append({"value": a})
        return slots, tensors

    def input_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.wire_arguments()[1])


@dataclass
class Problem:
    path: str
    module: Any
    init_inputs: list
    digest: str
    forbidden: Optional[list[str]]  # the problem's own KJUDGE_FORBIDDEN_OPS, or None
    cases: list[Case] = field(default_factory=list)
    weights: Optional[dict] = None  # a recorded state_dict for Model and ModelNew alike
    excused: list[dict] = field(default_factory=list)  # cases dropped, with the reason
    model_ops: dict[str, int] = field(default_factory=dict)

    def default_forbidden(self) -> list[str]:
        """KJUDGE_FORBIDDEN_OPS where the problem gives it; else the op the Model computes with
        when it is exactly one (a level-1 problem), else none."""
        if self.forbidden is not None:
            return list(self.forbidden)
        ops = compute_ops(self.model_ops)
        return ops if len(ops) == 1 else []


@contextlib.contextmanager
def precise_math():
    """TF32 and reduced-precision reductions off for the golden and the reference."""
    import torch
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
             torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    try:
        yield
    finally:
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
         torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
         torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction) = saved


def load_problem(path: str) -> Problem:
    """Imports the problem file. ProblemError naming the file when it does not import or lacks
    Model, get_inputs or get_init_inputs."""
    if not os.path.isfile(path):
        raise ProblemError(f"{path}: no such problem file")
    text = open(path, "rb").read()
    digest = hashlib.sha256(text).hexdigest()
    spec = importlib.util.spec_from_file_location(f"kjudge_problem_{digest[:16]}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise ProblemError(f"{path}: does not import: {type(e).__name__}: {e}") from None
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise ProblemError(f"{path}: defines no {name} (a KernelBench problem needs Model, "
                               "get_inputs and get_init_inputs)")
    forbidden = getattr(module, "KJUDGE_FORBIDDEN_OPS", None)
    if forbidden is not None and not (isinstance(forbidden, (list, tuple)) and
                                      all(isinstance(o, str) for o in forbidden)):
        raise ProblemError(f"{path}: KJUDGE_FORBIDDEN_OPS must be a list of op names "
                           "(\"aten.relu\")")
    try:
        init_inputs = list(module.get_init_inputs())
    except Exception as e:
        raise ProblemError(f"{path}: get_init_inputs() raised {type(e).__name__}: {e}") from None
    return Problem(path, module, init_inputs, digest,
                   None if forbidden is None else list(forbidden))


def build_model(problem: Problem, seed: int, device):
    """Model(*init_inputs) under `seed` (the candidate's ModelNew is built under the same seed,
    so layers made in the same order get the same weights, as in KernelBench), with the
    recorded weights where there are some."""
    import torch
    torch.manual_seed(seed)
    model = problem.module.Model(*problem.init_inputs)
    if problem.weights is not None:
        try:
            model.load_state_dict(problem.weights, strict=True)
        except (RuntimeError, AttributeError) as e:
            raise ProblemError(f"{problem.path}: the recorded weights do not fit Model: "
                               f"{str(e).splitlines()[0]}") from None
    return model.to(device) if isinstance(model, torch.nn.Module) else model


def make_cases(problem: Problem, *, seeds: list[int], scalings: list[float], init_seed: int,
               device) -> None:
    """Fills problem.cases: one per seed, then the first seed's inputs scaled by each factor
    (float inputs only). A scaled case is dropped (problem.excused) when its golden holds a
    non-finite value the unscaled one does not: the scaling left the problem's domain."""
    import torch
    model = build_model(problem, init_seed, device)
    golden_model = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else model
    base_nonfinite = None
    for seed in seeds:
        torch.manual_seed(seed)
        try:
            arguments = list(problem.module.get_inputs())
        except Exception as e:
            raise ProblemError(f"{problem.path}: get_inputs() raised {type(e).__name__}: {e}") \
                from None
        case = Case(f"seed:{seed}", [_to_cpu(a) for a in arguments])
        _judge_case_truth(case, model, golden_model, device, problem)
        problem.cases.append(case)
        if base_nonfinite is None:
            base_nonfinite = sum(int((~torch.isfinite(g)).sum()) for g in case.golden)
    first = problem.cases[0]
    for factor in scalings:
        scaled = Case(f"scaled:{factor:g}", [
            a * factor if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in first.arguments])
        _judge_case_truth(scaled, model, golden_model, device, None)
        nonfinite = sum(int((~torch.isfinite(g)).sum()) for g in scaled.golden)
        if nonfinite > base_nonfinite:
            problem.excused.append({"case": scaled.id, "reason": f"the golden has {nonfinite} "
                                    "non-finite values: the scaling leaves the problem's domain"})
            continue
        problem.cases.append(scaled)


def make_input_sets(problem: Problem, seeds: list[int], *, init_seed: int, device,
                    judged: Optional[set[int]] = None) -> list[Case]:
    """Cases of get_inputs() under `seeds`, outside problem.cases: the timed calls' input sets.
    Those whose index is in `judged` (all when None) get their golden and reference."""
    import torch
    model = build_model(problem, init_seed, device)
    golden_model = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else model
    sets = []
    for index, seed in enumerate(seeds):
        torch.manual_seed(seed)
        case = Case(f"timing:{seed}", [_to_cpu(a) for a in problem.module.get_inputs()])
        if judged is None or index in judged:
            _judge_case_truth(case, model, golden_model, device, None)
        sets.append(case)
    return sets


def make_recorded_case(problem: Problem, folder: str, *, init_seed: int, device) -> None:
    """problem.cases as the one recorded case (record.py): its inputs, the weights loaded, the
    recorded predictions as the reference and the Model in float64 as the golden."""
    import torch
    from kjudge.kernelbench.record import ordered, read_tensors
    problem.weights = read_tensors(folder, "weights", required=False)
    inputs = ordered(read_tensors(folder, "inputs", required=True), "arg", folder)
    outputs = read_tensors(folder, "outputs", required=True)
    model = build_model(problem, init_seed, device)
    case = Case("recorded", inputs)
    _judge_case_truth(case, model, copy.deepcopy(model).double(), device, problem)
    recorded = ordered(outputs, "out", folder)
    if [tuple(r.shape) for r in recorded] != [tuple(r.shape) for r in case.reference]:
        raise ProblemError(f"{folder}: the recorded outputs' shapes "
                           f"{[tuple(r.shape) for r in recorded]} are not the Model's "
                           f"{[tuple(r.shape) for r in case.reference]}")
    case.reference = [r.to(device=ref.device, dtype=ref.dtype)
                      for r, ref in zip(recorded, case.reference)]
    problem.cases = [case]


def _judge_case_truth(case: Case, model, golden_model, device, problem: Optional[Problem]):
    """The case's golden and reference, kept on the device: the GPU comparator judges the
    candidate's outputs there (and, for the first case, the Model's torch ops)."""
    import torch
    args = [a.to(device) if isinstance(a, torch.Tensor) else a for a in case.arguments]
    wide = [a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in args]
    with precise_math(), torch.no_grad():
        case.golden = model_outputs(golden_model(*wide), "golden")
        if problem is not None and not problem.model_ops:
            with OpRecorder() as ops:
                reference = model(*args)
            problem.model_ops = ops.counts
        else:
            reference = model(*args)
        case.reference = model_outputs(reference, "reference")


def model_outputs(result, what: str) -> list:
    """The Model's result as a list of tensors; ProblemError when it is something else."""
    import torch
    if isinstance(result, torch.Tensor):
        return [result.detach()]
    if isinstance(result, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in result):
        return [t.detach() for t in result]
    raise ProblemError(f"the problem's Model returns {type(result).__name__} for the {what}, "
                       "not a tensor or a tuple of tensors")


def _to_cpu(a):
    import torch
    return a.detach().to("cpu") if isinstance(a, torch.Tensor) else a
