"""`kjudge mutate --kernelbench DIR` (also `python -m kjudge.kernelbench.mutate DIR`): mutation
analysis of checkers on KernelBench-format programs, the setting of KernelBench's own checker on
KernelBench's own programs. The kernels of each correct solution (the `__global__` and
`__device__` bodies in its `load_inline` sources, and its `@triton.jit` functions) are mutated
with `kjudge mutate`'s catalogue, one edit each; every mutant is judged on a pool of inputs by
the strong oracle and by the checkers under test (kjudge's verdict, kernelbench-v0's allclose
over 5 seeds, and the others); the library's analysis then gives the escape rates per category
with intervals, the set cover and the held-out scores, in the same reports as `kjudge mutate`.

A few named steps: find the problems and their solutions; find each solution's kernel sites and
their mutants; build (the compile stage, kjudge.kernelbench.build, with its cache) and observe
the solutions, which set each input's baseline; observe the mutants; hand the campaign to the
library's reports (kjudge._kjudge.mutation_reports).

One observation is one `Evaluator.check` on the pool: the seeds 42 to 46 of get_inputs() and the
first seed's inputs scaled by 64 and 1/64. kjudge's own draw (seeds 42 to 44 and the scalings)
is a part of it, so its verdict on those cases is the kjudge checker's; a tolerance checker
judges its first N seeds against the same-precision reference (kj::mutate::judge_by_tolerance);
the strong oracle kills a mutant on an input where it faults, or where its largest error against
the float64 golden is over twice the largest any control reaches there (the solutions and the
problem's own Model), or where it has more non-finite values than they do (observe.cpp's rule).

On Ray (`--ray ADDRESS`) the programs are judged by actors, one per GPU, and each load_inline
build is a task on whichever node has a CPU free (kjudge.ray's build task).

usage: python -m kjudge.kernelbench.mutate DIR [--sites cuda,triton] [--checkers A,B]
           [--operators X,Y] [--budget N] [--judges K] [--build-jobs J] [--state DIR] [--fresh]
           [--html F]
           [--json F] [--jsonl F] [--campaign F] [--device cuda:N] [--ray ADDRESS]
           [--actors N]"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import io
import json
import math
import os
import re
import sys
import time
import tokenize
from dataclasses import dataclass, field
from typing import Callable, Optional

import kjudge
from kjudge import _kjudge
from kjudge.kernelbench.build import default_cache_root, private_folder
from kjudge.kernelbench.evaluate import Settings, default_device

# The union of the builtin checkers' draws: kjudge's (seeds 42 to 44 and the first seed scaled
# by 64 and 1/64) and KernelBench's (its first five seeds). A KernelBench problem's shapes are
# its own (often 16M elements): each case more is a second or more per mutant.
POOL_SEEDS = list(range(42, 47))
POOL_SCALINGS = [64.0, 1 / 64]
DEFAULT_CHECKERS = "kjudge,kernelbench-v0,kernelbench,torch-defaults"
EXIT_OK, EXIT_BAD_INPUT, EXIT_NO_DEVICE = 0, 2, 3
# How many times the controls' largest error an input must show to kill (observe.cpp's 2x).
KILL_FACTOR = 2.0


# ---- the kernels of a solution, and their mutants ----------------------------------------------

@dataclass
class Site:
    """One kernel text of a solution: a load_inline source string, or a Triton function's body
    as the catalogue's generator reads it (`__device__ void NAME() { BODY }`)."""
    kind: str                        # "cuda" or "triton"
    name: str                        # the Triton function, or "cuda_source@LINE"
    text: str                        # what the generator is given
    line: int                        # the source line of the text's first line
    rebuild: Callable[[str], str]    # the solution's source with the text mutated
    offset_of: Callable[[int], Optional[int]]  # a text offset in the solution, where exact


@dataclass
class ProgramMutant:
    """A mutant of a solution: the catalogue's record (its offsets in the solution's file where
    they are exact) and the mutated solution."""
    record: dict
    source: str
    solution: str                    # the solution file it was made from


def _line_starts(source: str) -> list[int]:
    starts = [0]
    for i, c in enumerate(source):
        if c == "\n":
            starts.append(i + 1)
    return starts


def _tokens(source: str) -> list:
    try:
        return list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return []


def _literal(value: str, prefix: str, quote: str) -> str:
    """`value` as a Python literal: in the original's form where it can stay raw, else repr."""
    raw = "r" in prefix.lower()
    if raw and quote not in value and not value.endswith("\\") and \
            (len(quote) == 3 or "\n" not in value):
        return prefix + quote + value + quote
    return repr(value)


