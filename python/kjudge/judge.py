"""kjudge.Judge: candidate kernels judged from Python, for a reinforcement-learning loop.

A Judge keeps one `kjudge serve --unordered` process running (docs/cli.md "kjudge serve") and
speaks its JSON-lines protocol: each request carries an id, a reader thread hands each answer to
the future of its id, and a monitor thread enforces every request's deadline and notices a
server that died. Problems, compile caches and the oracle's cases stay warm in that process from
one candidate to the next, which is what makes judging thousands of generated kernels cheap.
The results are typed (CheckResult, BenchResult) and always say whether the judge could judge at
all (`eligible`): a trainer must drop a sample the judge could not judge, never score it as the
candidate's failure. `Reward` maps a result to a float (docs/python-judge.md has the table).

    with kjudge.Judge(backend="host") as judge:
        result = judge.check("problems/relu", source=generated_text)
        r = kjudge.reward(result)        # 1.0 for a verified pass, 0.0 otherwise
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import difflib
import itertools
import json
import math
import os
import signal
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

__all__ = ["Judge", "CheckResult", "BenchResult", "JudgeError", "JudgeRequestError", "Reward",
           "reward", "CHECK_OPTIONS", "BENCH_OPTIONS"]

PathLike = Union[str, "os.PathLike[str]"]

# The request options `kjudge serve` accepts (docs/cli.md "kjudge serve": "the options of
# `check` and `bench` are ..."), with what each must be. Checked here so that a misspelt option
# raises before anything is sent, and a wrong type is named by the caller's own keyword.
# test_judge.py keeps these two tables and the docs' list equal.
CHECK_OPTIONS: dict[str, str] = {
    "case": "a case id (str)",
    "fail_fast": "bool",
    "redact_hidden": "bool",
    "backend": "'auto', 'cuda' or 'host'",
    "exact_bounds": "bool",
    "race_detection": "bool",
    "exact_percentiles": "bool",
    "stats": "bool",
    "against": "the old kernel's path",
}
BENCH_OPTIONS: dict[str, str] = {
    **CHECK_OPTIONS,
    "runs": "an int >= 1 (host backend: timed runs per public case)",
    "slo_p99": "a positive number of milliseconds",
    "min_time": "0 to 3600 seconds",
    "max_time": "0 to 3600 seconds",
    "noise": "a number between 0 and 1",
    "rotation": "an int from 1 to 8",
}

# Answer kinds of `kjudge serve` that mean the request or the problem is wrong: the caller's
# mistake, which no candidate could pass, so strict calls raise it.
REQUEST_ERROR_KINDS = frozenset({"bad_request", "spec_error"})


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class JudgeError:
    """Why a request got no verdict. kind: "bad_request" (the request is malformed: a field
    missing, of the wrong type, a candidate file that does not exist), "spec_error" (the
    problem does not load, or its policy is looser than its card.toml), "internal" (kjudge's
    own fault), or this client's "timeout" (no answer within the request's deadline; the server
    was restarted), "judge_died" (the server exited while the request was in flight) and
    "closed" (the Judge was closed before the request was sent)."""
    kind: str
    message: str


class JudgeRequestError(ValueError):
    """A bad_request or spec_error answer, raised by the synchronous and async calls of a strict
    Judge: the request or the problem is wrong, so no candidate can be judged by it. `.result`
    holds the CheckResult (or BenchResult) with its `error`."""

    def __init__(self, result: "CheckResult"):
        assert result.error is not None
        super().__init__(f"kjudge {result.error.kind}: {result.error.message}")
        self.result = result


def _number(value: Any) -> Optional[float]:
    """A number of a report: JSON numbers as they are, "nan"/"inf"/"-inf" strings (how the
    report writes non-finite values) through float(), null as None."""
    if value is None:
        return None
    return float(value)


@dataclass
class CheckResult:
    """One candidate judged by `check` (or the check pass of `bench`).

    outcome: "PASS", "FAIL" (the candidate's fault), "ERROR" (the problem's or kjudge's, or no
    verdict at all: see `error`), "SKIP" (could not run). reason: the verdict's ("none",
    "mismatch", "compile_error", ...; docs/design.md), or the error's kind when there is no
    verdict. `eligible` is False whenever the judge could not judge (ERROR, SKIP, an error, a
    verdict with defences disabled): such a sample is dropped, not scored. The figures come
    from the verdict (docs/cli.md "JSON reports"); `verdict` is the whole JSON object."""
    outcome: str
    reason: str
    message: str
    fault: str = "kjudge"  # the verdict's `class`: none, candidate, problem, kjudge, skip
    eligible: bool = False
    compiled: bool = False
    cases_total: int = 0
    cases_passed: int = 0
    fraction_passed: float = 0.0
    first_failing_case: Optional[str] = None
    replay: Optional[str] = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    # Worst over every output and case of log10(error / bound), the worse of the max and rms
    # tests: <= 0 passes, -12 is exact; None when nothing was compared.
    log_error_ratio: Optional[float] = None
    log_error_ratios: dict[str, float] = field(default_factory=dict)  # per output
    confidence: float = 1.0  # host backend: the fraction of the candidate's lines its cases ran
    skips: list[str] = field(default_factory=list)
    verdict: Optional[dict[str, Any]] = None
    error: Optional[JudgeError] = None
    id: Any = None
    wall_s: float = 0.0  # from the request sent to its answer, as this client saw it

    @property
    def passed(self) -> bool:
        """True for a verified pass: a PASS verdict, no error."""
        return self.error is None and self.outcome == "PASS"

    @property
    def failed(self) -> bool:
        """True when the candidate is at fault: a FAIL verdict (compile error, mismatch, crash,
        timeout of a run, ...). Not true for ERROR, SKIP or a judge error."""
        return self.error is None and self.outcome == "FAIL"

    def __bool__(self) -> bool:
        return self.passed

    def raise_for_error(self) -> "CheckResult":
        """Raise JudgeRequestError for a bad_request or spec_error answer; return self."""
        if self.error is not None and self.error.kind in REQUEST_ERROR_KINDS:
            raise JudgeRequestError(self)
        return self

    def __repr__(self) -> str:
        detail = f": {self.message}" if self.message else ""
        if len(detail) > 200:
            detail = detail[:197] + "..."
        return f"<kjudge.{type(self).__name__} {self.outcome}({self.reason}){detail}>"

    @classmethod
    def from_answer(cls, answer: Mapping[str, Any], wall_s: float = 0.0) -> "CheckResult":
        """The result of one answer of `kjudge serve`: {"id", "verdict"} or {"id", "error"}."""
        if "error" in answer:
            error = answer["error"] or {}
            return cls.from_error(JudgeError(str(error.get("kind", "internal")),
                                             str(error.get("message", ""))),
                                  id=answer.get("id"), wall_s=wall_s)
        return cls.from_verdict(answer["verdict"], id=answer.get("id"), wall_s=wall_s)

    @classmethod
    def from_error(cls, error: JudgeError, *, id: Any = None, wall_s: float = 0.0):
        """A result without a verdict: outcome ERROR, reason the error's kind, not eligible."""
        return cls(outcome="ERROR", reason=error.kind, message=error.message,
                   fault="problem" if error.kind in REQUEST_ERROR_KINDS else "kjudge",
                   eligible=False, error=error, id=id, wall_s=wall_s)

    @classmethod
    def from_verdict(cls, verdict: Mapping[str, Any], *, id: Any = None, wall_s: float = 0.0):
        """A result read from a verdict object (`kjudge check --json`'s schema)."""
        reward_fields = verdict.get("reward") or {}
        outcome = verdict.get("outcome", "ERROR")
        # A verdict with a defence turned off judges nothing (serve refuses such switches;
        # checked all the same, since a reward must never rest on one).
        eligible = (bool(reward_fields.get("eligible", outcome in ("PASS", "FAIL")))
                    and not verdict.get("defences_disabled"))
        result = cls(
            outcome=outcome,
            reason=verdict.get("reason", "internal"),
            message=verdict.get("message", ""),
            fault=verdict.get("class", "kjudge"),
            eligible=eligible,
            compiled=bool(verdict.get("compiled", False)),
            cases_total=int(verdict.get("cases_total", 0)),
            cases_passed=int(verdict.get("cases_passed", 0)),
            fraction_passed=_number(verdict.get("fraction_passed")) or 0.0,
            first_failing_case=verdict.get("first_failing_case"),
            replay=verdict.get("replay"),
            cases=list(verdict.get("cases") or []),
            log_error_ratio=_number(reward_fields.get("log_error_ratio")),
            log_error_ratios={k: float(v) for k, v in
                              (verdict.get("log_error_ratio") or {}).items()},
            confidence=_number(reward_fields.get("confidence", 1.0)),
            skips=list(verdict.get("skips") or []),
            verdict=dict(verdict), id=id, wall_s=wall_s)
        result._read_bench(verdict)
        return result

    def _read_bench(self, verdict: Mapping[str, Any]) -> None:
        """BenchResult reads its timing fields here; a check has none."""


