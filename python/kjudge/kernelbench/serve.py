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

Requests are read as they come, ahead of judging: each candidate that calls load_inline is
handed to a build farm (kjudge.kernelbench.build, `--build-jobs` confined build workers, no GPU
in sight) at once, so the next candidates build while one is judged, and its judge loads the
builds. Answers still come in the requests' order.

usage: python -m kjudge.kernelbench.serve [--device cuda:0|cpu] [--timeout S] [--build-jobs N]
                                          [--build-cache DIR]"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import queue
import sys
import tempfile
import threading
from typing import Optional

import kjudge
from kjudge.kernelbench.build import BuildFarm
from kjudge.kernelbench.evaluate import (Evaluator, ProblemError, Settings, default_device,
                                         judge_fault_verdict)


def _problem_file(path: str) -> str:
    return os.path.join(path, "problem.py") if os.path.isdir(path) else path


def answer(judges: dict, request: dict, settings: Settings, build=None) -> dict:
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
        verdict = judge.check(problem, candidate, build)
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


def candidate_source(request: dict) -> Optional[str]:
    """The request's candidate source, or None where there is none to read."""
    if "candidate" not in request:
        return str(request.get("source", ""))
    try:
        with open(str(request["candidate"])) as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def read_ahead(lines, farm: Optional[BuildFarm], into: queue.Queue) -> None:
    """Each line parsed as it comes and queued with its build (a Future, or None), started at
    once, or (None, why) for a line that is not JSON; None queued at the end."""
    for line in lines:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError as e:
            into.put((None, f"not JSON: {e}"))
            continue
        build = None
        if farm is not None and isinstance(request, dict):
            source = candidate_source(request)
            if source and "load_inline" in source:
                build = farm.submit(source)
        into.put((request, build))
    into.put(None)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kjudge.kernelbench.serve")
    p.add_argument("--device", default=None)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--build-jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1),
                   help="build workers beside the judge (0: each candidate builds in its judge)")
    p.add_argument("--build-cache", default=None,
                   help="the build cache's folder (default: kjudge's cache folder)")
    args = p.parse_args(argv)
    settings = Settings(device=args.device, run_timeout=args.timeout)
    judges: dict = {}
    farm = None
    if args.build_jobs > 0:
        try:
            farm = BuildFarm(args.build_jobs, settings.device or default_device(),
                             cache_root=args.build_cache, timeout=settings.compile_timeout,
                             confine=settings.confine,
                             require_confinement=settings.require_confinement,
                             memory_bytes=settings.memory_limit_bytes)
        except Exception as e:  # noqa: BLE001: without a farm each candidate builds in its judge
            print(f"kjudge.kernelbench.serve: no build farm: {type(e).__name__}: {e}",
                  file=sys.stderr)
        if farm is not None and farm.cache_refused:
            print(f"kjudge.kernelbench.serve: no build cache: {farm.cache_refused}",
                  file=sys.stderr)
    requests: queue.Queue = queue.Queue()
    threading.Thread(target=read_ahead, args=(sys.stdin, farm, requests), daemon=True).start()
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    try:
        while (item := requests.get()) is not None:
            request, build = item
            if request is None:
                reply = {"id": None, "error": {"kind": "bad_request", "message": build}}
            elif not isinstance(request, dict):
                reply = {"id": None, "error": {"kind": "bad_request", "message": "not an object"}}
            else:
                built = None
                if build is not None:
                    try:
                        built = build.result()
                    except Exception:  # noqa: BLE001: without its build, a judge builds
                        built = None
                reply = answer(judges, request, settings, built)
            sys.stdout.write(json.dumps(reply, default=str) + "\n")
            sys.stdout.flush()
    finally:
        for judge in judges.values():
            judge.close()
        if farm is not None:
            farm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
