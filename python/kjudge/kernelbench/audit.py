"""`kjudge audit --kernelbench DIR` (also `python -m kjudge.kernelbench.audit DIR`): asks of each
KernelBench-format problem in DIR, before any candidate is judged, whether a policy can tell a
right answer from a wrong one there, under kjudge's policy ("relative" against a float64 golden)
and under KernelBench's torch.allclose. Trusted code only (the problems' own Models), so it all
runs in this process. Four steps per problem: make its cases; judge trivial outputs (hollowness);
hold the reference against the golden (self-consistency); judge the Model run in TF32, bf16 and
f16 (downgrades). Then a table, totals per policy, and optionally the whole report as JSON.
docs/kernelbench-audit.md explains the columns and the verdict rules."""
from __future__ import annotations

import argparse
import copy
import json
import math
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import kjudge
from kjudge.kernelbench.problem import Problem, ProblemError, build_model, load_problem, \
    make_cases, precise_math

INIT_SEED = 42             # the seed Model(*get_init_inputs()) is built under, as `check` uses
NOISE_FACTOR = 10.0        # the noise candidate sits at this many times the policy's bound
NOISE_SEED = 20240601      # its random signs: the same audit gives the same report
TRIVIALS = ("zeros", "ones", "mean", "copy", "noise")
DOWNGRADES = ("tf32", "bf16", "f16")
DOWNGRADE_LABEL = {"tf32": "TF32", "bf16": "bf16", "f16": "f16"}
EXIT_OK, EXIT_FINDING, EXIT_BAD_INPUT, EXIT_NO_DEVICE = 0, 1, 2, 3


# ---- the policies ----------------------------------------------------------------------------

class Policy:
    """How a policy judges one case's outputs, what it allows an element, and what it demands
    of the reference itself. `ratio` is the error over the bound: at most 1 passes."""
    name = ""
    describe = ""

    def judge(self, outputs: list, case, bounds: list) -> tuple[bool, float]:
        raise NotImplementedError

    def bounds_for(self, case) -> list:
        """Per output: what the policy needs to know of the case once (kjudge's bound)."""
        return [None] * len(case.reference)

    def allowed(self, gold, ref, bound):
        """The error allowed each element (a tensor, or a float for a uniform bound)."""
        raise NotImplementedError

    def allowed_at(self, magnitude: float, bound) -> float:
        """The error allowed an element whose expected value is `magnitude`."""
        raise NotImplementedError

    def check_reference(self, case, o: int) -> Optional[dict]:
        """The reference's fault against the golden on output o of the case, or None."""
        raise NotImplementedError


class KjudgePolicy(Policy):
    """kjudge.compare, policy "relative": k times the same-precision reference's own error
    against the float64 golden (max and rms), floored at one ulp of the golden's scale."""
    name = "kjudge"
    describe = 'kjudge.compare(out, reference, golden=golden, policy="relative")'

    def bounds_for(self, case) -> list:
        # The bound is the reference's own: judging the reference against itself reports it.
        return [_number(kjudge.compare(r, r, golden=g, policy="relative").output["bound"]
                        ["max_bound"]) for g, r in zip(case.golden, case.reference)]

    def judge(self, outputs, case, bounds):
        passed, ratio = True, 0.0
        for out, gold, ref in zip(outputs, case.golden, case.reference):
            report = kjudge.compare(out, ref, golden=gold, policy="relative")
            passed &= report.passed
            log_ratio = _number(report.output.get("log_error_ratio"))
            this = 10.0 ** log_ratio if math.isfinite(log_ratio) else \
                (0.0 if report.passed else math.inf)
            ratio = max(ratio, this)
        return passed, ratio

    def allowed(self, gold, ref, bound):
        return bound

    def allowed_at(self, magnitude, bound):
        return bound

    def check_reference(self, case, o):
        """Vacuous against its own bound (the reference sets it): held to its dtype's ceiling
        instead, as the C++ audit does: its error over the golden's scale at most
        2^(-mantissa bits / 2) (f32 3.5e-4), else it measures its own failure."""
        gold, ref = case.golden[o], case.reference[o]
        if not ref.is_floating_point():
            return None
        scaled = _error_over_golden_scale(gold, ref)
        if scaled is None:
            return None
        ceiling = 2.0 ** (-0.5 * _mantissa_bits(ref.dtype))
        within = scaled[0] <= ceiling and scaled[1] <= ceiling
        return {"case": case.id, "output": o, "max_over_scale": scaled[0],
                "rms_over_scale": scaled[1], "ceiling": ceiling, "fault": not within,
                "why": None if within else
                f"the {_dtype_name(ref.dtype)} reference's error over the golden's scale is "
                f"{scaled[0]:.3g} (max) and {scaled[1]:.3g} (rms), past the "
                f"{_dtype_name(ref.dtype)} ceiling {ceiling:.3g}"}