@dataclass(repr=False)
class BenchResult(CheckResult):
    """One candidate judged and timed by `bench`. A candidate gets a runtime only when it
    passes; every figure is in milliseconds of `timer` ("cuda_events": GPU time after an L2
    flush; "host_cpu": CPU time of the launches on the host backend, not a GPU time)."""
    runtime_ms: Optional[float] = None      # sum over the timed cases of the medians
    ref_runtime_ms: Optional[float] = None  # the reference's, alike
    speedup: Optional[float] = None         # ref_runtime_ms / runtime_ms
    speedup_ci: Optional[tuple[float, float]] = None  # its 95% interval (GPU)
    timer: Optional[str] = None
    baseline: Optional[str] = None          # the problem's baseline's name, where one fits
    baseline_runtime_ms: Optional[float] = None
    baseline_speedup: Optional[float] = None
    fraction_of_floor: Optional[float] = None
    latency: Optional[dict[str, Any]] = None

    def _read_bench(self, verdict: Mapping[str, Any]) -> None:
        self.runtime_ms = _number(verdict.get("runtime"))
        self.ref_runtime_ms = _number(verdict.get("ref_runtime"))
        self.speedup = _number(verdict.get("speedup"))
        ci = verdict.get("speedup_ci")
        self.speedup_ci = (float(ci[0]), float(ci[1])) if ci else None
        self.timer = verdict.get("timer")
        self.baseline = verdict.get("baseline")
        self.baseline_runtime_ms = _number(verdict.get("baseline_runtime"))
        self.baseline_speedup = _number(verdict.get("baseline_speedup"))
        self.fraction_of_floor = _number(verdict.get("fraction_of_floor"))
        self.latency = verdict.get("latency")


