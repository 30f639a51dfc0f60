"""The KernelBench adapter's judge: a candidate's verdict on a problem, as a few steps. Read the
candidate's source (refused constructs end it there), start its worker, make the problem's
cases (while the candidate compiles), run each case and judge its outputs against the golden
with kjudge's policy (KernelBench's own allclose beside it), account for the kernels one call
launched, then time it beside the reference and re-check what was timed. An `Evaluator` keeps
problems' cases and a spare worker warm between candidates."""
from __future__ import annotations

import math
import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import kjudge
from kjudge.kernelbench import scan
from kjudge.kernelbench.client import Worker, WorkerGone
from kjudge.kernelbench.problem import Problem, ProblemError, build_model, load_problem, \
    make_cases, make_input_sets, make_recorded_case, precise_math
from kjudge.kernelbench.timing import summary, time_calls, valid_times

# The checks whose evidence is gathered in the candidate's own process (its native code could
# blind them; docs/kernelbench.md says how far): the verdict lists them beside trust =
# "python". Everything else (values, inputs, deadlines, the reference's time, the bound on the
# runtime) is decided in the judge. "runtime": the worker's events, bounded by the judge's clock.
CHECKS_IN_WORKER = ("forbidden_op", "output_reused", "side_stream", "decoy_kernel", "runtime")
# Those of them whose evidence passes through Python objects the candidate's Python could
# replace. side_stream and decoy_kernel join them where the kernels were not recorded by CUPTI
# in native code (kjudge._kernel_record) but by torch's profiler.
_CHECKS_IN_PYTHON = ("forbidden_op", "output_reused", "runtime")
_KERNEL_RECORD_CHECKS = ("side_stream", "decoy_kernel")

# The most bytes a candidate's source may have (kj::kMaxCandidateBytes, the native judge's): a
# larger one is its FAIL(compile_error) before the scan reads it.
MAX_CANDIDATE_BYTES = 8 << 20

# What a worker's answer may name as the reason of a FAIL (worker.py).
_WORKER_REASONS = {"compile_error", "runtime_error", "wrong_type"}


@dataclass
class Settings:
    seeds: list[int] = field(default_factory=lambda: [42, 43, 44])
    scalings: list[float] = field(default_factory=lambda: [64.0, 1 / 64])
    init_seed: int = 42
    device: Optional[str] = None          # "cuda:0"; default: cuda:0 where there is one, else cpu
    policy: str = "relative"
    kernelbench_tolerance: float = 1e-2   # KernelBench's allclose, reported beside
    forbid: Optional[list[str]] = None    # torch ops refused; None: the problem's default
    bench: bool = False
    trials: int = 100
    warmup: int = 3
    timing_budget_bytes: int = 1 << 30    # distinct input sets for the timed trials
    backward: bool = False
    record: Optional[str] = None          # a folder of recorded artifacts (record.py)
    compile_timeout: float = 600.0
    run_timeout: float = 60.0
    jit_timeout: float = 120.0            # the first call of a Triton candidate (its compile)
    confine: bool = True
    require_confinement: bool = True
    memory_limit_bytes: int = 32 << 30    # the worker's data memory (RLIMIT_DATA); 0: none
    # "cupti": the device kernels recorded by CUPTI in native code where the worker can open it
    # (else torch's profiler's record, which the verdict says); "torch.profiler": the profiler's
    # record only, a defence off (the tests' way to show what CUPTI's record adds).
    kernel_record: str = "cupti"
    defences_off: list[str] = field(default_factory=list)  # the options that turned one off