class AllclosePolicy(Policy):
    """torch.allclose(out, reference, rtol, atol), KernelBench's rule; `tolerance(dtype)` gives
    (rtol, atol) for the output's dtype."""

    def __init__(self, name: str, describe: str, tolerance: Callable):
        self.name, self.describe, self.tolerance = name, describe, tolerance

    def judge(self, outputs, case, bounds):
        import torch
        passed, ratio = True, 0.0
        for out, ref in zip(outputs, case.reference):
            rtol, atol = self.tolerance(ref.dtype)
            passed &= bool(torch.allclose(out, ref, rtol=rtol, atol=atol))
            ratio = max(ratio, _allclose_ratio(out, ref, rtol, atol))
        return passed, ratio

    def allowed(self, gold, ref, bound):
        rtol, atol = self.tolerance(ref.dtype)
        return atol + rtol * ref.double().abs()

    def allowed_at(self, magnitude, bound):
        rtol, atol = bound
        return atol + rtol * magnitude

    def bounds_for(self, case):
        return [self.tolerance(r.dtype) for r in case.reference]

    def check_reference(self, case, o):
        """The reference against the golden under the same rule a candidate meets: where it
        fails, a correct kernel as accurate as the reference can fail too."""
        import torch
        gold, ref = case.golden[o], case.reference[o]
        rtol, atol = self.tolerance(ref.dtype)
        wide = ref.double()
        close = torch.isclose(wide, gold, rtol=rtol, atol=atol)
        bad = int((~close).sum())
        if bad == 0:
            return {"case": case.id, "output": o, "mismatches": 0, "count": gold.numel(),
                    "fault": False, "why": None}
        excess = _excess(wide, gold, rtol, atol)
        flat = int(torch.argmax(excess))
        index = _unravel(flat, tuple(gold.shape))
        return {"case": case.id, "output": o, "mismatches": bad, "count": gold.numel(),
                "worst": {"flat": flat, "index": index, "value": float(wide.flatten()[flat]),
                          "expected": float(gold.flatten()[flat]),
                          "error_over_bound": float(excess.flatten()[flat])},
                "fault": True,
                "why": f"the reference fails allclose(rtol={rtol:g}, atol={atol:g}) against the "
                       f"float64 golden on {bad} of {gold.numel()} elements, worst at "
                       f"{list(index)}: {float(wide.flatten()[flat]):.6g} vs "
                       f"{float(gold.flatten()[flat]):.6g}"}


def _kernelbench_current(dtype) -> tuple[float, float]:
    import torch
    t = 1e-2 if dtype in (torch.float16, torch.bfloat16) else 1e-4
    return t, t


POLICIES: list[Policy] = [
    KjudgePolicy(),
    AllclosePolicy("kernelbench-1e-2", "torch.allclose(out, reference, atol=1e-2, rtol=1e-2) "
                   "(KernelBench v0/v0.1, every dtype)", lambda dtype: (1e-2, 1e-2)),
    AllclosePolicy("kernelbench-current", "torch.allclose(out, reference, atol=rtol=1e-4 for "
                   "float32 (and wider), 1e-2 for float16/bfloat16) (KernelBench now)",
                   _kernelbench_current),
]


# ---- step 1: find and load the problems, make their cases ------------------------------------

