"""kjudge.ray on a local Ray cluster (127.0.0.1, no dashboard) of host-backend judges: a suite's
run through it gives the results of a run in one process, and an actor killed mid-run loses no
request and answers none twice. Skipped where ray is not installed."""
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from kjudge import ray as kjudge_ray  # noqa: E402
from kjudge.judge import find_binary  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
VARYING = {"seconds", "phase_seconds", "judged_at", "runtime_ms", "ref_runtime_ms", "speedup", "baseline_speedup"}


def steady(folder: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k not in VARYING}
            for line in (folder / "results.jsonl").read_text().splitlines()]


def kjudge_run(out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [find_binary(), "run", str(ROOT / "problems"), "--only", "vector_add",
               "--backend", "host", "--runs", "1", "--out", str(out), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "KJUDGE_PYTHON": sys.executable})


def test_a_run_on_a_local_cluster_gives_the_results_of_a_run_here(tmp_path):
    here = kjudge_run(tmp_path / "here")
    on_ray = kjudge_run(tmp_path / "ray", "--ray", "local", "--actors", "2")
    assert here.returncode == 0, here.stderr
    assert on_ray.returncode == 0, on_ray.stderr
    candidates = sum(1 for _ in (ROOT / "problems" / "vector_add").glob("*/*.cu"))
    assert f"{candidates} samples judged" in on_ray.stdout
    assert steady(tmp_path / "ray") == steady(tmp_path / "here")


def test_a_kernelbench_suite_runs_on_a_local_cluster(tmp_path):
    """A suite of KernelBench-format problems on Ray: the actors' `kjudge serve` hands each
    sample to the Python adapter, and each gets its expected verdict (the spinning candidate
    left out: its deadline is a minute here)."""
    pytest.importorskip("torch")
    from kjudge.kernelbench import expect
    suite = ROOT / "python" / "tests" / "kernelbench"
    expected = {c: (o, r) for p, c, o, r in (x[:4] for x in expect.read_expectations(str(suite)))
                if p == "scaled_sum" and c != "spins"}
    samples = tmp_path / "samples" / "scaled_sum"
    samples.mkdir(parents=True)
    for candidate in expected:
        source = suite / "scaled_sum" / "candidates" / (candidate + ".py")
        (samples / source.name).write_text(source.read_text())
    done = subprocess.run([find_binary(), "run", str(suite), "--samples", str(samples.parent),
                           "--backend", "host", "--out", str(tmp_path / "ray"), "--ray",
                           "local", "--actors", "2"], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "KJUDGE_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr[-2000:]
    got = {x["sample"]: (x["outcome"], x["reason"]) for x in steady(tmp_path / "ray")}
    assert set(got) == set(expected)
    wrong = {c: got[c] for c, want in expected.items() if not expect.holds(*got[c], *want)}
    assert wrong == {}, {c: expected[c] for c in wrong}


def test_an_actor_killed_mid_run_loses_nothing_and_repeats_nothing():
    problem = str(ROOT / "problems" / "vector_add")
    candidate = str(ROOT / "problems" / "vector_add" / "solutions" / "basic.cu")
    requests = [json.dumps({"id": i, "op": "check", "problem": problem, "candidate": candidate,
                            "backend": "host"}) for i in range(8)]
    kjudge_ray.connect("local")
    try:
        judge = kjudge_ray.RayJudge(2, find_binary(), "host")
        victim = ray.get(judge.actors[0].pid.remote())
        answers = []

        def write(line: str) -> None:
            answers.append(json.loads(line))
            if len(answers) == 2:
                os.kill(victim, signal.SIGKILL)  # its in-flight and queued tasks are retried

        assert kjudge_ray.serve_stream(judge, requests, write) == 8
        assert sorted(a["id"] for a in answers) == list(range(8))
        assert all(a["verdict"]["outcome"] == "PASS" for a in answers), answers
        assert ray.get(judge.actors[0].pid.remote()) != victim  # restarted by Ray
    finally:
        ray.shutdown()


def test_a_kernelbench_build_is_a_task_of_its_own_and_the_judge_loads_it(tmp_path, monkeypatch):
    """A KernelBench candidate that calls load_inline is built by a Ray task (any node's CPU),
    the build put in the judging actor's cache, and its serve loads it without building."""
    from test_kernelbench_build import CANDIDATE, PROBLEM
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("KJUDGE_PYTHON", sys.executable)
    candidate = tmp_path / "cpp_sum.py"
    candidate.write_text(CANDIDATE % {"tag": "ray"})
    line = json.dumps({"id": 1, "op": "check", "problem": PROBLEM, "candidate": str(candidate)})
    assert kjudge_ray.kernelbench_source(line) is not None
    kjudge_ray.connect("local")
    try:
        judge = kjudge_ray.RayJudge(1, find_binary(), "host")
        answers = []
        assert kjudge_ray.serve_stream(judge, [line], lambda a: answers.append(json.loads(a))) == 1
    finally:
        ray.shutdown()
    verdict = answers[0]["verdict"]
    assert verdict["outcome"] == "PASS", verdict["message"]
    assert verdict["metadata"]["build"]["from_cache"] is True
    assert verdict["metadata"]["build"]["calls"] == {"loaded": 1, "replayed": 0, "made": 0}
