"""`kjudge run` end to end over the bundled suite with every bundled candidate as a sample, each
made distinct (a comment naming the sample) so every one compiles afresh: samples per second, the
judge's time split into compile, check and bench, and the suite's summary. On the GPU machine tools/gpu-check's part "run" runs it; here
`--backend host` does the same on the CPU.

usage: python bench/bench_suite.py KJUDGE [--backend auto|cuda|host] [--only PROBLEM]...
                                   [--jobs N] [--devices 0,1] [--out DIR]"""
import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def distinct_samples(into: Path, only: list[str]) -> int:
    """Every candidate of problems/*/solutions and traps, a comment line added on top of its
    launch plan's comment, so no compile cache knows it."""
    count = 0
    for problem in sorted((ROOT / "problems").iterdir()):
        if not (problem / "problem.toml").exists() or (only and problem.name not in only):
            continue
        for kind in ("solutions", "traps"):
            for cu in sorted((problem / kind).glob("*.cu")):
                target = into / problem.name / f"{kind}-{cu.stem}.cu"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(cu.read_text() + f"\n// sample {uuid.uuid4()}\n")
                count += 1
    return count


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("kjudge")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--jobs", default="1")
    ap.add_argument("--devices", default=None, help="GPUs to spread samples over (run --devices)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "samples"
        count = distinct_samples(samples, args.only)
        out = Path(args.out) if args.out else Path(tmp) / "run"
        shutil.rmtree(out, ignore_errors=True)
        only = [a for p in args.only for a in ("--only", p)]
        devices = ["--devices", args.devices] if args.devices else []
        began = time.perf_counter()
        done = subprocess.run([args.kjudge, "run", str(ROOT / "problems"), "--samples",
                               str(samples), *only, "--backend", args.backend, "--jobs",
                               args.jobs, *devices, "--out", str(out)], capture_output=True, text=True)
        seconds = time.perf_counter() - began
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 1
        judged = int(re.search(r"(\d+) samples judged", done.stdout)[1])
        print((out / "summary.md").read_text())
        split = json.loads((out / "summary.json").read_text())["judge_seconds"]
        shares = ", ".join(f"{phase} {100 * split[phase] / split['total']:.0f}%"
                           for phase in ("compile", "check", "bench")) if split["total"] else "-"
        print(f"kjudge run, {judged} distinct samples (of {count}), backend {args.backend}, "
              f"--jobs {args.jobs}{' --devices ' + args.devices if args.devices else ''}: {seconds:.1f} s, {judged / seconds:.2f} samples/s; judge "
              f"time {split['total']:.1f} s: {shares}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