def find_problems(target: str) -> list[tuple[str, str]]:
    """(name, path) sorted by name: DIR/<name>/problem.py and DIR/<name>.py files that define
    Model; DIR may also be one problem folder or file itself."""
    if os.path.isfile(target):
        return [(os.path.splitext(os.path.basename(target))[0], target)]
    if os.path.isfile(os.path.join(target, "problem.py")):
        return [(os.path.basename(os.path.normpath(target)), os.path.join(target, "problem.py"))]
    found = []
    for entry in sorted(os.listdir(target)):
        path = os.path.join(target, entry)
        if os.path.isfile(os.path.join(path, "problem.py")):
            found.append((entry, os.path.join(path, "problem.py")))
        elif entry.endswith(".py") and os.path.isfile(path) and _defines_model(path):
            found.append((entry[:-3], path))
    return sorted(found)


def _defines_model(path: str) -> bool:
    # Read, not imported: a helper module or a candidate (ModelNew) beside the problems is not
    # a problem, and importing it would run its code.
    try:
        text = open(path, encoding="utf-8", errors="replace").read()
    except OSError:
        return False
    return re.search(r"^(class\s+Model\b|Model\s*=)", text, re.MULTILINE) is not None


def make_problem_cases(problem: Problem, seeds: list[int], device) -> None:
    """KernelBench runs get_inputs() only: one case per seed, no scalings."""
    try:
        make_cases(problem, seeds=seeds, scalings=[], init_seed=INIT_SEED, device=device)
    except ProblemError:
        raise
    except Exception as e:  # the Model itself raised: the problem cannot be audited
        raise ProblemError(f"{problem.path}: the Model raised {type(e).__name__}: {e}") from None


# ---- judging a candidate case by case --------------------------------------------------------

@dataclass
class Judged:
    """One candidate under one policy, judged case by case until a case rejects it: `passed`
    every case it was judged on, `ratio` its error over the bound where it failed or, when it
    passed them all, the largest (its margin: how close it came to failing)."""
    judged: int = 0
    passed: int = 0
    skipped: int = 0           # cases where it is the answer (equal to the reference)
    ratio: Optional[float] = None
    case: Optional[str] = None

    @property
    def rejected(self) -> bool:
        return self.passed < self.judged

    @property
    def passes_all(self) -> bool:
        return self.judged > 0 and not self.rejected

    def add(self, case_id: str, passed: bool, ratio: float) -> None:
        self.judged += 1
        if passed:
            self.passed += 1
            if self.ratio is None or ratio > self.ratio:
                self.ratio, self.case = ratio, case_id
        else:
            self.ratio, self.case = ratio, case_id

    def as_json(self) -> dict:
        return {"cases_judged": self.judged, "cases_passed": self.passed,
                "cases_skipped_as_answer": self.skipped, "passes_every_case": self.passes_all,
                "error_over_bound": self.ratio, "at_case": self.case}


def judge_case_by_case(problem: Problem, bounds: dict, outputs_for: Callable) -> dict:
    """Each policy's Judged for one candidate. outputs_for(case_index, policy) gives the
    candidate's outputs on that case (None: not made there); a case is judged under the
    policies that have not rejected it yet, and none is made once all have."""
    results = {p.name: Judged() for p in POLICIES}
    for ci, case in enumerate(problem.cases):
        live = [p for p in POLICIES if not results[p.name].rejected]
        if not live:
            break
        for p in live:
            outputs = outputs_for(ci, p)
            if outputs is None:
                continue
            if _is_the_answer(outputs, case.reference):
                results[p.name].skipped += 1
                continue
            passed, ratio = p.judge(outputs, case, bounds[p.name][ci])
            results[p.name].add(case.id, passed, ratio)
    return results


# ---- step 2: hollowness ----------------------------------------------------------------------

def trivial_outputs(name: str, case, policy: Policy, bounds: list) -> Optional[list]:
    """The trivial candidate `name` on the case, in the reference's dtypes; None where it cannot
    be made (no input of the output's shape and dtype to copy)."""
    import torch
    outs = []
    for o, (gold, ref) in enumerate(zip(case.golden, case.reference)):
        if name == "zeros":
            outs.append(torch.zeros_like(ref))
        elif name == "ones":
            outs.append(torch.ones_like(ref))
        elif name == "mean":
            finite = gold[torch.isfinite(gold)]
            mean = float(finite.mean()) if finite.numel() else 0.0
            outs.append(torch.full_like(ref, mean))
        elif name == "copy":
            first = next((a for a in case.arguments if isinstance(a, torch.Tensor)), None)
            if first is None or first.shape != ref.shape or first.dtype != ref.dtype:
                return None
            outs.append(first.to(ref.device, copy=True))  # the arguments stay on the CPU
        elif name == "noise":
            outs.append(noisy_golden(gold, ref, policy.allowed(gold, ref, bounds[o])))
    return outs