class Evaluator:
    """A warm judge: problems' cases are made once (again when the file changes), and a spare
    worker (confined, torch up) waits for the next candidate."""

    def __init__(self, settings: Optional[Settings] = None):
        self.settings = settings or Settings()
        self.device = self.settings.device or default_device()
        self._problems: dict[tuple, Problem] = {}
        self._spare: Optional[Worker] = None
        self._timing: Optional[tuple[Problem, ReferenceTiming]] = None

    def check(self, problem_path: str, candidate_path: str, build=None,
              on_outputs: Optional[Callable] = None) -> dict:
        """The verdict of the candidate file on the problem file, as a dict (see docs).
        `build`: the candidate's builds made beforehand (kjudge.kernelbench.build.Build), which
        its worker loads instead of building. `on_outputs(case, outputs)`: called with each
        case's outputs as the judge received them, after they are judged (the mutation
        campaign's observer, kjudge.kernelbench.mutate)."""
        began = time.perf_counter()
        try:
            source = open(candidate_path).read()
        except OSError as e:
            raise ProblemError(f"{candidate_path}: cannot read the candidate: {e.strerror}") \
                from None
        verdict = _Verdict(problem_path, candidate_path, self.settings.policy)
        verdict.defences_off = list(self.settings.defences_off)
        size = len(source.encode())
        if size > MAX_CANDIDATE_BYTES:
            verdict.fail("compile_error", f"the candidate's source is {size} bytes, over the "
                         f"{MAX_CANDIDATE_BYTES} a candidate may have")
            return verdict.finish(began)
        if self.settings.kernel_record != "cupti":
            verdict.defences_off.append(f"kernel_record={self.settings.kernel_record}")
        refused = scan.forbidden_constructs(source)
        if refused:
            verdict.fail("forbidden_construct", "; ".join(map(str, refused[:3])))
            return verdict.finish(began)
        worker = self._take_worker()
        try:
            self._judge_with(worker, source, problem_path, verdict, build, on_outputs)
        finally:
            worker.close()
        return verdict.finish(began)

    def close(self) -> None:
        if self._spare is not None:
            self._spare.close()
            self._spare = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---- the steps -----------------------------------------------------------------------

    def _judge_with(self, worker: Worker, source: str, problem_path: str, verdict,
                    build=None, on_outputs: Optional[Callable] = None) -> None:
        s = self.settings
        try:
            verdict.isolation["gaps"] = worker.start()
        except WorkerGone as e:
            verdict.error(str(e))
            return
        verdict.isolation["confined"] = not verdict.isolation["gaps"] and s.confine
        problem = self._problem(problem_path)
        # The reference is timed before any of the candidate's code exists (its worker holds
        # none yet, and the last candidate's is gone with its process namespace): nothing of
        # the candidate's can load the machine while the reference runs.
        timing = self._reference_timing(problem) if s.bench else None
        forbidden = s.forbid if s.forbid is not None else problem.default_forbidden()
        verdict.metadata["forbidden_ops"] = forbidden
        verdict.metadata["excused_cases"] = problem.excused
        if build is not None:
            verdict.metadata["build"] = {"key": build.key, "seconds": round(build.seconds, 3),
                                         "from_cache": build.from_cache,
                                         "loaded": build.folder is not None}
        compile_began = time.perf_counter()
        try:
            loaded = worker.load(source, problem.init_inputs, s.init_seed, s.compile_timeout,
                                 weights=problem.weights,
                                 prebuilt=build.folder if build is not None else None)
        except WorkerGone as e:
            verdict.fail("timeout" if e.kind == "timeout" else "compile_error", str(e))
            return
        if build is not None and isinstance(loaded.get("builds"), dict):
            # the worker's own count (its word, like its compile time): which load_inline calls
            # it loaded from the build, which failures it replayed and which it made itself
            verdict.metadata["build"]["calls"] = {
                k: v for k, v in loaded["builds"].items() if type(v) is int}
        if loaded.get("status") != "ready":
            verdict.fail_as_the_worker_says(loaded)
            return
        verdict.compiled = True
        verdict.compile_seconds = time.perf_counter() - compile_began
        try:
            if not self._run_cases(worker, problem, forbidden, source, verdict, on_outputs):
                return
            if not self._account_launches(worker, problem, source, forbidden, verdict):
                return
            if s.backward and not self._check_backward(worker, problem, verdict):
                return
            verdict.passed()
            if timing is not None:
                self._bench(worker, timing, verdict)
        except WorkerGone as e:
            verdict.fail(e.kind, str(e))
        except ProblemError:
            raise
        except Exception as e:  # noqa: BLE001
            # An answer of the wrong shape, or anything else the judge did not foresee: the
            # candidate's code shares the worker's process and can write to its pipe. Never
            # more than the candidate's FAIL, never an ERROR it could choose.
            verdict.fail("runtime_error", "the judge could not use the worker's answer "
                         f"({type(e).__name__}: {e})")

    def _ask(self, worker: Worker, verdict, header: dict, tensors=(), *, timeout: float,
             byte_cap: int):
        """worker.request, its time added to the verdict's metadata["judge_seconds"] under the
        op's name (the round trip, and the worker's own share as it reports it), so a slow check
        says where its time went."""
        began = time.perf_counter()
        answer, outputs = worker.request(header, tensors, timeout=timeout, byte_cap=byte_cap)
        seconds = verdict.metadata.setdefault("judge_seconds", {})
        op = header["op"]
        seconds[op] = seconds.get(op, 0.0) + time.perf_counter() - began
        inside = answer.get("seconds") if isinstance(answer, dict) else None
        if isinstance(inside, (int, float)):
            seconds[f"{op}_in_worker"] = seconds.get(f"{op}_in_worker", 0.0) + float(inside)
        return answer, outputs

    def _run_cases(self, worker: Worker, problem: Problem, forbidden: list[str], source: str,
                   verdict, on_outputs: Optional[Callable] = None) -> bool:
        """Every case, even after one failed, so KernelBench's own verdict beside covers what
        KernelBench would have run; a candidate that breaks the protocol or calls a forbidden
        op ends it."""
        s = self.settings
        for number, case in enumerate(problem.cases):
            slots, tensors = case.wire_arguments()
            # Triton compiles a kernel when it is first launched: a Triton candidate's first
            # call has the JIT's deadline, every other call the run's.
            jit = number == 0 and scan.uses_triton(source)
            answer, returned = self._ask(
                worker, verdict, {"op": "run", "arguments": slots}, tensors,
                timeout=max(s.jit_timeout, s.run_timeout) if jit else s.run_timeout,
                byte_cap=_output_cap(case.reference) + case.input_bytes())
            if answer.get("status") != "ok":
                verdict.fail_as_the_worker_says(answer, case=case.id)
                return False
            count = answer["outputs"]
            outputs, after = returned[:count], returned[count:]
            called = sorted(set(answer.get("ops", {})) & set(forbidden))
            for op, n in answer.get("ops", {}).items():
                verdict.torch_ops[op] = verdict.torch_ops.get(op, 0) + n
            if called:
                verdict.fail("forbidden_op", f"forward called {', '.join(called)}, the op the "
                             "problem is about (done by torch, not by the candidate)", case=case.id)
                return False
            # The inputs as the call left them, compared here with what was sent: in-place work
            # on an input is seen by the judge, not by a helper in the candidate's process.
            changed = [i for i, (a, b) in enumerate(zip(tensors, after)) if not _same_bits(a, b)]
            if changed or len(after) != len(tensors):
                verdict.fail("input_modified", f"forward changed input(s) {changed} of case "
                             f"{case.id}", case=case.id)
            if answer.get("output_reused"):
                verdict.fail("output_reused", f"forward returned the same storage it returned "
                             f"for an earlier case (output {answer['output_reused']})",
                             case=case.id)
            began = time.perf_counter()
            verdict.judge_outputs(case.id, outputs, case.golden, case.reference, s.policy,
                                  s.kernelbench_tolerance)
            seconds = verdict.metadata["judge_seconds"]
            seconds["compare"] = seconds.get("compare", 0.0) + time.perf_counter() - began
            if on_outputs is not None:
                on_outputs(case, outputs)
        return verdict.outcome == "PASS"

    def _account_launches(self, worker: Worker, problem: Problem, source: str,
                          forbidden: list[str], verdict) -> bool:
        own = scan.kernel_names(source)
        case = problem.cases[0]
        slots, tensors = case.wire_arguments()
        answer, _ = self._ask(worker, verdict, {"op": "profile", "arguments": slots}, tensors,
                              timeout=self.settings.run_timeout, byte_cap=0)
        if answer.get("status") != "ok":
            verdict.fail_as_the_worker_says(answer)
            return False
        kernels, current = answer["kernels"], answer["current_stream"]
        # The profiler's own record of the ops (the dispatcher's RecordFunction): a forbidden op
        # hidden from the dispatch recorder (Python dispatch turned off for the call) shows here.
        hidden = sorted(set(answer.get("ops", {})) & set(forbidden) - set(verdict.torch_ops))
        if hidden:
            verdict.fail("forbidden_op", f"forward called {', '.join(hidden)}, the op the problem "
                         "is about, hidden from the dispatch recorder (the profiler's record "
                         "shows it)")
            return False
        launches = _launch_accounting(kernels, current, own)
        launches["kernel_record"] = answer.get("kernel_record")
        if answer.get("kernel_record_gap"):
            launches["kernel_record_gap"] = str(answer["kernel_record_gap"])[:300]
        verdict.launches = launches
        if current is None and launches["kernel_record"] is not None:
            verdict.fail("side_stream", "the kernel record holds not even the judge's marker "
                         "kernel: recording was switched off during the forward")
            return False
        if current is None:
            return True  # the CPU: no device kernels to account for
        dropped = answer.get("dropped", 0)
        if not isinstance(dropped, int) or dropped:
            verdict.fail("side_stream", f"the kernel record lost {dropped} kernel(s) of one "
                         "forward (its buffers filled): their streams are unknown")
            return False
        if launches["side_streams"]:
            verdict.fail("side_stream", f"kernels ran on stream(s) {launches['side_streams']}, "
                         f"not the current stream {current}: their time escapes the timed "
                         "stream (" + ", ".join(k["name"][:60] for k in kernels
                                                if k["stream"] != current)[:300] + ")")
            return False
        if own and not launches["own_kernels_ran"]:
            verdict.fail("decoy_kernel", f"none of the candidate's kernels ({', '.join(own)}) "
                         "ran; the work was done by " +
                         (", ".join(sorted({k['name'][:60] for k in kernels}))[:300] or
                          "no kernel at all"))
            return False
        return True

    def _check_backward(self, worker: Worker, problem: Problem, verdict) -> bool:
        from kjudge.kernelbench.backward import gradients_of_model
        s = self.settings
        for case in problem.cases[: 1 if s.record else len(s.seeds)]:
            truth = gradients_of_model(problem, case, s.init_seed, self.device)
            slots, tensors = case.wire_arguments()
            answer, grads = self._ask(
                worker, verdict,
                {"op": "backward", "arguments": slots, "cotangents": len(truth.cotangents)},
                tensors + truth.cotangents, timeout=s.run_timeout,
                byte_cap=_output_cap(truth.reference))
            if answer.get("status") != "ok":
                verdict.fail_as_the_worker_says(answer, case=case.id)
                return False
            if answer["names"] != truth.names:
                verdict.fail("wrong_shape", f"gradients for {answer['names']}, the problem has "
                             f"{truth.names}", case=case.id)
                return False
            if not verdict.judge_outputs(f"{case.id}:backward", grads, truth.golden,
                                         truth.reference, s.policy, s.kernelbench_tolerance,
                                         names=truth.names):
                return False
        return True

    def _bench(self, worker: Worker, timing: "ReferenceTiming", verdict) -> None:
        """The candidate's time by the reference's loop on the same input sets, one set a call;
        the outputs of the judged trials checked again. The times come from the candidate's
        process: the judge's clock around the request bounds them, and decides where they
        disagree (decide_runtime)."""
        s = self.settings
        slots_all, tensors_all, sizes = [], [], []
        for case in timing.sets:
            slots, tensors = case.wire_arguments()
            slots_all = slots
            tensors_all += tensors
            sizes.append(len(tensors))
        self._ask(worker, verdict,
                  {"op": "timing_sets", "arguments": slots_all, "set_sizes": sizes},
                  tensors_all, timeout=s.run_timeout, byte_cap=0)
        began = time.perf_counter()
        answer, _ = self._ask(worker, verdict, {"op": "time", "warmup": timing.warmup,
                                                "keep": timing.judged},
                              timeout=s.run_timeout + len(timing.sets) * 10.0, byte_cap=0)
        wall_ms = (time.perf_counter() - began) * 1e3 / len(timing.sets)
        if answer.get("status") != "ok":
            verdict.fail_as_the_worker_says(answer)
            return
        times = answer.get("times_ms")
        if not valid_times(times, timing.trials):
            verdict.fail("timing_tampered", f"the worker's times are not {timing.trials} "
                         f"positive finite milliseconds: {str(times)[:200]}")
            return
        cases = [timing.sets[timing.warmup + t] for t in timing.judged]
        answer, outputs = self._ask(worker, verdict, {"op": "timed_outputs"},
                                    timeout=s.run_timeout,
                                    byte_cap=sum(_output_cap(c.reference) for c in cases))
        if answer.get("status") != "ok":
            verdict.fail_as_the_worker_says(answer)
            return
        counts = answer["output_counts"]
        if len(counts) != len(cases):
            verdict.fail("runtime_error", f"{len(counts)} timed outputs, {len(cases)} asked for")
            return
        for case, count in zip(cases, counts):
            got, outputs = outputs[:count], outputs[count:]
            if not verdict.judge_outputs(f"{case.id}:timed", got, case.golden, case.reference,
                                         s.policy, s.kernelbench_tolerance):
                verdict.reason = "timed_output_mismatch"
                return
        verdict.timed(decide_runtime({**summary(times), "wall_ms_per_call": wall_ms},
                                     timing.stats), timing.stats)

    def _reference_timing(self, problem: Problem) -> "ReferenceTiming":
        """The reference's time with the input sets every candidate is then timed on, measured
        once for a run of candidates on one problem. Only the last problem's is kept: its sets
        and their goldens take up to the timing budget, on the device too."""
        if self._timing is None or self._timing[0] is not problem:
            self._timing = None  # the last problem's sets go before the next ones are made
            self._timing = (problem, time_reference(problem, self.settings, self.device))
        return self._timing[1]

    # ---- warm state ----------------------------------------------------------------------

    def _problem(self, path: str) -> Problem:
        s = self.settings
        fresh = load_problem(path)
        key = (os.path.abspath(path), fresh.digest, tuple(s.seeds), tuple(s.scalings),
               s.init_seed, self.device, s.record)
        if key not in self._problems:
            if s.record:
                make_recorded_case(fresh, s.record, init_seed=s.init_seed,
                                   device=_torch_device(self.device))
            else:
                make_cases(fresh, seeds=s.seeds, scalings=s.scalings, init_seed=s.init_seed,
                           device=_torch_device(self.device))
            self._problems[key] = fresh
        return self._problems[key]

    def _take_worker(self) -> Worker:
        worker = self._spare or self._new_worker()
        self._spare = self._new_worker()
        return worker

    def _new_worker(self) -> Worker:
        s = self.settings
        return Worker(self.device, confine=s.confine, require_confinement=s.require_confinement,
                      memory_bytes=s.memory_limit_bytes, kernel_record=s.kernel_record)


