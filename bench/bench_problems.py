#!/usr/bin/env python3
"""`kjudge bench` on every solution of the bundled problems: the table the closing notes quote
(per problem and solution: the reference's time, the candidate's, the speedup with its 95%
interval, the fraction of the physical floor, and the recorded baseline where the problem has
one for this GPU). Each run's JSON report is kept in OUTDIR.

usage: bench_problems.py KJUDGE OUTDIR [--min-time S] [--only PROBLEM ...] [--solution FILE.cu ...]
"""
import argparse
import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench(kjudge, problem_dir, candidate, report, min_time, cache):
    cmd = [kjudge, "bench", problem_dir, "--candidate", candidate, "--json", report,
           "--min-time", str(min_time), "--cache", cache]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    try:
        with open(report) as f:
            return json.load(f), run
    except (OSError, ValueError):
        return None, run


def ms(x):
    return "-" if x is None else f"{x:.4g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kjudge")
    ap.add_argument("outdir")
    ap.add_argument("--min-time", type=float, default=0.3)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--solution", action="append", default=[],
                    help="bench only solutions of this file name (e.g. fast.cu)")
    args = ap.parse_args()
    kjudge = os.path.abspath(args.kjudge)
    os.makedirs(args.outdir, exist_ok=True)
    cache = os.path.join(args.outdir, "cache")
    rows, failed = [], 0
    for problem_dir in sorted(glob.glob(os.path.join(ROOT, "problems", "*", "problem.toml"))):
        problem_dir = os.path.dirname(problem_dir)
        problem = os.path.basename(problem_dir)
        if args.only and problem not in args.only:
            continue
        for candidate in sorted(glob.glob(os.path.join(problem_dir, "solutions", "*.cu"))):
            name = os.path.basename(candidate)
            if args.solution and name not in args.solution:
                continue
            report_path = os.path.join(args.outdir, f"{problem}-{name[:-3]}.json")
            report, run = bench(kjudge, problem_dir, candidate, report_path, args.min_time, cache)
            if report is None or report.get("outcome") != "PASS":
                failed += 1
                outcome = report.get("outcome") if report else f"exit {run.returncode}"
                rows.append((problem, name, f"{outcome}: {(report or {}).get('message', '')}"))
                print(run.stdout[-2000:], run.stderr[-2000:], file=sys.stderr)
                continue
            ci = report.get("speedup_ci") or [None, None]
            floor = report.get("fraction_of_floor")
            baseline = report.get("baseline_runtime")
            peaks = [c["timing"]["peak_tflops"] for c in report.get("cases", [])
                     if (c.get("timing") or {}).get("peak_tflops")]
            rows.append((problem, name,
                         f"{ms(report['ref_runtime'])} ms -> {ms(report['runtime'])} ms, "
                         f"{ms(report['speedup'])}x [{ms(ci[0])}, {ms(ci[1])}], "
                         f"{'-' if floor is None else f'{100 * floor:.0f}%'} of the floor"
                         + (f", baseline {report.get('baseline')} {ms(baseline)} ms"
                            if baseline is not None else "")
                         + (f", FLOP floor at {peaks[0]:.0f} TFLOP/s" if peaks else "")))
    print("kjudge bench of the bundled solutions (reference -> candidate, speedup [95%], "
          "fraction of the physical floor)")
    for problem, name, text in rows:
        print(f"{problem + '/' + name:<40} {text}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