def cuda_sites(source: str) -> list[Site]:
    """The string literals holding a __global__ kernel (a load_inline source, or text that
    becomes one)."""
    starts = _line_starts(source)
    sites = []
    for tok in _tokens(source):
        if tok.type != tokenize.STRING:
            continue
        text = tok.string
        m = re.match(r"([rRuU]*)('''|\"\"\"|'|\")", text)
        if m is None:
            continue  # an f-string or bytes: not a source the generator reads
        prefix, quote = m.group(1), m.group(2)
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            continue
        if not isinstance(value, str) or "__global__" not in value:
            continue
        begin = starts[tok.start[0] - 1] + tok.start[1]
        end = starts[tok.end[0] - 1] + tok.end[1]
        body_at = begin + len(prefix) + len(quote)
        exact = source[body_at:end - len(quote)] == value

        def rebuild(mutated: str, begin=begin, end=end, prefix=prefix, quote=quote) -> str:
            return source[:begin] + _literal(mutated, prefix, quote) + source[end:]

        def offset_of(i: int, body_at=body_at, exact=exact) -> Optional[int]:
            return body_at + i if exact else None

        sites.append(Site("cuda", f"cuda_source@{tok.start[0]}", value, tok.start[0], rebuild,
                          offset_of))
    return sites


def _masked(source: str) -> str:
    """The source with comments and docstrings blanked (same length, same lines): the C++ lexer
    of the generator would read Python's `#` comments as code."""
    chars = list(source)
    starts = _line_starts(source)
    previous = None
    for tok in _tokens(source):
        blank = tok.type == tokenize.COMMENT or (
            tok.type == tokenize.STRING and previous in (tokenize.INDENT, tokenize.NEWLINE))
        if blank:
            a = starts[tok.start[0] - 1] + tok.start[1]
            b = starts[tok.end[0] - 1] + tok.end[1]
            for i in range(a, b):
                if chars[i] != "\n":
                    chars[i] = " "
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok.type
    return "".join(chars)


def _is_triton_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "jit") or \
        (isinstance(target, ast.Name) and target.id == "jit")