# ---------------------------------------------------------------------------------------------
# The reward


@dataclass(frozen=True)
class Reward:
    """A result as a float reward (docs/python-judge.md "The reward").

    Anything but a verified pass scores `floor`: a FAIL of any reason, an ERROR, a SKIP, a
    judge error (timeout, a server that died, a bad request), a bench whose check failed. A
    pass scores `pass_reward`, plus

    - margin shaping, `margin_weight * min(1, -log_error_ratio / margin_decades)`: up to
      `margin_weight` more for outputs far inside their bound (the verdict's worst
      log10(error / bound) over every output and case; exact outputs read -12), nothing when
      nothing was compared;
    - speedup shaping, `speedup_weight * clamp(log2(speedup), -speedup_cap, speedup_cap)`:
      each doubling over the reference (or over `baseline_ms`, given to the call) adds
      `speedup_weight`, each halving takes it away; nothing when the result has no runtime (a
      check, or a bench that timed nothing).

    The construction refuses weights that could bring a pass to `floor` or under
    (`pass_reward - speedup_weight * speedup_cap > floor`), so no shaping ever ranks a failed
    or unverified run with or above a passing one. The defaults give 1.0 for a pass, 0.0 for
    anything else."""
    floor: float = 0.0
    pass_reward: float = 1.0
    margin_weight: float = 0.0
    margin_decades: float = 2.0
    speedup_weight: float = 0.0
    speedup_cap: float = 3.0  # in log2 units: 3 is 8x either way

    def __post_init__(self) -> None:
        for name in ("floor", "pass_reward", "margin_weight", "margin_decades", "speedup_weight",
                     "speedup_cap"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"Reward.{name} must be finite")
        if self.margin_weight < 0 or self.speedup_weight < 0 or self.speedup_cap < 0:
            raise ValueError("Reward: margin_weight, speedup_weight and speedup_cap must be >= 0")
        if self.margin_decades <= 0:
            raise ValueError("Reward.margin_decades must be > 0")
        worst_pass = self.pass_reward - self.speedup_weight * self.speedup_cap
        if not worst_pass > self.floor:
            raise ValueError(
                f"Reward: the slowest pass would score {worst_pass}, not above floor "
                f"{self.floor}: raise pass_reward or lower speedup_weight or speedup_cap")

    def margin_bonus(self, result: CheckResult) -> float:
        """The margin term of a passing result (0 without margin shaping or a ratio)."""
        ratio = result.log_error_ratio
        if self.margin_weight == 0 or ratio is None or math.isnan(ratio):
            return 0.0
        return self.margin_weight * min(1.0, max(0.0, -ratio / self.margin_decades))

    def speedup_bonus(self, result: CheckResult, baseline_ms: Optional[float] = None) -> float:
        """The speedup term of a passing result: 0 without speedup shaping or a runtime."""
        if self.speedup_weight == 0:
            return 0.0
        speedup = _speedup_of(result, baseline_ms)
        if speedup is None:
            return 0.0
        step = min(self.speedup_cap, max(-self.speedup_cap, math.log2(speedup)))
        return self.speedup_weight * step

    def __call__(self, result: CheckResult, *, baseline_ms: Optional[float] = None) -> float:
        """The reward of one result; baseline_ms (milliseconds of the bench's timer) replaces
        the reference's runtime as what the speedup is measured against."""
        if baseline_ms is not None and not (baseline_ms > 0 and math.isfinite(baseline_ms)):
            raise ValueError(f"baseline_ms must be a positive number of milliseconds, "
                             f"not {baseline_ms!r}")
        if not (result.passed and result.eligible):
            return self.floor
        return (self.pass_reward + self.margin_bonus(result)
                + self.speedup_bonus(result, baseline_ms))


def _speedup_of(result: CheckResult, baseline_ms: Optional[float]) -> Optional[float]:
    """The result's speedup against baseline_ms, else the verdict's (reference / candidate);
    None when the result has no usable runtime."""
    if not isinstance(result, BenchResult):
        return None
    if baseline_ms is not None:
        runtime = result.runtime_ms
        if runtime is None or not (runtime > 0) or not math.isfinite(runtime):
            return None
        return baseline_ms / runtime
    s = result.speedup
    return s if s is not None and s > 0 and math.isfinite(s) else None


def reward(result: CheckResult, *, baseline_ms: Optional[float] = None,
           floor: float = 0.0, pass_reward: float = 1.0, margin_weight: float = 0.0,
           margin_decades: float = 2.0, speedup_weight: float = 0.0,
           speedup_cap: float = 3.0) -> float:
    """`Reward(...)(result, baseline_ms=...)` in one call: floor (0.0) for anything that is not
    a verified pass, pass_reward (1.0) plus the optional margin and speedup terms for a pass."""
    return Reward(floor, pass_reward, margin_weight, margin_decades, speedup_weight,
                  speedup_cap)(result, baseline_ms=baseline_ms)