def noisy_golden(gold, ref, allowed):
    """The golden moved by NOISE_FACTOR times the allowed error, each element a random sign."""
    import torch
    generator = torch.Generator().manual_seed(NOISE_SEED)
    sign = torch.randint(0, 2, gold.shape, generator=generator, dtype=torch.int8).double() * 2 - 1
    sign = sign.to(gold.device)
    return (gold + sign * NOISE_FACTOR * allowed).to(ref.dtype)


def audit_trivials(problem: Problem, bounds: dict) -> dict:
    """Per trivial candidate, per policy: how it fared."""
    return {name: judge_case_by_case(
        problem, bounds,
        lambda ci, p, name=name: trivial_outputs(name, problem.cases[ci], p, bounds[p.name][ci]))
        for name in TRIVIALS}


# ---- step 3: self-consistency ----------------------------------------------------------------

def audit_reference(problem: Problem, policy: Policy) -> list[dict]:
    """The reference against the golden on every case and float output."""
    found = []
    for case in problem.cases:
        for o, ref in enumerate(case.reference):
            if ref.is_floating_point() and ref.numel():
                check = policy.check_reference(case, o)
                if check is not None:
                    found.append(check)
    return found


# ---- step 4: downgrades ----------------------------------------------------------------------

def run_downgraded(problem: Problem, model, case, fmt: str, device) -> list:
    """The Model on the case in a narrower precision, its outputs back in the reference's
    dtypes. TF32: the float32 Model with TF32 matmuls and convolutions allowed; bf16/f16: the
    Model and its float inputs cast to that dtype. Reduced-precision reductions stay off: the
    most accurate run of that precision, so one caught here is caught when it is sloppier."""
    import torch
    from kjudge.kernelbench.problem import model_outputs
    narrow = {"bf16": torch.bfloat16, "f16": torch.float16}.get(fmt)
    args = [a.to(device) if isinstance(a, torch.Tensor) else a for a in case.arguments]
    if narrow is not None:
        args = [a.to(narrow) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
                for a in args]
    with precise_math(), torch.no_grad():
        if fmt == "tf32":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        result = model_outputs(model(*args), "downgrade")
    return [r.to(device=ref.device, dtype=ref.dtype) for r, ref in zip(result, case.reference)]


def audit_downgrades(problem: Problem, bounds: dict, device) -> dict:
    """Per format: its status under each policy ("caught", "undetectable", "n/a", "error")."""
    import torch
    found = {}
    for fmt in DOWNGRADES:
        if fmt == "tf32" and device.type != "cuda":
            found[fmt] = _not_applicable(f"TF32 is a CUDA mode: not run on {device.type}")
            continue
        model = build_model(problem, INIT_SEED, device)
        narrow = {"bf16": torch.bfloat16, "f16": torch.float16}.get(fmt)
        if narrow is not None and isinstance(model, torch.nn.Module):
            model = copy.deepcopy(model).to(narrow)
        made: dict[int, list] = {}
        identical = [True]

        def outputs_for(ci, policy):
            if ci not in made:
                made.clear()  # one case's outputs at a time: a big problem's are large
                made[ci] = run_downgraded(problem, model, problem.cases[ci], fmt, device)
                identical[0] &= all(torch.equal(a, r) for a, r in
                                    zip(made[ci], problem.cases[ci].reference))
            return made[ci]

        try:
            judged = _judge_downgrade(problem, bounds, outputs_for)
        except Exception as e:  # an op without a kernel in that dtype, say: nothing to judge
            found[fmt] = {p.name: {"status": "error", "why": f"the Model in {fmt} raised "
                                   f"{type(e).__name__}: {str(e)[:200]}"} for p in POLICIES}
            continue
        if identical[0]:
            why = "no TF32 op" if fmt == "tf32" else f"the Model in {fmt} changes nothing"
            found[fmt] = _not_applicable(why)
            continue
        found[fmt] = {name: {"status": "undetectable" if j.passes_all else "caught",
                             **j.as_json()} for name, j in judged.items()}
    return found


