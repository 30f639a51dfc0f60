#!/usr/bin/env python3
"""kjudge mutate's throughput over the bundled suite: one campaign over every problem (a fresh
state folder, a warm NVRTC cache after the first stage), mutants executed per second end to end
against the target of 200/s, the split by stage (generate, compile, dedup, execute), and the
escape-rate table with intervals, the set-cover curve and the held-out scores from its reports.
The campaign's standard error is kept beside them (with KJUDGE_TRACE=1: where the time went).

usage: bench/bench_mutate.py KJUDGE [--budget N] [--backend cuda|host] [--out DIR] [PROBLEM...]
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_PER_S = 200


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kjudge")
    ap.add_argument("--budget", type=int, default=0)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--out", help="keep the reports here")
    ap.add_argument("problems", nargs="*")
    args = ap.parse_intermixed_args()
    root = Path(__file__).resolve().parent.parent
    problems = args.problems or sorted(
        str(p.parent) for p in (root / "problems").glob("*/problem.toml"))
    out = Path(args.out or tempfile.mkdtemp(prefix="kj-bench-mutate-"))
    out.mkdir(parents=True, exist_ok=True)
    cmd = [args.kjudge, "mutate", *problems, "--backend", args.backend, "--fresh",
           "--state", str(out / "state"), "--json", str(out / "mutate.json"),
           "--jsonl", str(out / "mutate.jsonl"), "--html", str(out / "mutate.html")]
    if args.budget:
        cmd += ["--budget", str(args.budget)]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    (out / "mutate.stderr").write_text(proc.stderr)  # KJUDGE_TRACE=1 puts the phases there
    print(proc.stdout)
    if proc.returncode != 0:
        print(proc.stderr[-4000:], file=sys.stderr)
        print(f"mutate campaign failed: exit {proc.returncode}")
        return 1
    report = json.loads((out / "mutate.json").read_text())
    stages = report["config"]["stage_seconds"]
    rows = [json.loads(l) for l in (out / "mutate.jsonl").read_text().splitlines() if l.strip()]
    executed = sum(1 for r in rows if r["status"] in ("killed", "not_killable"))
    considered = sum(1 for r in rows if r["status"] != "not_run")
    rate = executed / wall if wall > 0 else 0
    print(f"mutants: {len(rows)} generated, {considered} compiled, {executed} executed, "
          f"{len(problems)} problems")
    print("stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in stages.items()) +
          f"; wall {wall:.1f} s")
    print(f"throughput, end to end: {rate:.1f} executed mutants/s "
          f"(target >= {TARGET_PER_S}/s: {'met' if rate >= TARGET_PER_S else 'MISSED'})")
    print(f"reports in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