# ---------------------------------------------------------------------------------------------
# Requests


def _check_option(op: str, name: str, value: Any) -> Any:
    """The option as the request carries it, or a ValueError saying what is wrong with it."""
    known = BENCH_OPTIONS if op == "bench" else CHECK_OPTIONS
    if name not in known:
        if name in BENCH_OPTIONS:
            raise ValueError(f"option {name!r} is for bench, not check")
        close = difflib.get_close_matches(name, BENCH_OPTIONS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"unknown option {name!r}{hint}; {op} takes: {', '.join(known)}")

    def wrong() -> ValueError:
        return ValueError(f"option {name!r} must be {known[name]}, not {value!r}")

    is_number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in ("fail_fast", "redact_hidden", "exact_bounds", "race_detection",
                "exact_percentiles", "stats"):
        if not isinstance(value, bool):
            raise wrong()
    elif name == "case":
        if not isinstance(value, str) or not value:
            raise wrong()
    elif name == "backend":
        if value not in ("auto", "cuda", "host"):
            raise wrong()
    elif name == "against":
        if not isinstance(value, (str, os.PathLike)):
            raise wrong()
        return os.path.abspath(os.fspath(value))
    elif name in ("runs", "rotation"):
        if not isinstance(value, int) or isinstance(value, bool):
            raise wrong()
        if value < 1 or (name == "rotation" and value > 8):
            raise wrong()
    elif name == "slo_p99":
        if not is_number or not (0 < value < math.inf):
            raise wrong()
    elif name in ("min_time", "max_time"):
        if not is_number or not (0 <= value <= 3600):
            raise wrong()
    elif name == "noise":
        if not is_number or not (0 < value < 1):
            raise wrong()
    return value


def make_request(op: str, problem: PathLike, candidate: Optional[PathLike] = None, *,
                 source: Optional[str] = None, name: Optional[str] = None,
                 **options: Any) -> dict[str, Any]:
    """The request object for `kjudge serve` (without its id), every field checked: a
    ValueError names what is wrong before anything is sent. Paths are made absolute, so a
    later os.chdir of the caller does not move them."""
    if op not in ("check", "bench"):
        raise ValueError(f"op must be 'check' or 'bench', not {op!r}")
    if not isinstance(problem, (str, os.PathLike)):
        raise ValueError(f"problem must be a path (a problem folder or problem.toml), "
                         f"not {problem!r}")
    if (candidate is None) == (source is None):
        raise ValueError("give the candidate as a path (candidate=) or as its text (source=), "
                         "one of the two")
    request: dict[str, Any] = {"op": op, "problem": os.path.abspath(os.fspath(problem))}
    if candidate is not None:
        if not isinstance(candidate, (str, os.PathLike)):
            raise ValueError(f"candidate must be a path, not {candidate!r} (text goes in "
                             "source=)")
        request["candidate"] = os.path.abspath(os.fspath(candidate))
    else:
        if not isinstance(source, str):
            raise ValueError(f"source must be the candidate's text (str), not "
                             f"{type(source).__name__}")
        request["source"] = source
    if name is not None:
        if not isinstance(name, str):
            raise ValueError(f"name must be a str, not {name!r}")
        request["name"] = name
    for key, value in options.items():
        if value is None:  # "not given": serve's default
            continue
        request[key] = _check_option(op, key, value)
    return request


# ---------------------------------------------------------------------------------------------
# The server process


def find_binary(binary: Optional[PathLike] = None) -> str:
    """The kjudge executable: `binary`, else $KJUDGE_BIN, else the CLI installed beside this
    package (kjudge/bin/kjudge, as `python -m kjudge` runs it). FileNotFoundError if none."""
    if binary is not None:
        chosen, origin = Path(os.fspath(binary)), "binary="
    elif os.environ.get("KJUDGE_BIN"):
        chosen, origin = Path(os.environ["KJUDGE_BIN"]), "$KJUDGE_BIN"
    else:
        chosen, origin = Path(__file__).resolve().parent / "bin" / "kjudge", "the package"
    if not chosen.is_file() or not os.access(chosen, os.X_OK):
        raise FileNotFoundError(f"kjudge: no executable CLI at {chosen} (from {origin}); pass "
                                "binary= or set KJUDGE_BIN")
    return str(chosen)


@dataclass(eq=False)
class _Pending:
    """One request between submit and its answer."""
    future: concurrent.futures.Future
    request: dict[str, Any]
    op: str
    timeout: float
    id: int = 0
    attempts: int = 0     # times sent to a server
    sent_at: float = 0.0  # time.monotonic()
    deadline: float = math.inf


def _session_members(sid: int) -> list[tuple[int, int]]:
    """(pid, process group) of every live process of session `sid` (from /proc; empty where
    there is none). Zombies are left out: they hold no resources and are their parent's."""
    members = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after the name: state ppid pgrp session
        if len(fields) > 3 and int(fields[3]) == sid and fields[0] not in ("Z", "X"):
            members.append((int(entry), int(fields[2])))
    return members