def _judge_downgrade(problem: Problem, bounds: dict, outputs_for: Callable) -> dict:
    """As judge_case_by_case, but a run bit-identical to the reference is still judged (it
    passes): whether it changed anything is decided over every case it ran on."""
    results = {p.name: Judged() for p in POLICIES}
    for ci, case in enumerate(problem.cases):
        live = [p for p in POLICIES if not results[p.name].rejected]
        if not live:
            break
        for p in live:
            passed, ratio = p.judge(outputs_for(ci, p), case, bounds[p.name][ci])
            results[p.name].add(case.id, passed, ratio)
    return results


def _not_applicable(why: str) -> dict:
    return {p.name: {"status": "n/a", "why": why} for p in POLICIES}


# ---- the verdicts ----------------------------------------------------------------------------

def audit_problem(name: str, problem: Problem, seeds: list[int], device) -> dict:
    """Steps 1 to 4 on one problem, and each policy's verdict."""
    make_problem_cases(problem, seeds, device)
    bounds = {p.name: [p.bounds_for(c) for c in problem.cases] for p in POLICIES}
    trivials = audit_trivials(problem, bounds)
    downgrades = audit_downgrades(problem, bounds, device)
    first = problem.cases[0]
    report = {"name": name, "path": problem.path, "cases": [c.id for c in problem.cases],
              "outputs": [{"dtype": _dtype_name(r.dtype), "shape": list(r.shape)}
                          for r in first.reference], "policies": {}}
    for p in POLICIES:
        reference = audit_reference(problem, p)
        hollow = [t for t in TRIVIALS if trivials[t][p.name].passes_all]
        undetectable = [f for f in DOWNGRADES if downgrades[f][p.name]["status"] == "undetectable"]
        unjudgeable = any(r["fault"] for r in reference)
        findings = (["unjudgeable"] if unjudgeable else []) + \
            ([f"hollow({','.join(hollow)})"] if hollow else []) + \
            ([f"downgrade undetectable({','.join(undetectable)})"] if undetectable else [])
        report["policies"][p.name] = {
            "policy": p.describe,
            "verdict": "; ".join(findings) or "ok",
            "hollow": hollow, "unjudgeable": unjudgeable, "undetectable": undetectable,
            "signal_over_bound": signal_over_bound(problem, p, bounds[p.name]),
            "trivials": {t: trivials[t][p.name].as_json() for t in TRIVIALS},
            "reference": reference,
            "downgrades": {f: downgrades[f][p.name] for f in DOWNGRADES},
        }
    return report


def signal_over_bound(problem: Problem, policy: Policy, bounds: list) -> Optional[float]:
    """Median nonzero |golden| over the error allowed there, the smallest over the cases and
    outputs (a zero, half of a relu's outputs, carries no signal)."""
    import torch
    smallest = None
    for case, case_bounds in zip(problem.cases, bounds):
        for gold, bound in zip(case.golden, case_bounds):
            mags = gold[torch.isfinite(gold) & (gold != 0)].abs()
            if mags.numel() == 0:
                continue
            median = float(mags.median())
            allowed = policy.allowed_at(median, bound)
            ratio = median / allowed if allowed > 0 else math.inf
            smallest = ratio if smallest is None else min(smallest, ratio)
    return smallest


def totals(reports: list[dict]) -> dict:
    """Per policy: how many problems are hollow, unjudgeable, let each downgrade through, and
    on how many each downgrade applied at all."""
    out = {}
    for p in POLICIES:
        rows = [r["policies"][p.name] for r in reports]
        out[p.name] = {
            "problems": len(rows),
            "ok": sum(row["verdict"] == "ok" for row in rows),
            "hollow": sum(bool(row["hollow"]) for row in rows),
            "unjudgeable": sum(row["unjudgeable"] for row in rows),
            "let_through": {f: sum(row["downgrades"][f]["status"] == "undetectable"
                                   for row in rows) for f in DOWNGRADES},
            "applicable": {f: sum(row["downgrades"][f]["status"] in ("caught", "undetectable")
                                  for row in rows) for f in DOWNGRADES},
        }
    return out


