"""`--backward`: the gradients a whole-model check compares, of the float inputs and of the
parameters (by name), for fixed random cotangents of the outputs: the golden's in float64 and
the reference's in the problem's dtype, both with TF32 off. The candidate's come from its
worker for the same cotangents."""
from __future__ import annotations

import copy
from dataclasses import dataclass

from kjudge.kernelbench.problem import Case, Problem, build_model, precise_math


@dataclass
class Gradients:
    names: list[str]       # "input0", ..., then the parameters' names
    cotangents: list       # one per output, the problem's dtype, CPU
    golden: list
    reference: list


def gradients_of_model(problem: Problem, case: Case, init_seed: int, device) -> Gradients:
    import torch
    model = build_model(problem, init_seed, device)
    wide_model = copy.deepcopy(model).double()
    generator = torch.Generator().manual_seed(7)
    cotangents = [torch.randn(r.shape, generator=generator, dtype=torch.float64).to(r.dtype)
                  for r in case.reference]
    golden_names, golden = _gradients(wide_model, case.arguments, cotangents, device, wide=True)
    names, reference = _gradients(model, case.arguments, cotangents, device, wide=False)
    assert names == golden_names
    return Gradients(names, cotangents, golden, reference)


def _gradients(model, arguments: list, cotangents: list, device, *, wide: bool):
    import torch
    args = []
    for a in arguments:
        if isinstance(a, torch.Tensor):
            a = a.to(device)
            if a.is_floating_point():
                a = (a.double() if wide else a.clone()).requires_grad_()
        args.append(a)
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    with precise_math():
        result = model(*args)
        outputs = [result] if isinstance(result, torch.Tensor) else list(result)
        grads = torch.autograd.grad(
            outputs, leaves + [p for _, p in params],
            [c.to(device=device, dtype=o.dtype) for c, o in zip(cotangents, outputs)],
            allow_unused=True)
    every = leaves + [p for _, p in params]
    grads = [torch.zeros_like(x) if g is None else g for x, g in zip(every, grads)]
    names = [f"input{i}" for i in range(len(leaves))] + [n for n, _ in params]
    return names, [g.detach().to("cpu") for g in grads]