def _kill_session(process: subprocess.Popen) -> None:
    """SIGKILL a server and every process of its session, then reap the server. The server
    leads a session of its own; its workers die with it (PR_SET_PDEATHSIG), but the host
    compiler it starts runs in a process group of its own (g++, cc1plus, as), which outlives
    it unless killed here: found by the session id, which survives the server."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except OSError:
        pass
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        members = [m for m in _session_members(process.pid) if m[0] != process.pid]
        if not members:
            break
        for pid, group in members:
            for kill, target in ((os.killpg, group), (os.kill, pid)):
                try:
                    kill(target, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        time.sleep(0.02)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not refused
        pass


class _Server:
    """One `kjudge serve` process, its in-flight requests, and its reader threads."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], generation: int):
        self.generation = generation
        # A session of its own, so everything it starts (workers, compilers) can be found and
        # killed with it; stdin is how it is told to end (serve exits at the end of its input).
        self.process = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=dict(env), start_new_session=True, close_fds=True)
        self.inflight: dict[int, _Pending] = {}
        self.write_lock = threading.Lock()  # one line at a time, never under the Judge's lock
        self.dead = False
        self.kill_reason: Optional[str] = None  # set when this client killed it, and why
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=40)
        self.answer_reader: Optional[threading.Thread] = None
        self.stderr_reader: Optional[threading.Thread] = None
        # Stops it at interpreter exit if nobody closed it, so no server outlives its caller.
        self._finalizer = weakref.finalize(self, _kill_session, self.process)

    def send(self, line: bytes) -> None:
        """Write one request line (raises OSError or ValueError once the pipe is gone)."""
        with self.write_lock:
            assert self.process.stdin is not None
            self.process.stdin.write(line)
            self.process.stdin.flush()

    def end_input(self) -> None:
        """Close its standard input: serve finishes what it was given, then exits 0."""
        with self.write_lock:
            try:
                if self.process.stdin is not None:
                    self.process.stdin.close()
            except OSError:
                pass

    def kill(self) -> None:
        """Kill it and its session, and reap it (the first call does; later ones do nothing)."""
        self._finalizer()  # _kill_session, once

    def describe_exit(self) -> str:
        """How it ended, with its last lines of stderr: the message of a "judge_died" result."""
        code = self.process.poll()
        if code is None:
            status = "is not answering"
        elif code < 0:
            status = f"was killed by signal {-code}"
        else:
            status = f"exited with status {code}"
        tail = " | ".join(line for line in self.stderr_tail if line)[-1000:]
        return f"kjudge serve (pid {self.process.pid}) {status}" + (f"; stderr: {tail}"
                                                                     if tail else "")


# ---------------------------------------------------------------------------------------------
# The judge


