"""kjudge.Judge against a real `kjudge serve --backend host` on problems/relu: verdicts of a
correct and a wrong candidate (by path and as text), errors the judge must not blame on the
candidate (a bad problem, a server killed mid-run, a request past its deadline), batches and
futures in order, asyncio, options refused before sending, the end of the server process, and
the reward mapping pinned value by value (docs/python-judge.md)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import math
import os
import re
import signal
import time
import uuid
from pathlib import Path

import pytest

from kjudge.judge import (BENCH_OPTIONS, CHECK_OPTIONS, BenchResult, CheckResult, Judge,
                          JudgeError, JudgeRequestError, Reward, make_request, reward)

ROOT = Path(__file__).resolve().parents[2]
RELU = ROOT / "problems" / "relu"
GOOD = RELU / "solutions" / "basic.cu"
WRONG = RELU / "traps" / "every_other.cu"             # FAIL(unwritten_output or mismatch)
NO_COMPILE = RELU / "traps" / "debug_printf.cu"       # FAIL(compile_error): the fastest verdict
TIMEOUT = 180.0  # per request: a host check of relu takes seconds; a hang must not hang pytest


def judge_for(caches: Path, **kwargs) -> Judge:
    """A host-backend Judge whose caches live under `caches` (nothing written to ~/.cache;
    shared by the module's Judges, so a candidate compiles once)."""
    return Judge(backend="host", cache=caches / "nvrtc", case_cache_dir=caches / "cases",
                 timeout=TIMEOUT, **kwargs)


def uncached_good() -> str:
    """The correct kernel as a text no cache has seen: judging it takes seconds (its
    compiles), long enough to kill the server or pass a deadline while it runs."""
    return GOOD.read_text() + f"\n// {uuid.uuid4()}\n"


@pytest.fixture(scope="module")
def caches(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("caches")


@pytest.fixture(scope="module")
def judge(caches):
    # Two judges in the server, so answers can really come out of order and the client must
    # put them back by id.
    j = judge_for(caches, jobs=2)
    yield j
    j.close()


def session_members(sid: int, settle_s: float = 5.0) -> list[int]:
    """Live processes of session sid (the server's: it, its workers and its compilers, which
    run in process groups of their own), after up to settle_s for killed ones to go. A zombie
    of the server itself counts; an orphan's zombie is its new parent's to reap."""
    deadline = time.monotonic() + settle_s
    while True:
        members = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            state, _, _, session = stat[stat.rindex(")") + 2:].split()[:4]  # after the name
            if int(session) == sid and (state != "Z" or int(entry) == sid):
                members.append(int(entry))
        if not members or time.monotonic() > deadline:
            return members
        time.sleep(0.1)


# --- options, checked before anything is sent ------------------------------------------------


def test_the_option_tables_are_the_ones_docs_cli_md_lists_for_serve():
    text = (ROOT / "docs" / "cli.md").read_text()
    sentence = text[text.index("the options of\n`check` and `bench` are"):
                    text.index("A field not in this list")]
    documented = set(re.findall(r"`([a-z_0-9]+)`", sentence)) - {"check", "bench"}
    assert documented == set(BENCH_OPTIONS)
    assert set(CHECK_OPTIONS) < set(BENCH_OPTIONS)


def test_a_misspelt_option_raises_before_the_request_is_sent(judge):
    pid = judge.pid
    with pytest.raises(ValueError, match=r"unknown option 'fail_fasst' \(did you mean "
                                         r"'fail_fast'\?\)"):
        judge.check(RELU, GOOD, fail_fasst=True)
    with pytest.raises(ValueError, match="option 'runs' is for bench, not check"):
        judge.check(RELU, GOOD, runs=3)
    with pytest.raises(ValueError, match="option 'fail_fast' must be bool, not 'yes'"):
        judge.submit(RELU, GOOD, fail_fast="yes")
    with pytest.raises(ValueError, match="option 'rotation' must be an int from 1 to 8"):
        judge.bench(RELU, GOOD, rotation=9)
    with pytest.raises(ValueError, match="one of the two"):
        judge.check(RELU, GOOD, source="text")
    with pytest.raises(ValueError, match="'problem' is missing"):
        judge.check_many([{"candidate": GOOD}, {"problem": RELU, "candidate": GOOD}])
    # Nothing reached the server: it is the same process, with nothing in flight.
    assert judge.pid == pid
    assert not judge._queue and not judge._server.inflight


def test_a_request_carries_absolute_paths_and_only_the_options_given():
    request = make_request("bench", "problems/relu", "k.cu", runs=2, fail_fast=None)
    assert request == {"op": "bench", "problem": os.path.abspath("problems/relu"),
                       "candidate": os.path.abspath("k.cu"), "runs": 2}


# --- verdicts ---------------------------------------------------------------------------------


def test_a_correct_candidate_passes(judge):
    result = judge.check(RELU, GOOD)
    assert isinstance(result, CheckResult) and not isinstance(result, BenchResult)
    assert (result.outcome, result.reason, result.fault) == ("PASS", "none", "none")
    assert result.passed and result.eligible and not result.failed and result.error is None
    assert result.cases_total == result.cases_passed > 0 and result.fraction_passed == 1.0
    assert result.log_error_ratio == -12.0  # exact policy, every element equal
    assert result.verdict["manifest"]["backend"] == "host"
    assert reward(result) == 1.0


def test_a_wrong_candidate_fails_with_its_reason(judge):
    result = judge.check(RELU, WRONG)
    assert result.outcome == "FAIL" and result.fault == "candidate"
    assert result.reason in ("unwritten_output", "mismatch")
    assert result.failed and result.eligible and not result.passed and not result
    assert result.first_failing_case and result.message
    assert reward(result) == 0.0


def test_a_source_string_is_judged_under_its_name(judge):
    result = judge.check(RELU, source=NO_COMPILE.read_text(), name="gen_0042.cu")
    assert (result.outcome, result.reason) == ("FAIL", "compile_error")
    assert result.message.startswith("gen_0042.cu:4: #include <stdio.h> is not allowed")
    assert result.verdict["manifest"]["candidate"] == "gen_0042.cu"
    assert judge.check(RELU, source=GOOD.read_text(), name="gen_0043.cu").passed


def test_a_bad_problem_raises_a_value_error_unless_not_strict(judge, tmp_path):
    missing = tmp_path / "no_such_problem"
    with pytest.raises(JudgeRequestError) as e:
        judge.check(missing, GOOD)
    assert isinstance(e.value, ValueError)
    assert e.value.result.error.kind == "spec_error"
    assert str(missing) in str(e.value)
    result = judge.check(missing, GOOD, strict=False)
    assert (result.outcome, result.reason, result.eligible) == ("ERROR", "spec_error", False)
    assert result.verdict is None and reward(result) == 0.0
    # A candidate file that does not exist: the request's fault, a bad_request.
    with pytest.raises(JudgeRequestError, match="bad_request"):
        judge.check(RELU, tmp_path / "missing.cu")


def test_a_bench_times_a_passing_candidate(judge):
    result = judge.bench(RELU, GOOD, runs=2)
    assert isinstance(result, BenchResult) and result.passed
    assert result.timer == "host_cpu"
    assert result.runtime_ms > 0 and result.ref_runtime_ms > 0
    assert result.speedup == pytest.approx(result.ref_runtime_ms / result.runtime_ms)
    shaped = reward(result, speedup_weight=0.25)
    assert shaped == 1.0 + 0.25 * max(-3.0, min(3.0, math.log2(result.speedup)))
    failed = judge.bench(RELU, NO_COMPILE, runs=2)
    assert failed.failed and failed.runtime_ms is None
    assert reward(failed, speedup_weight=0.25, baseline_ms=1e9) == 0.0


# --- batches, futures, asyncio ---------------------------------------------------------------


def test_a_batch_returns_results_in_submission_order(judge, tmp_path):
    # A slow pass first (it compiles): the requests behind it are answered first, by the
    # server's other judge, and put back in order here.
    results = judge.check_many([
        {"problem": RELU, "source": uncached_good(), "name": "slow.cu"},
        {"problem": RELU, "candidate": NO_COMPILE},
        {"problem": RELU, "candidate": WRONG, "fail_fast": True},
        {"problem": tmp_path / "no_such_problem", "candidate": GOOD},
        {"problem": RELU, "candidate": GOOD},
    ], strict=False)
    assert [r.outcome for r in results] == ["PASS", "FAIL", "FAIL", "ERROR", "PASS"]
    assert [r.reason for r in results[1:4]] == ["compile_error", "unwritten_output",
                                                "spec_error"]
    assert [r.id for r in results] == sorted(r.id for r in results)
    assert results[0].wall_s > results[1].wall_s
    texts = judge.map(RELU, [NO_COMPILE.read_text(), GOOD.read_text()], names=["a.cu", "b.cu"])
    assert [r.reason for r in texts] == ["compile_error", "none"]
    # Strict (the default): the batch is answered whole, then its first refusal raised.
    with pytest.raises(JudgeRequestError, match="spec_error"):
        judge.check_many([{"candidate": GOOD}, {"candidate": NO_COMPILE}],
                         problem=tmp_path / "no_such_problem")


def test_futures_resolve_to_results(judge):
    futures = [judge.submit(RELU, NO_COMPILE), judge.submit(RELU, GOOD, op="bench", runs=1)]
    done, not_done = concurrent.futures.wait(futures, timeout=TIMEOUT)
    assert not not_done
    check, bench = (f.result() for f in futures)
    assert type(check) is CheckResult and check.reason == "compile_error"
    assert type(bench) is BenchResult and bench.passed and bench.wall_s > 0


def test_the_asyncio_variant_awaits_answers(judge):
    async def judge_two():
        return await asyncio.gather(judge.acheck(RELU, GOOD),
                                    judge.acheck(RELU, source=NO_COMPILE.read_text()))
    good, bad = asyncio.run(judge_two())
    assert good.passed and bad.reason == "compile_error"

    async def judge_missing():
        return await judge.acheck(RELU / "nowhere", GOOD)
    with pytest.raises(JudgeRequestError):
        asyncio.run(judge_missing())


# --- a server that dies, a request past its deadline, the end --------------------------------


def test_a_killed_server_fails_its_request_and_the_next_call_restarts_it(caches):
    with judge_for(caches) as j:
        first_pid = j.pid
        future = j.submit(RELU, source=uncached_good())
        time.sleep(0.5)  # in flight: the check compiles and runs for seconds
        assert len(session_members(first_pid, settle_s=0)) > 1  # workers, a compiler
        os.kill(first_pid, signal.SIGKILL)
        result = future.result(timeout=30)
        assert (result.outcome, result.reason, result.eligible) == ("ERROR", "judge_died", False)
        assert "killed by signal 9" in result.message and reward(result) == 0.0
        assert isinstance(result.error, JudgeError)
        after = j.check(RELU, NO_COMPILE)
        assert after.reason == "compile_error"
        assert j.pid not in (None, first_pid) and j.restarts == 1
        assert not session_members(first_pid)  # its workers went with it


def test_a_request_past_its_deadline_times_out_and_its_neighbour_is_sent_again(caches):
    with judge_for(caches, jobs=2) as j:
        first_pid = j.pid
        late = j.submit(RELU, source=uncached_good(), name="late.cu", timeout=1.0)
        beside = j.submit(RELU, source=uncached_good())  # killed with the server, sent again
        result = late.result(timeout=30)
        assert (result.reason, result.eligible) == ("timeout", False)
        assert "no answer within 1 s" in result.message
        assert beside.result(timeout=TIMEOUT).passed  # resent to the new server
        assert j.pid != first_pid and j.restarts == 1
        assert not session_members(first_pid)


def test_close_ends_the_server_and_its_group(caches):
    j = judge_for(caches)
    pid = j.pid
    assert j.check(RELU, NO_COMPILE).failed
    assert pid in session_members(pid, settle_s=0)
    j.close()
    assert j.pid is None
    assert not Path(f"/proc/{pid}").exists()  # reaped: no zombie
    assert not session_members(pid)             # and no worker left behind
    with pytest.raises(RuntimeError, match="closed"):
        j.submit(RELU, GOOD)
    j.close()  # idempotent


def test_close_without_waiting_answers_what_was_queued(caches):
    j = judge_for(caches)  # one judge: the second and third requests wait in the client
    pid = j.pid
    running, queued, withdrawn = (j.submit(RELU, source=uncached_good()) for _ in range(3))
    assert withdrawn.cancel()
    j.close(wait=False)
    assert running.result(timeout=30).reason == "judge_died"
    assert queued.result(timeout=30).reason == "closed"
    assert withdrawn.cancelled()
    assert not Path(f"/proc/{pid}").exists() and not session_members(pid)


# --- the reward, pinned ----------------------------------------------------------------------


def verdict(outcome="PASS", reason="none", *, ratio=-12.0, runtime=None, ref_runtime=None,
            defences=()):
    """A verdict object as serve writes it, reduced to what the results read."""
    eligible = outcome in ("PASS", "FAIL")
    speedup = ref_runtime / runtime if runtime and ref_runtime else None
    return {"outcome": outcome, "reason": reason, "message": "", "class": "none",
            "cases_total": 4, "cases_passed": 4 if outcome == "PASS" else 1,
            "fraction_passed": 1.0 if outcome == "PASS" else 0.25, "cases": [],
            "defences_disabled": list(defences), "runtime": runtime, "ref_runtime": ref_runtime,
            "speedup": speedup, "timer": "host_cpu" if runtime else None,
            "reward": {"eligible": eligible, "correct": outcome == "PASS",
                       "log_error_ratio": ratio, "speedup": speedup, "confidence": 1.0}}


def check(*args, **kwargs):
    return CheckResult.from_verdict(verdict(*args, **kwargs))


def bench(*args, **kwargs):
    return BenchResult.from_verdict(verdict(*args, **kwargs))


def error(kind):
    return CheckResult.from_answer({"id": 1, "error": {"kind": kind, "message": "m"}})


SHAPED = dict(margin_weight=0.25, margin_decades=2.0, speedup_weight=0.25, speedup_cap=3.0)

# (what, result, Reward's arguments, baseline_ms, reward): every value exact.
REWARD_TABLE = [
    ("pass", check(), {}, None, 1.0),
    ("FAIL mismatch", check("FAIL", "mismatch", ratio=0.5), {}, None, 0.0),
    ("FAIL compile_error", check("FAIL", "compile_error", ratio=None), {}, None, 0.0),
    ("FAIL timeout (the candidate's)", check("FAIL", "timeout"), {}, None, 0.0),
    ("ERROR spec_error verdict", check("ERROR", "spec_error"), {}, None, 0.0),
    ("ERROR internal verdict", check("ERROR", "internal"), {}, None, 0.0),
    ("SKIP", check("SKIP", "none"), {}, None, 0.0),
    ("judge error: timeout", error("timeout"), {}, None, 0.0),
    ("judge error: judge_died", error("judge_died"), {}, None, 0.0),
    ("judge error: bad_request", error("bad_request"), {}, None, 0.0),
    ("judge error: spec_error", error("spec_error"), {}, None, 0.0),
    ("pass with a defence disabled", check(defences=["poison"]), {}, None, 0.0),
    ("floor -1: FAIL", check("FAIL", "crash"), {"floor": -1.0}, None, -1.0),
    ("floor -1: judge error", error("internal"), {"floor": -1.0}, None, -1.0),
    ("floor -1: pass", check(), {"floor": -1.0}, None, 1.0),
    ("margin: exact (-12)", check(ratio=-12.0), SHAPED, None, 1.25),
    ("margin: -2 decades, full", check(ratio=-2.0), SHAPED, None, 1.25),
    ("margin: -1 decade, half", check(ratio=-1.0), SHAPED, None, 1.125),
    ("margin: at the bound", check(ratio=0.0), SHAPED, None, 1.0),
    ("margin: nothing compared", check(ratio=None), SHAPED, None, 1.0),
    ("check: no speedup term", check(ratio=0.0), {"speedup_weight": 0.25}, None, 1.0),
    ("bench 2x", bench(ratio=0.0, runtime=1.0, ref_runtime=2.0), SHAPED, None, 1.25),
    ("bench 1x", bench(ratio=0.0, runtime=1.0, ref_runtime=1.0), SHAPED, None, 1.0),
    ("bench 0.5x", bench(ratio=0.0, runtime=2.0, ref_runtime=1.0), SHAPED, None, 0.75),
    ("bench 64x, capped at 8x", bench(ratio=0.0, runtime=1.0, ref_runtime=64.0), SHAPED, None,
     1.75),
    ("bench 1/64x, capped", bench(ratio=0.0, runtime=64.0, ref_runtime=1.0), SHAPED, None, 0.25),
    ("bench 4x over baseline_ms", bench(ratio=0.0, runtime=0.5, ref_runtime=0.5), SHAPED, 2.0,
     1.5),
    ("bench 2x, exact, both terms", bench(runtime=1.0, ref_runtime=2.0), SHAPED, None, 1.5),
    ("bench pass, nothing timed", bench(ratio=0.0), SHAPED, None, 1.0),
    ("bench FAIL however fast", bench("FAIL", "mismatch", runtime=1.0, ref_runtime=64.0), SHAPED,
     0.1, 0.0),
    ("bench FAIL stale_output", bench("FAIL", "stale_output"), SHAPED, None, 0.0),
]


@pytest.mark.parametrize("what, result, arguments, baseline_ms, expected", REWARD_TABLE,
                         ids=[row[0] for row in REWARD_TABLE])
def test_the_reward_table(what, result, arguments, baseline_ms, expected):
    assert Reward(**arguments)(result, baseline_ms=baseline_ms) == expected
    assert reward(result, baseline_ms=baseline_ms, **arguments) == expected


def test_no_shaping_ranks_a_failure_with_a_pass():
    rewarder = Reward(**SHAPED)
    passes = [bench(ratio=r, runtime=t, ref_runtime=1.0) for r in (0.0, -0.5, None)
              for t in (1e-3, 1.0, 1e3)]
    others = [row[1] for row in REWARD_TABLE if not row[1].passed or not row[1].eligible]
    assert min(rewarder(p) for p in passes) > max(rewarder(o, baseline_ms=1.0) for o in others)


def test_weights_that_could_sink_a_pass_to_the_floor_are_refused():
    with pytest.raises(ValueError, match="slowest pass would score -0.5"):
        Reward(speedup_weight=0.5, speedup_cap=3.0)
    with pytest.raises(ValueError, match="must be >= 0"):
        Reward(margin_weight=-1.0)
    with pytest.raises(ValueError, match="baseline_ms"):
        reward(check(), baseline_ms=0.0)