# ---- output ----------------------------------------------------------------------------------

def table(reports: list[dict]) -> str:
    """One row per problem: each policy's verdict and signal/bound; the findings explained
    below it; a totals line per policy."""
    header = ["problem"] + [p.name for p in POLICIES] + \
        ["signal/bound (" + " / ".join(p.name for p in POLICIES) + ")"]
    rows = [[r["name"]] + [r["policies"][p.name]["verdict"] for p in POLICIES] +
            [" / ".join(_short(r["policies"][p.name]["signal_over_bound"]) for p in POLICIES)]
            for r in reports]
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
             for row in [header] + rows]
    details = [line for r in reports for line in explain(r)]
    if details:
        lines += [""] + details
    count = totals(reports)
    lines += [""] + [totals_line(p.name, count[p.name]) for p in POLICIES]
    return "\n".join(lines) + "\n"


def totals_line(policy: str, t: dict) -> str:
    """"kernelbench-1e-2: 1 of 4 problems hollow, 0 unjudgeable; let through: TF32 n/a,
    bf16 3 of 4, f16 3 of 4" (a downgrade counts only problems where it changed the output)."""
    through = []
    for f in DOWNGRADES:
        label = DOWNGRADE_LABEL[f]
        through.append(f"{label} n/a" if t["applicable"][f] == 0 else
                       f"{label} {t['let_through'][f]} of {t['applicable'][f]}")
    return (f"{policy}: {t['hollow']} of {t['problems']} problems hollow, {t['unjudgeable']} "
            f"unjudgeable; let through: " + ", ".join(through))


def explain(report: dict) -> list[str]:
    """A line per finding: the candidate and its margin, the reference's fault."""
    lines = []
    for p in POLICIES:
        row = report["policies"][p.name]
        at = f"  {report['name']} [{p.name}]"
        for fault in row["reference"]:
            if fault["fault"]:
                lines.append(f"{at} unjudgeable: {fault['case']} output{fault['output']}: "
                             f"{fault['why']}")
                break  # the first case says it; the JSON has them all
        for t in row["hollow"]:
            j = row["trivials"][t]
            lines.append(f"{at} hollow: {TRIVIAL_TEXT[t]} passes every case judged "
                         f"({j['cases_judged']}), its error at most {_short(j['error_over_bound'])}"
                         f" of the bound")
        for f in row["undetectable"]:
            j = row["downgrades"][f]
            lines.append(f"{at} downgrade undetectable: the Model in {DOWNGRADE_LABEL[f]} passes "
                         f"every case ({j['cases_judged']}), its error at most "
                         f"{_short(j['error_over_bound'])} of the bound")
    return lines


TRIVIAL_TEXT = {"zeros": "all zeros", "ones": "all ones", "mean": "the golden's mean",
                "copy": "a copy of the first input",
                "noise": f"the golden moved {NOISE_FACTOR:g}x the bound"}


# ---- helpers ---------------------------------------------------------------------------------

def _is_the_answer(outputs: list, reference: list) -> bool:
    import torch
    return all(o.shape == r.shape and o.dtype == r.dtype and torch.equal(o, r)
               for o, r in zip(outputs, reference))


def _excess(value, expected, rtol: float, atol: float):
    """|value - expected| over atol + rtol*|expected|, elementwise, float64; NaN: inf."""
    import torch
    value, expected = value.double(), expected.double()
    ratio = (value - expected).abs() / (atol + rtol * expected.abs())
    both_inf = torch.isinf(value) & (value == expected)
    ratio = torch.where(both_inf, torch.zeros_like(ratio), ratio)
    return torch.nan_to_num(ratio, nan=math.inf)


def _allclose_ratio(out, ref, rtol: float, atol: float) -> float:
    return float(_excess(out, ref, rtol, atol).max()) if out.numel() else 0.0