def triton_sites(source: str) -> list[Site]:
    """Each @triton.jit function's body, wrapped as the body of a __device__ function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    starts = _line_starts(source) + [len(source)]
    masked = _masked(source)
    sites = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or not any(map(_is_triton_jit,
                                                                node.decorator_list)):
            continue
        first = node.body[0].lineno
        body_at = starts[first - 1]
        body_end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(source)
        header = f"__device__ void {node.name}() {{\n"
        text = header + masked[body_at:body_end] + "\n}\n"

        def offset_of(i: int, body_at=body_at, skip=len(header)) -> Optional[int]:
            return body_at + i - skip if i >= skip else None

        def rebuild(mutated: str, body_at=body_at, body_end=body_end, skip=len(header)) -> str:
            # The generator's edits fall inside the body; the wrapper is taken off again, and
            # the body put back with its comments (blanked only for the generator).
            tail = len(mutated) - len("\n}\n")
            edited = mutated[skip:tail]
            original = masked[body_at:body_end]
            # Where the masked and the mutated body first and last differ: the one edit.
            a = 0
            while a < min(len(edited), len(original)) and edited[a] == original[a]:
                a += 1
            b = 0
            while b < min(len(edited), len(original)) - a and \
                    edited[len(edited) - 1 - b] == original[len(original) - 1 - b]:
                b += 1
            return source[:body_at + a] + edited[a:len(edited) - b] + \
                source[body_at + len(original) - b:]

        sites.append(Site("triton", node.name, text, first - 1, rebuild, offset_of))
    return sites


SITE_KINDS = ("cuda", "triton")


def kernel_sites(source: str, kinds=SITE_KINDS) -> list[Site]:
    return (cuda_sites(source) if "cuda" in kinds else []) + \
        (triton_sites(source) if "triton" in kinds else [])


def solution_mutants(label: str, source: str, operators: list[str],
                     kinds=SITE_KINDS) -> list[ProgramMutant]:
    """The catalogue's mutants of every kernel site of a solution, in site then source order.
    A Triton mutant needing a C++ include is left out (Python has none)."""
    starts = _line_starts(source)
    mutants = []
    for site in kernel_sites(source, kinds):
        for m in _kjudge.mutants(f"{label}:{site.name}", site.text, operators):
            if site.kind == "triton" and m["prelude"]:
                continue
            mutated = site.rebuild(_kjudge.apply_mutant(site.text, m))
            at = site.offset_of(m["offset"])
            line = site.line + m["line"] - 1
            record = dict(m, file=label, line=line,
                          description=re.sub(r"\(line \d+\)$", f"(line {line})",
                                             m["description"]))
            if at is not None:
                record["offset"] = at
                record["column"] = at - starts[line - 1] + 1 if line - 1 < len(starts) else 1
            else:  # a literal with escapes: the line is kept, the offset is the literal's own
                record["offset"] = starts[min(line, len(starts)) - 1]
                record["column"] = 1
            mutants.append(ProgramMutant(record, mutated, label))
    return mutants


# ---- the problems and their solutions ----------------------------------------------------------

@dataclass
class ProblemSet:
    name: str
    path: str                        # problem.py
    solutions: list[str]             # the files with kernel sites


class BadInput(Exception):
    pass


def find_problems(folder: str, kinds=SITE_KINDS) -> list[ProblemSet]:
    """A problem folder (problem.py with solutions/*.py, else candidates/*.py), a folder of
    them, or a suite with manifest.toml ([[problem]] name and path)."""
    if not os.path.isdir(folder):
        raise BadInput(f"{folder}: no such folder")
    listed: list[tuple[str, str]] = []
    manifest = os.path.join(folder, "manifest.toml")
    if os.path.isfile(os.path.join(folder, "problem.py")):
        listed = [(os.path.basename(os.path.abspath(folder)), folder)]
    elif os.path.isfile(manifest):
        import tomllib
        try:
            with open(manifest, "rb") as f:
                entries = tomllib.load(f).get("problem", [])
            listed = [(str(e["name"]), os.path.join(folder, str(e["path"]))) for e in entries]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise BadInput(f"{manifest}: {e}") from None
    else:
        listed = [(d, os.path.join(folder, d)) for d in sorted(os.listdir(folder))
                  if os.path.isfile(os.path.join(folder, d, "problem.py"))]
    problems = []
    for name, path in listed:
        if not os.path.isfile(os.path.join(path, "problem.py")):
            raise BadInput(f"{path}: no problem.py")
        for sub in ("solutions", "candidates"):
            where = os.path.join(path, sub)
            if os.path.isdir(where):
                break
        files = sorted(os.path.join(where, f) for f in os.listdir(where) if f.endswith(".py")) \
            if os.path.isdir(where) else []
        with_sites = [f for f in files if kernel_sites(_read(f), kinds)]
        if with_sites:
            problems.append(ProblemSet(name, os.path.join(path, "problem.py"), with_sites))
    if not problems:
        raise BadInput(f"{folder}: no problem with a solution whose kernels could be mutated "
                       "(problem.py beside solutions/*.py or candidates/*.py)")
    return problems


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


# ---- observing a program on the pool ---------------------------------------------------------

@dataclass
class Observation:
    """A program on the pool: per case (in pool order) its errors against the golden and its
    non-finite count per output, the checkers' judgements, where it faulted."""
    cases: dict = field(default_factory=dict)   # case id -> {"error", "bad", "tolerance"}
    fault: Optional[str] = None                 # why it did not run to the end, and where
    fault_case: Optional[str] = None            # None: before any case (or after all of them)
    compile_error: bool = False
    policy: dict = field(default_factory=dict)  # case id -> its outputs passed kjudge's policy
    verdict: dict = field(default_factory=dict)

    @property
    def kjudge_draw_failed(self) -> bool:
        """kjudge's own cases judged a FAIL on their values."""
        return not all(self.policy.get(c, True) for c in KJUDGE_DRAW)


def output_errors(outputs: list, golden: list) -> tuple[list[float], list[int]]:
    """observe.cpp's measure: per output, the largest |actual - golden| where both are finite,
    and how many elements are not finite where the golden is."""
    import torch
    errors, bad = [], []
    for out, gold in zip(outputs, golden):
        a = out.to(gold.device).double().reshape(-1)
        g = gold.double().reshape(-1)
        if a.numel() != g.numel():
            errors.append(float("inf"))
            bad.append(0)
            continue
        finite_g = torch.isfinite(g)
        finite_a = torch.isfinite(a)
        both = finite_g & finite_a
        diff = (a - g).abs()[both]
        errors.append(float(diff.max()) if diff.numel() else 0.0)
        bad.append(int((finite_g & ~finite_a).sum()))
    return errors, bad


def observe(evaluator, problem: ProblemSet, path: str, build, checkers: list[dict]) -> Observation:
    """One Evaluator.check of the program on the pool, seen case by case."""
    ob = Observation()

    def see(case, outputs) -> None:
        errors, bad = output_errors(outputs, case.golden)
        tolerance = {}
        for ch in checkers:
            if ch["judge"] == "tolerance" and case.id in tolerance_draw(ch):
                tolerance[ch["name"]] = all(
                    _kjudge.judge_by_tolerance(ch["name"], o.detach().cpu().contiguous(),
                                               r.detach().cpu().contiguous())[0]
                    for o, r in zip(outputs, case.reference))
        ob.cases[case.id] = {"error": errors, "bad": bad, "tolerance": tolerance}

    verdict = evaluator.check(problem.path, path, build, on_outputs=see)
    ob.verdict = verdict
    ob.policy = {c["id"]: all(o["outcome"] == "PASS" for o in c["outputs"])
                 for c in verdict.get("cases", [])}
    if verdict["outcome"] == "PASS":
        return ob
    reason, case = verdict["reason"], verdict.get("case")
    failing = next((c for c in verdict.get("cases", []) if c["id"] == case), None)
    judged_on_values = failing is not None and any(
        o["outcome"] != "PASS" and o["reason"] == reason for o in failing["outputs"])
    if judged_on_values:
        return ob  # a value failure: the checkers and the oracle judge the values themselves
    ob.compile_error = reason == "compile_error" or (
        reason == "runtime_error" and "CompilationError" in verdict.get("message", ""))
    ob.fault = f"{reason}: {verdict.get('message', '')[:200]}"
    ob.fault_case = case
    return ob


KJUDGE_DRAW = [f"seed:{s}" for s in Settings().seeds] + \
    [f"scaled:{f:g}" for f in Settings().scalings]


def tolerance_draw(checker: dict) -> list[str]:
    if checker["draw"] == "default":
        return KJUDGE_DRAW
    return [f"seed:{s}" for s in POOL_SEEDS[:checker["seeds"]]]


def accepted_by(checker: dict, ob: Observation, pool_ids: list[str]) -> Optional[bool]:
    """Whether the checker accepts the observed program: every case of its draw ran and was
    judged good by it. A fault on a case it draws (or before any) is its rejection too. None:
    not known, a fault on a case outside its draw ended the run before some of its own (only
    kjudge's draw, whose scaled cases come last, can be left so)."""
    draw = tolerance_draw(checker)
    if ob.fault is not None and (ob.fault_case is None or ob.fault_case in draw):
        return False
    if any(c not in ob.cases for c in draw if c in pool_ids):
        return None
    if checker["judge"] == "problem":
        return all(ob.policy.get(c, False) for c in draw if c in pool_ids)
    return all(ob.cases[c]["tolerance"].get(checker["name"], False)
               for c in draw if c in pool_ids)


@dataclass
class Baseline:
    error: dict = field(default_factory=dict)   # case id -> per output
    bad: dict = field(default_factory=dict)

    def widen(self, ob: Observation) -> None:
        for cid, seen in ob.cases.items():
            e, b = self.error.setdefault(cid, [0.0] * len(seen["error"])), \
                self.bad.setdefault(cid, [0] * len(seen["bad"]))
            for o in range(len(seen["error"])):
                e[o] = max(e[o], seen["error"][o])
                b[o] = max(b[o], seen["bad"][o])


def kill_reason(ob: Observation, case_id: str, base: Baseline) -> Optional[str]:
    """observe.cpp's kill_reason on one input: a fault, more non-finite values than every
    control, or an error over twice the largest of theirs."""
    if ob.fault is not None and (ob.fault_case == case_id or
                                 (ob.fault_case is None and not ob.cases)):
        return ob.fault
    seen = ob.cases.get(case_id)
    if seen is None:
        return None
    for o, (err, bad) in enumerate(zip(seen["error"], seen["bad"])):
        b_err, b_bad = base.error[case_id][o], base.bad[case_id][o]
        if bad > b_bad:
            return f"nonfinite: {bad} elements of output{o} where the golden is finite"
        if err > KILL_FACTOR * b_err:
            return (f"error {err:.3g} in output{o}, {err / b_err:.3g}x the largest of the "
                    "controls") if b_err > 0 else \
                f"error {err:.3g} in output{o}, where every control is exact"
    return None


# ---- the campaign --------------------------------------------------------------------------

@dataclass
class Options:
    folder: str
    checkers: list[str] = field(default_factory=lambda: DEFAULT_CHECKERS.split(","))
    operators: list[str] = field(default_factory=list)
    sites: tuple = SITE_KINDS
    budget: int = 0
    judges: int = 1                          # programs judged at once here
    build_jobs: int = max(1, (os.cpu_count() or 2) - 1)
    state: Optional[str] = None
    fresh: bool = False
    device: Optional[str] = None
    confine: bool = True
    progress: Optional[Callable[[int, int, int], None]] = None
    ray: Optional[str] = None                # a Ray cluster's address ("local"), or None: here
    actors: int = 0                          # judges on Ray (default: one per GPU)
    gpus_per_actor: Optional[float] = None   # default: 1 where the cluster has GPUs


def choose_within_budget(mutants: list[ProgramMutant], budget: int) -> set[str]:
    """The ids to run: all, or `budget` of them taken in turn from each category (each
    category's in a fixed order, by id), so that every category is sampled."""
    if budget <= 0 or budget >= len(mutants):
        return {m.record["id"] for m in mutants}
    by_category: dict[str, list[str]] = {}
    for m in sorted(mutants, key=lambda m: m.record["id"]):
        by_category.setdefault(m.record["category"], []).append(m.record["id"])
    chosen: list[str] = []
    queues = [by_category[c] for c in sorted(by_category)]
    while len(chosen) < budget:
        for q in queues:
            if q and len(chosen) < budget:
                chosen.append(q.pop(0))
    return set(chosen)


@dataclass
class ProblemFacts:
    """What the campaign needs of a problem's pool, made where it is judged: the case ids in
    order, the problem's own Model as a control, and each golden's finite elements."""
    case_ids: list[str]
    reference: Observation
    finite: dict  # case id -> per output, the golden's finite elements (0 for integers)


class ProgramJudge:
    """Judges programs of a KernelBench-format problem on the pool: one Evaluator on the pool's
    cases, and one on kjudge's own draw for a checker the pool's run leaves unknown. It runs
    here (LocalJudges) or in a Ray actor (RayJudges)."""

    def __init__(self, settings: Settings, checkers: list[dict], observe_program=observe):
        from kjudge.kernelbench.evaluate import Evaluator
        self.settings, self.checkers, self.observe_program = settings, checkers, observe_program
        self.evaluator = Evaluator(settings)
        self._own_draw = None

    def facts(self, p: ProblemSet) -> ProblemFacts:
        cases = self.evaluator._problem(p.path).cases
        reference = Observation()
        finite = {}
        for case in cases:
            errors, bad = output_errors(case.reference, case.golden)
            reference.cases[case.id] = {"error": errors, "bad": bad, "tolerance": {}}
            finite[case.id] = [int(g.isfinite().sum()) if g.is_floating_point() else 0
                               for g in case.golden]
        return ProblemFacts([c.id for c in cases], reference, finite)

    def judge(self, p: ProblemSet, path: str, build) -> tuple[Observation, dict]:
        """The program's observation on the pool, and each checker's word on it."""
        ob = self.observe_program(self.evaluator, p, path, build, self.checkers)
        case_ids = [c.id for c in self.evaluator._problem(p.path).cases]
        said = {}
        for c in self.checkers:
            a = accepted_by(c, ob, case_ids)
            if a is None:
                own = self.observe_program(self._draw(), p, path, build, [c])
                a = bool(accepted_by(c, own, [k.id for k in self._draw()._problem(p.path).cases]))
            said[c["name"]] = a
        return ob, said

    def _draw(self):
        if self._own_draw is None:
            from kjudge.kernelbench.evaluate import Evaluator
            self._own_draw = Evaluator(dataclasses.replace(
                self.settings, seeds=Settings().seeds, scalings=Settings().scalings))
        return self._own_draw

    def close(self) -> None:
        self.evaluator.close()
        if self._own_draw is not None:
            self._own_draw.close()


class LocalJudges:
    """The programs judged here by `options.judges` ProgramJudges at once (each its own worker
    per program; a problem's large tensors through the pipes are most of a mutant's seconds),
    their load_inline builds made by a local farm, all asked for at once so that the farm
    builds while the judges observe."""

    def __init__(self, settings: Settings, checkers: list[dict], options: "Options",
                 sources: list[str], observe_program=observe):
        import concurrent.futures
        import queue
        from kjudge.kernelbench.build import BuildFarm
        self.judges = [ProgramJudge(settings, checkers, observe_program)
                       for _ in range(max(1, options.judges))]
        self._free: queue.Queue = queue.Queue()
        for j in self.judges:
            self._free.put(j)
        self._pool = concurrent.futures.ThreadPoolExecutor(len(self.judges), "kjudge-judge")
        self.hardware = _hardware(settings.device)
        self.farm = BuildFarm(options.build_jobs, settings.device, confine=options.confine,
                              require_confinement=options.confine) \
            if any("load_inline" in s for s in sources) else None
        self.builds = {s: self.farm.submit(s) for s in dict.fromkeys(sources)
                       if self.farm is not None and "load_inline" in s}

    def facts(self, p: ProblemSet) -> ProblemFacts:
        return self.judges[0].facts(p)

    def judge_all(self, p: ProblemSet, programs: list[tuple[str, str]]):
        """(path, source) of each program -> its (Observation, accepted), in order."""
        def one(path: str, source: str):
            judge = self._free.get()
            try:
                return judge.judge(p, path, self._built(source))
            finally:
                self._free.put(judge)
        for future in [self._pool.submit(one, path, source) for path, source in programs]:
            yield future.result()

    def _built(self, source: str):
        """The program's build, or None: without it, its judge builds it (as serve does)."""
        future = self.builds.get(source)
        try:
            return future.result() if future is not None else None
        except Exception:  # noqa: BLE001
            return None

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        for j in self.judges:
            j.close()
        if self.farm is not None:
            self.farm.close()


class RayJudges:
    """The programs judged by a pool of Ray actors (one GPU each, or none where the cluster has
    none), each holding a ProgramJudge; a program that calls load_inline is built first by a
    build task on whichever node has a CPU free (kjudge.ray.build_task), and the judging actor
    puts the build in its node's cache. Problems and programs travel as text: no node needs
    another's files."""

    def __init__(self, settings: Settings, checkers: list[dict], options: "Options",
                 observe_program=observe):
        import ray
        from kjudge import ray as kjudge_ray
        kjudge_ray.connect(options.ray)
        gpus_here = int(ray.cluster_resources().get("GPU", 0))
        gpus = options.gpus_per_actor if options.gpus_per_actor is not None else \
            (1.0 if gpus_here else 0.0)
        count = options.actors or max(1, gpus_here)
        actor = ray.remote(_ProgramJudgeActor).options(
            num_gpus=gpus, num_cpus=0 if gpus else 1, max_restarts=-1, max_task_retries=-1)
        self.actors = [actor.remote(settings, checkers, observe_program) for _ in range(count)]
        self.toolchains = ray.get([a.toolchain.remote() for a in self.actors])
        self.hardware = ray.get(self.actors[0].hardware.remote())
        self._ray, self._build_task, self._next = ray, kjudge_ray.build_task, 0

    def facts(self, p: ProblemSet) -> ProblemFacts:
        return self._ray.get(self.actors[0].facts.remote(p.name, _read(p.path)))

    def judge_all(self, p: ProblemSet, programs: list[tuple[str, str]]):
        problem_text = _read(p.path)
        refs = []
        for path, source in programs:  # all submitted first: every actor and CPU busy
            which = self._next % len(self.actors)
            self._next += 1
            built = None
            if "load_inline" in source:
                arch, identity = self.toolchains[which]
                built = self._build_task.remote(source, arch, identity)
            refs.append(self.actors[which].judge.remote(p.name, problem_text,
                                                        os.path.basename(path), source, built))
        for ref in refs:
            yield self._ray.get(ref)

    def close(self) -> None:
        for a in self.actors:
            self._ray.kill(a)
        self._ray.shutdown()


class _ProgramJudgeActor:
    """A ProgramJudge in a Ray actor: the problem and each program written to a folder of its
    own, a load_inline build put in this node's cache (or made here)."""

    def __init__(self, settings: Settings, checkers: list[dict], observe_program):
        import tempfile
        self.folder = tempfile.mkdtemp(prefix="kjudge-mutate-actor-")
        # The actor's own device (Ray gives it its GPU as cuda:0), not the driver's.
        self.judge_ = ProgramJudge(dataclasses.replace(settings, device=None), checkers,
                                   observe_program)
        self._farm = None

    def device(self) -> str:
        return self.judge_.evaluator.device

    def toolchain(self) -> tuple[str, str]:
        from kjudge.kernelbench.build import toolchain_of
        return toolchain_of(self.device())

    def hardware(self) -> str:
        return _hardware(self.device())

    def _problem(self, name: str, text: str) -> ProblemSet:
        folder = os.path.join(self.folder, hashlib.sha256(text.encode()).hexdigest()[:16])
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "problem.py")
        if not os.path.isfile(path):
            with open(path, "w") as f:
                f.write(text)
        return ProblemSet(name, path, [])

    def facts(self, name: str, text: str) -> ProblemFacts:
        return self.judge_.facts(self._problem(name, text))

    def judge(self, name: str, problem_text: str, file: str, source: str, built):
        from kjudge.kernelbench.build import BuildFarm, default_cache_root, store_build
        p = self._problem(name, problem_text)
        path = os.path.join(os.path.dirname(p.path), file)
        with open(path, "w") as f:
            f.write(source)
        build = None
        if "load_inline" in source:
            if self._farm is None:
                self._farm = BuildFarm(1, self.device())
            root = default_cache_root()
            if built is not None and root:
                try:
                    store_build(root, self._farm.identity, source, built)
                except OSError:
                    pass  # no cache here: the farm builds it
            build = self._farm.submit(source).result()
        return self.judge_.judge(p, path, build)


def run_campaign(options: Options, observe_program=observe) -> dict:
    """The campaign as campaign_from_json reads it (kjudge/mutate.hpp): generate, judge the
    solutions (controls and baseline), judge the mutants, each by the strong oracle and the
    checkers."""
    began = time.perf_counter()
    checkers = _kjudge.checkers(options.checkers)
    problems = find_problems(options.folder, options.sites)
    labels = {}
    generated: dict[str, list[ProgramMutant]] = {}
    sources: dict[str, str] = {}
    for p in problems:
        for path in p.solutions:
            label = os.path.relpath(path, options.folder)
            labels[path] = label
            sources[label] = _read(path)
            generated.setdefault(p.name, []).extend(
                solution_mutants(label, sources[label], options.operators, options.sites))
    generate_s = time.perf_counter() - began

    state = _state_folder(options)
    kept = {} if options.fresh else _load_state(state)
    device = default_device(options.device)
    # A mutant that loops forever costs its deadline: the pool's cases are small, 10 s will do.
    settings = Settings(seeds=list(POOL_SEEDS), scalings=list(POOL_SCALINGS), device=device,
                        confine=options.confine, require_confinement=options.confine,
                        run_timeout=10.0, jit_timeout=120.0)
    all_mutants = [m for ms in generated.values() for m in ms]
    # A mutant that is no longer Python costs nothing to judge: the budget is for the others.
    python = {m.record["id"] for m in all_mutants if _is_python(m.source)}
    to_run = choose_within_budget([m for m in all_mutants if m.record["id"] in python],
                                  options.budget) | (
        {m.record["id"] for m in all_mutants} - python)
    first_of: dict[str, str] = {}
    for m in all_mutants:  # a mutated program made twice is judged once
        first_of.setdefault(m.source, m.record["id"])
    wanted = list(sources.values()) + [m.source for m in all_mutants if m.record["id"] in to_run
                                       and first_of[m.source] == m.record["id"]]
    judges = RayJudges(settings, checkers, options, observe_program) if options.ray else \
        LocalJudges(settings, checkers, options, wanted, observe_program)
    context = json.dumps([POOL_SEEDS, POOL_SCALINGS, checkers, device, kjudge.__version__,
                          judges.hardware], default=str)
    pool, controls, results = [], [], []
    forced = False
    execute_began = time.perf_counter()
    done = kills = 0
    total = sum(1 for m in all_mutants if m.record["id"] in to_run and
                first_of[m.source] == m.record["id"])
    try:
        for p in problems:
            facts = judges.facts(p)
            pool_at = len(pool)
            pool += [{"problem": p.name, "case_id": cid, "recipe": cid,
                      "default_case": cid in KJUDGE_DRAW} for cid in facts.case_ids]
            # The solutions: controls, and the baseline with the problem's own Model.
            base = Baseline()
            base.widen(facts.reference)
            judged = judges.judge_all(p, [(path, sources[labels[path]]) for path in p.solutions])
            for path, (ob, accepted) in zip(p.solutions, judged):
                broken = ob.fault or ("" if not ob.kjudge_draw_failed and ob.verdict.get(
                    "outcome") == "PASS" else f"{ob.verdict.get('reason')}: "
                    f"{ob.verdict.get('message', '')[:200]}")
                controls.append({"problem": p.name, "name": labels[path], "broken": broken,
                                 "accepted": accepted})
                if not broken:
                    base.widen(ob)
            # observe.cpp's sanity mutant: outputs all NaN show where a golden has more finite
            # elements than the controls have non-finite ones.
            forced |= any(n > b for cid in facts.case_ids
                          for n, b in zip(facts.finite[cid], base.bad[cid]))
            correct = {c["name"] for c in controls if c["problem"] == p.name and not c["broken"]}
            judged_by = context + "\0" + _read(p.path)  # what a kept result depends on beside it
            runs = []  # (result, its key, its file, its source): the mutants to judge
            for m in generated.get(p.name, []):
                r = _result_shell(m, p)
                results.append(r)
                if m.solution not in correct:
                    r["status_reason"] = "its solution is not correct on the pool"
                elif m.record["id"] not in to_run:
                    pass
                elif first_of[m.source] != m.record["id"]:
                    r.update(status="duplicate", equivalence_class=first_of[m.source],
                             status_reason=f"the same program as {first_of[m.source]}")
                elif m.record["id"] not in python:
                    r.update(status="compile_error", status_reason="not Python")
                    done += 1
                else:
                    key = hashlib.sha256((m.source + "\0" + judged_by).encode()).hexdigest()[:32]
                    if key in kept:
                        r.update(kept[key])
                        done += 1
                    else:
                        runs.append((r, key, _mutant_file(state, m), m.source))
            judged = judges.judge_all(p, [(path, source) for _, _, path, source in runs])
            for (r, key, path, _), (ob, accepted) in zip(runs, judged):
                r.update(_judged(ob, base, facts.case_ids, pool_at, p, path))
                if r["status"] != "compile_error":
                    r["accepted"] = accepted
                _keep_result(state, key, r)
                done += 1
                kills += r["status"] == "killed"
                if options.progress:
                    options.progress(done, total, kills)
    finally:
        judges.close()
    return {"backend": f"kernelbench {device}", "checkers": [c["name"] for c in checkers],
            "pool": pool, "mutants": results, "controls": controls, "dropped_inputs": [],
            "forced_fail_killed": forced,
            "seconds": {"generate": generate_s, "compile": 0.0, "dedup": 0.0,
                        "execute": time.perf_counter() - execute_began},
            "sources": sources}


def _is_python(source: str) -> bool:
    try:
        compile(source, "mutant", "exec")
        return True
    except (SyntaxError, ValueError):
        return False


def _result_shell(m: ProgramMutant, p: ProblemSet) -> dict:
    return dict(m.record, problem=p.name, status="not_run", status_reason="", replay="",
                ptx_hash="", equivalence_class="", accepted={}, killed_on=[], flaky=False,
                witness=None, error_ratios=[])


def _judged(ob: Observation, base: Baseline, case_ids: list[str], pool_at: int,
            p: ProblemSet, path: str) -> dict:
    """The strong oracle's word on the observed mutant: its status, the inputs that kill it,
    the first of them (the witness) and the command that replays it."""
    if ob.compile_error:
        return {"status": "compile_error", "status_reason": (ob.fault or "")[:300]}
    killed_on, reasons, ratios = [], [], []
    for i, cid in enumerate(case_ids):
        why = kill_reason(ob, cid, base)
        if why:
            killed_on.append(pool_at + i)
            reasons.append(f"{why} on {cid}")
        seen = ob.cases.get(cid)
        if seen is not None and ob.fault is None:
            worst = [e / b for e, b in zip(seen["error"], base.error[cid]) if b > 0]
            if worst and all(math.isfinite(x) for x in worst):
                ratios.append([pool_at + i, max(worst)])
    if not killed_on:
        return {"status": "not_killable", "status_reason": "no input of the pool exposed it",
                "error_ratios": ratios}
    witness = killed_on[0]
    seed = case_ids[witness - pool_at]
    replay = f"python -m kjudge.kernelbench {p.path} {path} " + (
        f"--seeds {seed.split(':')[1]} --scalings ''" if seed.startswith("seed:") else
        f"--seeds {POOL_SEEDS[0]} --scalings {seed.split(':')[1]}")
    return {"status": "killed", "status_reason": reasons[0][:300],
            "killed_on": killed_on, "witness": witness, "replay": replay,
            "error_ratios": ratios}


def _hardware(device: str) -> str:
    if not str(device).startswith("cuda"):
        return "cpu"
    import torch
    return torch.cuda.get_device_name(torch.device(device))


# ---- the state folder: finished mutants kept, so a campaign resumes --------------------------

def _state_folder(options: Options) -> str:
    if options.state:
        return private_folder(options.state)
    root = default_cache_root()
    if not root:
        import tempfile
        return tempfile.mkdtemp(prefix="kjudge-mutate-")
    return private_folder(os.path.join(private_folder(root), "mutate-kernelbench"))


def _load_state(state: str) -> dict:
    kept = {}
    try:
        with open(os.path.join(state, "results.jsonl")) as f:
            for line in f:
                try:
                    entry = json.loads(line)
                    kept[entry["key"]] = entry["result"]
                except (ValueError, KeyError, TypeError):
                    continue  # an interrupted write: that mutant runs again
    except OSError:
        pass
    return kept


_JUDGED_FIELDS = ("status", "status_reason", "accepted", "killed_on", "witness", "replay",
                  "error_ratios")


def _keep_result(state: str, key: str, r: dict) -> None:
    with open(os.path.join(state, "results.jsonl"), "a") as f:
        f.write(json.dumps({"key": key, "result": {k: r[k] for k in _JUDGED_FIELDS}}) + "\n")


def _mutant_file(state: str, m: ProgramMutant) -> str:
    """The mutant as a file (the evaluator reads one; the replay command names it)."""
    folder = os.path.join(state, "mutants")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    path = os.path.join(folder, f"{m.record['id']}.py")
    with open(path, "w") as f:
        f.write(m.source)
    return path


# ---- the command ---------------------------------------------------------------------------

def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kjudge mutate --kernelbench", description=(
        "Mutation analysis of checkers on KernelBench-format solutions: their load_inline "
        "kernels and @triton.jit functions mutated with kjudge mutate's catalogue."))
    p.add_argument("folder")
    p.add_argument("--checkers", default=DEFAULT_CHECKERS,
                   help=f"builtin names or checker TOML files (default {DEFAULT_CHECKERS})")
    p.add_argument("--operators", default="", help="operator ids or categories (default: all)")
    p.add_argument("--sites", default="cuda,triton",
                   help="which kernels to mutate: cuda (load_inline sources), triton (default both)")
    p.add_argument("--budget", type=int, default=0, help="mutants run at most, across categories")
    p.add_argument("--build-jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                   help="confined build workers for load_inline (default: the cores less one)")
    p.add_argument("--judges", type=int, default=1,
                   help="programs judged at once on the device (default 1)")
    p.add_argument("--state", default=None, help="where finished mutants are kept (resume)")
    p.add_argument("--fresh", action="store_true", help="forget the kept results")
    p.add_argument("--device", default=None, help="cuda:N (default cuda:0)")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="judge on a Ray cluster (ADDRESS, or local): an actor per GPU, builds "
                        "as tasks on any node's CPUs")
    p.add_argument("--actors", type=int, default=0, help="judging actors on Ray (default: "
                   "one per GPU)")
    p.add_argument("--html", default=None, help="write the HTML report to FILE")
    p.add_argument("--json", default=None, help="write the mutation-testing report JSON to FILE")
    p.add_argument("--jsonl", default=None, help="write one JSON line per mutant to FILE")
    p.add_argument("--campaign", default=None, help="write the campaign (its raw JSON) to FILE")
    return p


def _bad(message: str, code: int = EXIT_BAD_INPUT) -> int:
    print(f"kjudge mutate --kernelbench: {message}", file=sys.stderr)
    return code


def main(argv: Optional[list[str]] = None) -> int:
    args = make_parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.budget < 0 or args.build_jobs < 1 or args.judges < 1:
        return _bad("--budget must be at least 0, --build-jobs and --judges at least 1")
    sites = tuple(k for k in args.sites.split(",") if k)
    if not sites or any(k not in SITE_KINDS for k in sites):
        return _bad(f"--sites {args.sites}: give cuda, triton or both")
    try:
        find_problems(args.folder, sites)
    except BadInput as e:
        return _bad(str(e))
    device = args.device or "cuda:0"
    if not device.startswith("cuda"):
        return _bad(f"--device {device}: the mutants' kernels run on a CUDA device")
    usable, why = _kjudge.cuda_available()
    if not usable:
        return _bad(f"no CUDA device: {why}", EXIT_NO_DEVICE)
    tty = sys.stderr.isatty()
    began = time.perf_counter()

    def progress(done: int, total: int, kills: int) -> None:
        if not tty and done % 10 and done != total:
            return  # a log gets a line every ten mutants
        rate = done / max(time.perf_counter() - began, 1e-9)
        print(f"\r{done} of {total} mutants, {kills} killed, {rate:.2f}/s   ",
              end="" if tty else "\n", file=sys.stderr, flush=True)

    options = Options(args.folder, checkers=[c for c in args.checkers.split(",") if c],
                      operators=[o for o in args.operators.split(",") if o], sites=sites,
                      budget=args.budget, build_jobs=args.build_jobs, judges=args.judges,
                      state=args.state,
                      fresh=args.fresh, device=device, progress=progress, ray=args.ray,
                      actors=args.actors)
    try:
        campaign = run_campaign(options)
    except (BadInput, ValueError, PermissionError) as e:
        return _bad(str(e))
    if tty:
        print(file=sys.stderr)
    text = json.dumps(campaign)
    reports = _kjudge.mutation_reports(text, args.campaign or "the campaign")
    seconds = time.perf_counter() - began
    ran = sum(1 for m in campaign["mutants"] if m["status"] not in ("not_run", "duplicate"))
    print(reports["console"], end="")
    print(f"{ran} mutants judged in {seconds:.1f} s ({ran / seconds:.2f} mutants/s)")
    for path, what in ((args.html, "html"), (args.json, "json"), (args.jsonl, "jsonl"),
                       (args.campaign, None)):
        if path:
            try:
                with open(path, "w") as f:
                    f.write(text if what is None else reports[what])
            except OSError as e:
                return _bad(f"{path}: cannot write: {e.strerror}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
