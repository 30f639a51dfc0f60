"""`python -m kjudge.kernelbench.serve`: `kjudge serve`'s protocol for KernelBench-format
problems, so `kjudge run` judges a suite of them as it judges a suite of kjudge problems: each
request line `{"id", "op": "check"|"bench", "problem": PROBLEM.py or its folder, "candidate":
PATH}` (or `"source"` and `"name"`) is answered with `{"id", "verdict"}`, the adapter's verdict
(docs/kernelbench.md) with the fields a run's results line reads (`manifest`, `timer`,
`baseline_speedup`), or `{"id", "error"}` for a problem that cannot be judged or a request that
cannot be carried out. One warm Evaluator judges the requests in order. The first line out is
`{"ready": true}`: a child that ends after it ended on a sample (`kjudge run` then gives that
sample a FAIL and starts another), one that ends before it could not start.

A candidate that breaks the judge (an exception the adapter did not foresee) is that
candidate's FAIL, never an error of the run: verdicts are rewards.

usage: python -m kjudge.kernelbench.serve [--device cuda:0|cpu] [--timeout S]"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import tempfile
from typing import Optional

import kjudge
from kjudge.kernelbench.evaluate import Evaluator, ProblemError, Settings, judge_fault_verdict


def _problem_file(path: str) -> str:
    return os.path.join(path, "problem.py") if os.path.isdir(path) else path


def answer(judges: dict, request: dict, settings: Settings) -> dict:
    rid = request.get("id")
    op = request.get("op", "check")
    if op not in ("check", "bench") or "problem" not in request:
        return {"id": rid, "error": {"kind": "bad_request",
                                     "message": "give op check or bench and a problem"}}
    problem = _problem_file(str(request["problem"]))
    if not os.path.isfile(problem):
        return {"id": rid, "error": {"kind": "spec_error", "message": f"{problem}: no such file"}}
    with open(problem, "rb") as f:
        problem_hash = hashlib.sha256(f.read()).hexdigest()
    bench = op == "bench"
    if bench not in judges:  # one warm judge per mode, made when first asked for
        judges[bench] = Evaluator(dataclasses.replace(settings, bench=bench))
    judge = judges[bench]
    temporary = None
    candidate = request.get("candidate")
    if candidate is None:  # the source as text: written where the evaluator reads a file
        temporary = tempfile.NamedTemporaryFile("w", suffix=".py", delete=False)
        temporary.write(str(request.get("source", "")))
        temporary.close()
        candidate = temporary.name
    try:
        verdict = judge.check(problem, candidate)
    except ProblemError as e:
        return {"id": rid, "error": {"kind": "spec_error", "message": str(e)}}
    except Exception as e:  # noqa: BLE001: whatever broke, this candidate was on the stand
        judges.pop(bench).close()  # its spare worker and state are suspect: a new judge next
        verdict = judge_fault_verdict(problem, candidate, settings.policy, e)
    finally:
        if temporary is not None:
            os.unlink(temporary.name)
    verdict.setdefault("manifest", {"problem_hash": problem_hash,
                                    "kjudge_version": kjudge.__version__})
    verdict.setdefault("timer", "cuda_events" if str(judge.device).startswith("cuda") else
                       "host_cpu")
    verdict.setdefault("baseline_speedup", None)
    return {"id": rid, "verdict": verdict}


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kjudge.kernelbench.serve")
    p.add_argument("--device", default=None)
    p.add_argument("--timeout", type=float, default=60.0)
    args = p.parse_args(argv)
    settings = Settings(device=args.device, run_timeout=args.timeout)
    judges: dict = {}
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                request = json.loads(line)
            except ValueError as e:
                reply = {"id": None, "error": {"kind": "bad_request", "message": f"not JSON: {e}"}}
            else:
                reply = answer(judges, request, settings) if isinstance(request, dict) else \
                    {"id": None, "error": {"kind": "bad_request", "message": "not an object"}}
            sys.stdout.write(json.dumps(reply, default=str) + "\n")
            sys.stdout.flush()
    finally:
        for judge in judges.values():
            judge.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