def _error_over_golden_scale(gold, ref) -> Optional[tuple[float, float]]:
    """max|ref - golden| / max|golden| and rms over rms, both floored at the dtype's smallest
    normal, over the elements whose golden the dtype can hold (as kjudge's C++ does)."""
    import torch
    keep = torch.isfinite(gold) & torch.isfinite(gold.to(ref.dtype))
    if not bool(keep.any()):
        return None
    g, v = gold[keep], ref.double()[keep]
    err = torch.where(torch.isfinite(v), (v - g).abs(), torch.full_like(v, math.inf))
    floor = float(torch.finfo(ref.dtype).tiny)
    return (float(err.max()) / max(float(g.abs().max()), floor),
            float(err.pow(2).mean().sqrt()) / max(float(g.pow(2).mean().sqrt()), floor))


def _mantissa_bits(dtype) -> int:
    import torch
    return {torch.float64: 52, torch.float32: 23, torch.float16: 10,
            torch.bfloat16: 7}.get(dtype, 23)


def _dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def _unravel(flat: int, shape: tuple) -> list[int]:
    index = []
    for size in reversed(shape):
        index.append(flat % size if size else 0)
        flat = flat // size if size else 0
    return list(reversed(index))


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _short(x: Optional[float]) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return "inf" if math.isinf(x) else f"{x:.3g}"


def _json_ready(value):
    """JSON has no infinity or NaN: null instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    return value


# ---- the command -----------------------------------------------------------------------------

def parse_arguments(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="kjudge audit --kernelbench", description=(
        "Audits KernelBench-format problems: whether trivial outputs, the reference itself and "
        "TF32/bf16/f16 runs of the Model are told apart under kjudge's policy and KernelBench's "
        "allclose."))
    p.add_argument("dir", help="a folder of problems (<name>/problem.py or <name>.py)")
    p.add_argument("--json", metavar="FILE", help="write the full report to FILE (- : stdout, "
                   "instead of the table)")
    p.add_argument("--device", default=None, help="cuda:N or cpu (default cuda:0 if any)")
    p.add_argument("--seeds", default="42,43,44", help="seeds for get_inputs (default 42,43,44)")
    p.add_argument("--only", action="append", default=None, metavar="NAME",
                   help="audit only this problem (repeatable, or comma-separated)")
    return p.parse_args(argv)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        if not seeds:
            raise ValueError
    except ValueError:
        return _bad_input(f"--seeds {args.seeds!r}: give comma-separated integers (42,43,44)")
    if not os.path.exists(args.dir):
        return _bad_input(f"{args.dir}: no such folder")
    found = find_problems(args.dir)
    if args.only:
        wanted = {n.strip() for item in args.only for n in item.split(",") if n.strip()}
        unknown = sorted(wanted - {name for name, _ in found})
        if unknown:
            return _bad_input(f"--only {', '.join(unknown)}: no such problem in {args.dir}")
        found = [(name, path) for name, path in found if name in wanted]
    if not found:
        return _bad_input(f"{args.dir}: no problems (<name>/problem.py, or <name>.py defining "
                          "Model)")
    import torch
    device = torch.device(args.device or ("cuda:0" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        print(f"kjudge audit: {device}: no CUDA device here", file=sys.stderr)
        return EXIT_NO_DEVICE
    try:
        problems = [(name, load_problem(path)) for name, path in found]  # all import, or none
        reports = [audit_problem(name, problem, seeds, device) for name, problem in problems]
    except ProblemError as e:
        return _bad_input(str(e))
    status = EXIT_OK if all(r["policies"]["kjudge"]["verdict"] == "ok" for r in reports) \
        else EXIT_FINDING
    if args.json:
        document = _json_ready({
            "schema_version": 1, "tool": "kjudge audit --kernelbench",
            "kjudge_version": kjudge.__version__, "device": str(device), "seeds": seeds,
            "init_seed": INIT_SEED,
            "policies": {p.name: p.describe for p in POLICIES},
            "problems": reports, "totals": totals(reports), "exit_status": status})
        text = json.dumps(document, indent=1)
        if args.json == "-":
            sys.stdout.write(text + "\n")
            return status
        with open(args.json, "w") as f:
            f.write(text + "\n")
    sys.stdout.write(table(reports))
    return status


def _bad_input(message: str) -> int:
    print(f"kjudge audit: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