@dataclass
class ReferenceTiming:
    sets: list           # warm-up sets first, then one per trial (Cases; judged ones have truth)
    warmup: int
    judged: list[int]    # the trials whose outputs are checked again
    stats: dict          # the reference's summary, with the judge's wall clock per call

    @property
    def trials(self) -> int:
        return len(self.sets) - self.warmup


def time_reference(problem: Problem, s: Settings, device: str) -> ReferenceTiming:
    """Input sets for every timed call, each call's own, as many as the budget holds (fewer
    trials rather than a set seen twice: a candidate could answer a repeat from a cache), from
    seeds drawn here (no candidate knows them ahead), up to 16 of them judged again; then the
    reference timed on them by the loop the candidate's worker runs."""
    import torch
    per_set = max(problem.cases[0].input_bytes(), 1)
    count = min(s.trials + s.warmup, max(2, s.timing_budget_bytes // per_set))
    warmup = min(s.warmup, count - 1)
    trials = count - warmup
    judged = sorted({round(i * (trials - 1) / max(min(16, trials) - 1, 1))
                     for i in range(min(16, trials))})
    seeds = [secrets.randbelow(1 << 62) for _ in range(count)]
    sets = make_input_sets(problem, seeds, init_seed=s.init_seed, device=_torch_device(device),
                           judged={warmup + t for t in judged})
    model = build_model(problem, s.init_seed, device)
    on_device = [[a.to(device) if isinstance(a, torch.Tensor) else a for a in c.arguments]
                 for c in sets]
    with precise_math(), torch.no_grad():
        began = time.perf_counter()
        times, _ = time_calls(lambda xs: model(*xs), on_device, warmup=warmup)
        wall_ms = (time.perf_counter() - began) * 1e3 / count
    return ReferenceTiming(sets, warmup, judged, {**summary(times), "wall_ms_per_call": wall_ms})


def decide_runtime(candidate: dict, reference: dict) -> dict:
    """The candidate's timing summary with `decided_by`. Its times were read in its own process;
    the judge's clock around the timing request bounds them from outside: its wall time per
    call, less the loop's own cost per call (measured on the reference, the same loop in the
    judge), is at most what the calls took. Where the reported mean is under that bound by more
    than the loops' noise, the bound is the runtime ("judge_clock"): a forged or slowed clock
    gains nothing past the noise."""
    overhead = max(reference["wall_ms_per_call"] - reference["mean"], 0.0)
    bound = candidate["wall_ms_per_call"] - overhead
    slack = max(0.25 * bound, 0.5 * overhead, 0.02)
    if bound - candidate["mean"] > slack:
        return {**candidate, "reported_mean": candidate["mean"], "mean": bound,
                "decided_by": "judge_clock"}
    return {**candidate, "decided_by": "worker_events"}


def judge_fault_verdict(problem: str, candidate: str, policy: str, error: BaseException) -> dict:
    """The verdict of a candidate the judge broke on (an exception nothing else caught): that
    candidate's FAIL, naming the exception."""
    verdict = _Verdict(problem, candidate, policy)
    verdict.fail("runtime_error", f"the judge failed on this candidate: "
                 f"{type(error).__name__}: {str(error)[:500]}")
    return verdict.finish(time.perf_counter())


def check(problem: str, candidate: str, **settings) -> dict:
    """One verdict with a judge of its own (an Evaluator for many candidates)."""
    with Evaluator(Settings(**settings)) as judge:
        return judge.check(problem, candidate)


class _Verdict:
    """The verdict as it is built: kjudge's outcome and reason, KernelBench's fields beside."""

    def __init__(self, problem: str, candidate: str, policy: str):
        self.problem, self.candidate, self.policy = problem, candidate, policy
        self.outcome, self.reason, self.message = "PASS", "none", ""
        self.failed_case: Optional[str] = None
        self.compiled = False
        self.correct = False
        self.kernelbench_correct = True
        self.cases: list[dict] = []
        self.launches: dict = {}
        self.torch_ops: dict[str, int] = {}
        self.metadata: dict = {}
        self.isolation: dict = {"gaps": "", "confined": False, "network": "none",
                                "environment": "empty"}
        self.runtime = self.ref_runtime = None
        self.compile_seconds: Optional[float] = None
        self.defences_off: list[str] = []

    def fail(self, reason: str, message: str, case: Optional[str] = None) -> None:
        if self.outcome == "PASS":
            self.outcome, self.reason, self.message, self.failed_case = "FAIL", reason, \
                message.strip(), case
        self.correct = False

    def fail_as_the_worker_says(self, answer: dict, case: Optional[str] = None) -> None:
        """A FAIL from the worker's answer. The worker runs the candidate's code, which may write
        to the pipe itself: only the reasons a worker gives are taken, anything else is a
        runtime_error, and it is never more than a FAIL."""
        status = answer.get("status")
        reason = status if status in _WORKER_REASONS else "runtime_error"
        message = answer.get("message")
        self.fail(reason, message if isinstance(message, str) else
                  f"the worker answered {str(answer)[:200]}", case=case)

    def error(self, message: str) -> None:
        self.outcome, self.reason, self.message = "ERROR", "internal", message

    def passed(self) -> None:
        self.correct = self.outcome == "PASS"

    def judge_outputs(self, case_id: str, outputs: list, golden: list, reference: list,
                      policy: str, tolerance: float, names: Optional[list[str]] = None) -> bool:
        """Each output against its golden and reference; False (and the verdict a FAIL) at the
        first that fails. KernelBench's allclose is recorded beside, never decides."""
        import torch
        record = {"id": case_id, "outputs": []}
        self.cases.append(record)
        if len(outputs) != len(reference):
            self.fail("wrong_shape", f"{len(outputs)} outputs, the problem has "
                      f"{len(reference)}", case=case_id)
            return False
        ok = True
        for i, (out, gold, ref) in enumerate(zip(outputs, golden, reference)):
            name = names[i] if names else f"output{i}"
            if tuple(out.shape) != tuple(ref.shape):
                self.fail("wrong_shape", f"{name}: shape {tuple(out.shape)}, the reference's is "
                          f"{tuple(ref.shape)}", case=case_id)
                self.kernelbench_correct = False
                return False
            if out.dtype != ref.dtype:
                self.fail("wrong_dtype", f"{name}: {out.dtype}, the reference's is {ref.dtype}",
                          case=case_id)
                self.kernelbench_correct = False
                return False
            out = out.to(ref.device)  # the worker's bytes, judged where the golden lies
            kb = bool(torch.allclose(out, ref, atol=tolerance, rtol=tolerance))
            if case_id.startswith(("seed:", "recorded")):  # KernelBench's own inputs, unscaled
                self.kernelbench_correct &= kb
            report = kjudge.compare(out, ref, golden=gold, policy=policy)
            record["outputs"].append({"name": name, "outcome": report.outcome,
                                      "reason": report.reason, "message": report.message,
                                      "kernelbench_allclose": kb, "finding": report.output})
            if not report.passed and ok:
                self.fail(report.reason, f"case {case_id}, {name}: {report.message}",
                          case=case_id)
                ok = False
        return ok

    def kernelbench_verdict(self) -> Optional[bool]:
        """What KernelBench's allclose says over the cases run; None where the check ended before
        values were compared for another reason (a forbidden construct or op: KernelBench has
        no such rule, so its verdict on them is not known here)."""
        if self.reason in ("forbidden_construct", "forbidden_op", "decoy_kernel", "side_stream") \
                and not self.cases:
            return None
        return self.compiled and bool(self.cases) and self.kernelbench_correct and \
            self.reason not in ("runtime_error", "timeout", "compile_error")

    def checks_in_python(self) -> list[str]:
        """The checks whose evidence a candidate's Python could reach: the kernel checks too
        where torch's profiler, not CUPTI, recorded the kernels."""
        profiler = self.launches.get("kernel_record") == "torch.profiler"
        return [c for c in CHECKS_IN_WORKER
                if c in _CHECKS_IN_PYTHON or (profiler and c in _KERNEL_RECORD_CHECKS)]

    def timed(self, candidate: dict, reference: dict) -> None:
        self.runtime, self.ref_runtime = candidate, reference

    def finish(self, began: float) -> dict:
        """The verdict as JSON-ready data: KernelBench's field names first, kjudge's after."""
        runtime = self.runtime["mean"] if self.runtime else -1.0
        ref_runtime = self.ref_runtime["mean"] if self.ref_runtime else -1.0
        speedup = ref_runtime / runtime if runtime > 0 and ref_runtime > 0 else None
        return {
            "compiled": self.compiled,
            "correctness": self.outcome == "PASS",
            "runtime": runtime,
            "ref_runtime": ref_runtime,
            "metadata": {**self.metadata, "hardware": _hardware(),
                         "kernelbench_tolerance_note": "torch.allclose(atol = rtol = "
                         "kernelbench_tolerance) against the same-precision reference"},
            "outcome": self.outcome,
            "reason": self.reason,
            "message": self.message,
            "case": self.failed_case,
            "kernelbench_correctness": self.kernelbench_verdict(),
            "policy": self.policy,
            "speedup": speedup,
            "runtime_stats": self.runtime,
            "ref_runtime_stats": self.ref_runtime,
            "cases": self.cases,
            "launches": self.launches,
            "torch_ops": self.torch_ops,
            "problem": self.problem,
            "candidate": self.candidate,
            "trust": "python",
            "checks_in_worker": list(CHECKS_IN_WORKER),
            "checks_in_python": self.checks_in_python(),
            # A verdict made with a defence off says so: a score must not pass for one made
            # with all of them.
            "defences_off": self.defences_off,
            "isolation": self.isolation,
            "kjudge_version": kjudge.__version__,
            "seconds": round(time.perf_counter() - began, 3),
            "compile_seconds": None if self.compile_seconds is None else
            round(self.compile_seconds, 3),
        }


def _launch_accounting(kernels: list[dict], current, own: list[str]) -> dict:
    """Which kernels ran, whose they are, and how much of the device time is the candidate's."""
    total = sum(k["us"] for k in kernels)
    mine = [k for k in kernels if any(name in k["name"] for name in own)]
    return {
        "kernels": [{"name": k["name"][:200], "stream": k["stream"], "us": round(k["us"], 3),
                     "own": k in mine} for k in kernels[:64]],
        "kernel_count": len(kernels),
        "own_kernel_names": own,
        "own_kernels_ran": bool(mine),
        "time_coverage": (sum(k["us"] for k in mine) / total) if total > 0 else None,
        "current_stream": current,
        "side_streams": sorted({k["stream"] for k in kernels if k["stream"] != current})
        if current is not None else [],
    }


def _same_bits(a, b) -> bool:
    """Equal to the bit, NaN included (torch.equal calls NaN unequal to itself)."""
    import torch
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.equal(a.contiguous().view(-1).view(torch.uint8),
                       b.contiguous().view(-1).view(torch.uint8))


def _output_cap(reference: list) -> int:
    return 2 * sum(t.numel() * 8 for t in reference) + (1 << 20)


def default_device(device: Optional[str] = None) -> str:
    if device:
        return device
    import torch
    return "cuda:0" if torch.cuda.is_available() else "cpu"


def _torch_device(device: str):
    import torch
    return torch.device(device)


def _hardware() -> str:
    import torch
    return torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu"