class Judge:
    """A client of `kjudge serve`: judge candidates with `check` and `bench`, one at a time,
    as futures (`submit`), in batches (`check_many`, `map`) or from asyncio (`acheck`,
    `abench`).

    backend: "auto" (the GPU when one is usable, else the host), "cuda" or "host". jobs:
    judges per device side by side (`serve --jobs`); at most jobs x devices requests are in
    the server at once, the rest wait here, so each request's `timeout` counts its own work,
    not a queue. cache: the NVRTC cache folder. case_cache_mib: memory for the kept cases
    (serve's default 8192). binary: the kjudge executable (else $KJUDGE_BIN, else the one
    installed with the package). allow_loosen: judge problems looser than their card.toml.
    timeout: seconds a request may take once sent (per call too); past it the request gets a
    "timeout" error result and the server is restarted. strict: bad_request and spec_error
    answers raise JudgeRequestError (a ValueError) from check, bench, check_many, map, acheck
    and abench (per call too); futures always resolve to a result. The server is started here
    and again, transparently, whenever it died; close() (or leaving the `with` block) ends it."""

    def __init__(self, backend: str = "auto", jobs: int = 1, cache: Optional[PathLike] = None,
                 case_cache_mib: Optional[int] = None, binary: Optional[PathLike] = None,
                 allow_loosen: bool = False, *, device: Optional[int] = None,
                 devices: Optional[Sequence[int]] = None,
                 case_cache_dir: Optional[PathLike] = None,
                 case_cache_dir_mib: Optional[int] = None,
                 secret_file: Optional[PathLike] = None, spare_workers: bool = True,
                 timeout: float = 600.0, strict: bool = True,
                 env: Optional[Mapping[str, str]] = None):
        if backend not in ("auto", "cuda", "host"):
            raise ValueError(f"backend must be 'auto', 'cuda' or 'host', not {backend!r}")
        if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
            raise ValueError(f"jobs must be an int >= 1, not {jobs!r}")
        if device is not None and devices is not None:
            raise ValueError("give device= or devices=, not both")
        if not (timeout > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        self.binary = find_binary(binary)
        self.backend = backend
        self.timeout = float(timeout)
        self.strict = strict
        argv = [self.binary, "serve", "--unordered", "--backend", backend, "--jobs", str(jobs)]
        if cache is not None:
            argv += ["--cache", os.path.abspath(os.fspath(cache))]
        if case_cache_mib is not None:
            argv += ["--case-cache", str(int(case_cache_mib))]
        if case_cache_dir is not None:
            folder = os.fspath(case_cache_dir)
            argv += ["--case-cache-dir", folder if folder == "off" else os.path.abspath(folder)]
        if case_cache_dir_mib is not None:
            argv += ["--case-cache-dir-mib", str(int(case_cache_dir_mib))]
        if device is not None:
            argv += ["--device", str(int(device))]
        if devices is not None:
            argv += ["--devices", ",".join(str(int(d)) for d in devices)]
        if secret_file is not None:
            argv += ["--secret-file", os.path.abspath(os.fspath(secret_file))]
        if allow_loosen:
            argv.append("--allow-loosen")
        if not spare_workers:
            argv.append("--no-spare-workers")
        self.argv: list[str] = argv
        self._env = {**os.environ, **(env or {})}
        self._slots = jobs * (len(devices) if devices else 1)

        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)  # the monitor's: a deadline or a close
        self._queue: collections.deque[_Pending] = collections.deque()
        self._ids = itertools.count(1)
        self._generations = itertools.count(0)
        self._server: Optional[_Server] = None
        self._closing = False
        self._closed = False
        self.restarts = 0  # servers started after the first
        with self._lock:
            self._server = self._start_server()  # a bad binary or argument fails here
        self._monitor = threading.Thread(target=self._watch, name="kjudge-judge-monitor",
                                         daemon=True)
        self._monitor.start()

    # -- the public calls --------------------------------------------------------------------

    def submit(self, problem: PathLike, candidate: Optional[PathLike] = None, *,
               source: Optional[str] = None, name: Optional[str] = None, op: str = "check",
               timeout: Optional[float] = None, **options: Any) -> concurrent.futures.Future:
        """Queue a request; its future resolves to a CheckResult (op "check") or BenchResult
        (op "bench"), never to an exception: a request the judge could not judge resolves to
        a result with `error` set. Raises ValueError at once for a bad option or argument,
        RuntimeError once the Judge is closed. Cancelling the future before the request is
        sent withdraws it. Callbacks added to the future run on the reader thread: they must
        not block (nor call this Judge synchronously), or later answers wait for them."""
        request = make_request(op, problem, candidate, source=source, name=name, **options)
        limit = self.timeout if timeout is None else float(timeout)
        if not (limit > 0):
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        pending = _Pending(concurrent.futures.Future(), request, op, limit)
        with self._lock:
            if self._closing:
                raise RuntimeError("this kjudge.Judge is closed")
            pending.id = next(self._ids)
            self._queue.append(pending)
            to_send = self._take_sendable()
        self._send(to_send)
        return pending.future

    def check(self, problem: PathLike, candidate: Optional[PathLike] = None, *,
              source: Optional[str] = None, name: Optional[str] = None,
              timeout: Optional[float] = None, strict: Optional[bool] = None,
              **options: Any) -> CheckResult:
        """Judge one candidate (a .cu path, or its text as `source` with `name` for messages)
        against `problem` (a folder or problem.toml). Options: those of CHECK_OPTIONS
        (fail_fast=True, backend="host", ...)."""
        future = self.submit(problem, candidate, source=source, name=name, op="check",
                             timeout=timeout, **options)
        return self._deliver(future.result(), strict)

    def bench(self, problem: PathLike, candidate: Optional[PathLike] = None, *,
              source: Optional[str] = None, name: Optional[str] = None,
              timeout: Optional[float] = None, strict: Optional[bool] = None,
              **options: Any) -> BenchResult:
        """Judge one candidate as `check` does, then time it against the reference. Options:
        those of BENCH_OPTIONS (runs=5, slo_p99=..., ...)."""
        future = self.submit(problem, candidate, source=source, name=name, op="bench",
                             timeout=timeout, **options)
        return self._deliver(future.result(), strict)

    def check_many(self, requests: Iterable[Mapping[str, Any]], *,
                   strict: Optional[bool] = None, **common: Any) -> list[CheckResult]:
        """Judge several requests, each a mapping of `submit`'s arguments ({"problem": ...,
        "source": ..., "op": "bench", "fail_fast": True, ...}), over `common` arguments;
        returns their results in the order given. Every request is validated before any is
        sent. Strict: after all are answered, raises the first JudgeRequestError."""
        prepared = [{**common, **dict(item)} for item in requests]
        for item in prepared:  # validate all first, so a bad one sends nothing
            _validate_item(item)
        futures = [self.submit(**item) for item in prepared]
        results = [f.result() for f in futures]
        for result in results:
            self._deliver(result, strict)
        return results

    def map(self, problem: PathLike, sources: Iterable[str], *,
            names: Optional[Iterable[str]] = None, op: str = "check",
            strict: Optional[bool] = None, **options: Any) -> list[CheckResult]:
        """Judge candidate texts of one problem (a trainer's batch of generations), with the
        same options; results in the order of `sources`."""
        sources = list(sources)
        name_list = list(names) if names is not None else [None] * len(sources)
        if len(name_list) != len(sources):
            raise ValueError(f"{len(name_list)} names for {len(sources)} sources")
        return self.check_many([{"source": s, "name": n} for s, n in zip(sources, name_list)],
                               strict=strict, problem=problem, op=op, **options)

    async def acheck(self, problem: PathLike, candidate: Optional[PathLike] = None, *,
                     strict: Optional[bool] = None, **kwargs: Any) -> CheckResult:
        """`check` for asyncio: awaits the answer without blocking the event loop."""
        future = self.submit(problem, candidate, op="check", **kwargs)
        return self._deliver(await asyncio.wrap_future(future), strict)

    async def abench(self, problem: PathLike, candidate: Optional[PathLike] = None, *,
                     strict: Optional[bool] = None, **kwargs: Any) -> BenchResult:
        """`bench` for asyncio."""
        future = self.submit(problem, candidate, op="bench", **kwargs)
        return self._deliver(await asyncio.wrap_future(future), strict)

    @property
    def pid(self) -> Optional[int]:
        """The process id of the running server (None before a restart or after close)."""
        with self._lock:
            server = self._server
            return server.process.pid if server is not None and not server.dead else None

    def close(self, wait: bool = True) -> None:
        """End the server. wait=True lets every submitted request finish first (each within
        its timeout); wait=False answers the waiting ones with a "closed" error and kills the
        server, whose in-flight requests then get "judge_died". Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closing = True
            if not wait:
                self._fail_queue_locked(JudgeError("closed", "the Judge was closed before the "
                                                   "request was sent"))
        if wait:
            for future in self._outstanding_futures():
                try:
                    future.result()
                except concurrent.futures.CancelledError:
                    pass
        with self._lock:
            server, self._server = self._server, None
            self._closed = True
            self._wake.notify_all()
        if server is not None:
            server.end_input()
            try:
                server.process.wait(timeout=30 if wait else 0.5)
            except subprocess.TimeoutExpired:
                server.kill_reason = "close"
            server.kill()  # its session too: no worker or compiler outlives the Judge
            self._server_ended(server)
        self._monitor.join(timeout=5)

    def __enter__(self) -> "Judge":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close(wait=exc[0] is None)

    def __repr__(self) -> str:
        state = "closed" if self._closed else f"pid {self.pid}"
        return f"<kjudge.Judge {self.backend} {state}>"

    # -- the machinery -----------------------------------------------------------------------

    def _deliver(self, result: CheckResult, strict: Optional[bool]) -> CheckResult:
        if self.strict if strict is None else strict:
            result.raise_for_error()
        return result

    def _outstanding_futures(self) -> list[concurrent.futures.Future]:
        with self._lock:
            pending = list(self._queue)
            if self._server is not None:
                pending += self._server.inflight.values()
        return [p.future for p in pending]

    def _start_server(self) -> _Server:
        """A fresh server (the lock held)."""
        generation = next(self._generations)
        server = _Server(self.argv, self._env, generation)
        if generation > 0:
            self.restarts += 1
        server.answer_reader = threading.Thread(target=self._read_answers, args=(server,),
                                                daemon=True,
                                                name=f"kjudge-judge-reader-{generation}")
        server.answer_reader.start()
        server.stderr_reader = threading.Thread(target=self._read_stderr, args=(server,),
                                                daemon=True,
                                                name=f"kjudge-judge-stderr-{generation}")
        server.stderr_reader.start()
        return server

    def _take_sendable(self) -> list[tuple[_Server, _Pending]]:
        """Move queued requests into the server while it has a free judge (the lock held);
        the caller sends them after releasing the lock."""
        out: list[tuple[_Server, _Pending]] = []
        while self._queue and not self._closed:
            server = self._server
            if server is None or server.dead:
                try:
                    server = self._server = self._start_server()
                except OSError as e:
                    self._fail_queue_locked(JudgeError("judge_died",
                                                       f"kjudge serve did not start: {e}"))
                    break
            if len(server.inflight) >= self._slots:
                break
            pending = self._queue.popleft()
            if pending.future.cancelled():
                continue  # withdrawn while it waited
            pending.attempts += 1
            pending.sent_at = time.monotonic()
            pending.deadline = pending.sent_at + pending.timeout
            server.inflight[pending.id] = pending
            out.append((server, pending))
        if out:
            self._wake.notify_all()  # a new deadline for the monitor
        return out

    def _send(self, batch: list[tuple[_Server, _Pending]]) -> None:
        for server, pending in batch:
            line = json.dumps({"id": pending.id, **pending.request}).encode() + b"\n"
            try:
                server.send(line)
            except (OSError, ValueError):
                # The server is gone (a broken pipe): its death is handled where it is seen,
                # and this request is answered there with the others in flight.
                self._server_ended(server)

    def _read_answers(self, server: _Server) -> None:
        """The reader thread of one server: each answer line to the future of its id."""
        stream = server.process.stdout
        assert stream is not None
        for raw in stream:
            try:
                answer = json.loads(raw.decode("utf-8", "replace"))
            except ValueError:
                server.stderr_tail.append("stdout: " + raw[:200].decode("utf-8", "replace"))
                continue
            if not isinstance(answer, dict):
                continue
            with self._lock:
                pending = server.inflight.pop(answer.get("id"), None)  # type: ignore[arg-type]
                to_send = self._take_sendable() if pending is not None else []
            if pending is not None:
                wall = time.monotonic() - pending.sent_at
                result_type = BenchResult if pending.op == "bench" else CheckResult
                try:
                    result = result_type.from_answer(answer, wall_s=wall)
                except (KeyError, TypeError, ValueError) as e:  # an answer this client can't read
                    result = result_type.from_error(JudgeError("internal", f"unreadable "
                                                               f"answer: {e}"), id=pending.id)
                _resolve(pending, result)
            self._send(to_send)
        # End of its output: the server exited (or closed it). Reap it and settle its requests.
        stream.close()
        try:
            server.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
        self._server_ended(server)

    @staticmethod
    def _read_stderr(server: _Server) -> None:
        """Keep the server's last lines of stderr (for a death's message); reading it also
        keeps a chatty server from blocking on a full pipe."""
        stream = server.process.stderr
        assert stream is not None
        for raw in stream:
            server.stderr_tail.append(raw.decode("utf-8", "replace").rstrip())
        stream.close()

    def _server_ended(self, server: _Server) -> None:
        """A server is gone (exited, killed, or its pipe broke): kill what is left of its
        session and settle its in-flight requests. A request that was only collateral of a
        deliberate restart (another request's timeout) is sent again, once; every other one
        gets a "judge_died" result. Idempotent."""
        with self._lock:
            if server.dead:
                return
            server.dead = True
            orphans = list(server.inflight.values())
            server.inflight.clear()
            if self._server is server:
                self._server = None
        server.kill()
        server.end_input()
        if server.stderr_reader is not None:  # its last words, for the message
            server.stderr_reader.join(timeout=1)
        why = server.describe_exit()
        retry: list[_Pending] = []
        for pending in orphans:
            if server.kill_reason == "timeout" and pending.attempts < 2 and not self._closed:
                retry.append(pending)
            else:
                _resolve(pending, _error_result(pending, "judge_died",
                                                f"{why}, before answering this request"))
        with self._lock:
            for pending in reversed(retry):
                self._queue.appendleft(pending)
            to_send = self._take_sendable()
            self._wake.notify_all()
        self._send(to_send)

    def _watch(self) -> None:
        """The monitor thread: times out requests past their deadline (restarting the server,
        the only way to take a request back from it) and notices a server that died without
        closing its output (a worker of it may still hold the pipe)."""
        with self._lock:
            while not self._closed:
                server = self._server
                now = time.monotonic()
                expired: list[_Pending] = []
                if server is not None and not server.dead:
                    expired = [p for p in server.inflight.values() if p.deadline <= now]
                    next_deadline = min((p.deadline for p in server.inflight.values()),
                                        default=math.inf)
                    exited = server.process.poll() is not None
                else:
                    next_deadline, exited = math.inf, False
                if expired or exited:
                    for pending in expired:
                        del server.inflight[pending.id]
                    if expired:
                        server.kill_reason = "timeout"
                    self._lock.release()
                    try:
                        for pending in expired:
                            _resolve(pending, _error_result(
                                pending, "timeout",
                                f"no answer within {pending.timeout:g} s; kjudge serve was "
                                "restarted"))
                        server.kill()  # its session too, so nothing holds its output open
                        if not expired and server.answer_reader is not None:
                            # Answers it wrote before it died are still in the pipe: the
                            # reader hands them out first, then settles the rest.
                            server.answer_reader.join(timeout=2)
                        self._server_ended(server)  # type: ignore[arg-type]
                    finally:
                        self._lock.acquire()
                    continue
                # Poll for a silent death at least twice a second; else sleep to the deadline.
                self._wake.wait(timeout=max(0.01, min(0.5, next_deadline - now)))

    def _fail_queue_locked(self, error: JudgeError) -> None:
        while self._queue:
            pending = self._queue.popleft()
            _resolve(pending, _error_result(pending, error.kind, error.message))


def _error_result(pending: _Pending, kind: str, message: str) -> CheckResult:
    result_type = BenchResult if pending.op == "bench" else CheckResult
    wall = time.monotonic() - pending.sent_at if pending.sent_at else 0.0
    return result_type.from_error(JudgeError(kind, message), id=pending.id, wall_s=wall)


def _resolve(pending: _Pending, result: CheckResult) -> None:
    """Hand the result to the caller's future, unless the caller cancelled it (a request
    cancelled after it was sent still runs; its answer is dropped here)."""
    try:
        pending.future.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass


def _validate_item(item: Mapping[str, Any]) -> None:
    """A batch item checked as submit would check it (a ValueError names it)."""
    args = dict(item)
    args.pop("timeout", None)
    op = args.pop("op", "check")
    problem = args.pop("problem", None)
    if problem is None:
        raise ValueError(f"batch item {dict(item)!r}: 'problem' is missing")
    make_request(op, problem, args.pop("candidate", None), source=args.pop("source", None),
                 name=args.pop("name", None), **args)
