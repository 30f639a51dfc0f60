"""The one runner of KernelBench-format expectations: a folder of `<problem>/problem.py` and
`<problem>/candidates/<name>.py`, and `expect.tsv` (problem, candidate, outcome, reason, and
optionally what KernelBench's own allclose says: correct, incorrect, unknown, or - for not
pinned). A reason may list alternatives ("mismatch|nonfinite": a candidate that leaves memory
unwritten fails by whatever that memory holds). Each candidate is judged by one warm Evaluator;
every row that disagrees is reported.

    python -m kjudge.kernelbench.expect examples/kernelbench [--only relu] [--jobs 8]"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from kjudge.kernelbench.evaluate import Evaluator, Settings

_KB_WORDS = {True: "correct", False: "incorrect", None: "unknown"}


def read_expectations(folder: str) -> list[list[str]]:
    path = os.path.join(folder, "expect.tsv")
    rows = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.rstrip("\n").split("\t")
            if number == 1 or not line.strip() or line.startswith("#"):
                continue
            if len(fields) not in (4, 5):
                raise SystemExit(f"{path}:{number}: 4 or 5 tab-separated fields, not "
                                 f"{len(fields)}")
            rows.append(fields)
    return rows


def holds(outcome: str, reason: str, want_outcome: str, want_reason: str) -> bool:
    """Whether a verdict's outcome and reason are the row's (one of its reasons)."""
    return outcome == want_outcome and reason in want_reason.split("|")


def run(folder: str, *, only: list[str] = (), settings: Settings | None = None, jobs: int = 1,
        log=sys.stdout) -> list[str]:
    """Judges every row (`jobs` at once, each thread with a warm Evaluator of its own); prints a
    line per row in the file's order and returns the disagreements ("relu/partial:
    FAIL(nonfinite) (KernelBench incorrect), expected FAIL(mismatch)"), empty when all hold."""
    settings = settings or Settings(run_timeout=20.0)
    rows = [r for r in read_expectations(folder) if not only or r[0] in only]
    local = threading.local()
    judges: list[Evaluator] = []

    def judge_row(row: list[str]) -> tuple[bool, str, str]:
        if not hasattr(local, "judge"):
            local.judge = Evaluator(settings)
            judges.append(local.judge)
        problem, candidate, outcome, reason = row[:4]
        began = time.perf_counter()
        v = local.judge.check(os.path.join(folder, problem, "problem.py"),
                              os.path.join(folder, problem, "candidates", candidate + ".py"))
        got, want = f"{v['outcome']}({v['reason']})", f"{outcome}({reason})"
        kb = _KB_WORDS[v["kernelbench_correctness"]]
        ok = holds(v["outcome"], v["reason"], outcome, reason) and \
            (len(row) < 5 or row[4] in ("-", kb))
        line = (f"{'ok  ' if ok else 'FAIL'} {problem}/{candidate}: {got} (KernelBench: {kb}) "
                f"{time.perf_counter() - began:.1f} s")
        if not ok:
            line += f"  expected {want}" + (f", KernelBench {row[4]}" if len(row) == 5 else "")
            line += f"\n     {v['message'][:400]}"
        return ok, line, f"{problem}/{candidate}: {got} (KernelBench {kb}), expected {want}"

    wrong = []
    try:
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for ok, line, summary in pool.map(judge_row, rows):
                print(line, file=log, flush=True)
                if not ok:
                    wrong.append(summary)
    finally:
        for judge in judges:
            judge.close()
    return wrong


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kjudge.kernelbench.expect")
    p.add_argument("folder")
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--device", default=None)
    p.add_argument("--unconfined", action="store_true")
    p.add_argument("--jobs", type=int, default=1, help="checks at once (default 1)")
    args = p.parse_args(argv)
    settings = Settings(run_timeout=20.0, device=args.device, confine=not args.unconfined,
                        require_confinement=not args.unconfined)
    wrong = run(args.folder, only=args.only, settings=settings, jobs=args.jobs)
    rows = len([r for r in read_expectations(args.folder) if not args.only or r[0] in args.only])
    print(f"{rows - len(wrong)} of {rows} expectations hold")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
