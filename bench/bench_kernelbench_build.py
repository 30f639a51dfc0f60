"""Where a KernelBench candidate's load_inline build spends its seconds, and what the compile
stage (kjudge.kernelbench.build) buys a stream of candidates. Needs torch, nvcc and kjudge; the
throughput part needs a GPU.

1. split: examples/kernelbench/softmax_small's inline-CUDA candidate built once by torch in a
   fresh folder (the whole load_inline), then each of the commands of its build.ninja run
   again alone (the C++ translation unit with torch/extension.h, the CUDA one, the link), the
   CUDA one split into nvcc's phases (`nvcc --time`: preprocessing, cudafe++ the host front
   end, cicc the device compiler, ptxas, the host compile of cudafe++'s output).
2. stream: N distinct copies of that candidate (a comment apart) judged through
   `python -m kjudge.kernelbench.serve`, each building in its judge (--build-jobs 0) and with
   the build farm (--build-jobs J), on a fresh build cache each: wall time and candidates/hour.

usage: bench_kernelbench_build.py [--parts split,stream] [--candidates N] [--build-jobs J]"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "kernelbench", "softmax_small")
CANDIDATE = os.path.join(EXAMPLE, "candidates", "cuda_correct.py")


def split() -> None:
    import torch  # noqa: F401: the build's environment, as a worker has it
    folder = tempfile.mkdtemp(prefix="kjudge-split-")
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=folder, MAX_JOBS="1")
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"exec(open({CANDIDATE!r}).read())"], env=env,
                   check=True, capture_output=True)
    whole = time.perf_counter() - began
    (build,) = [os.path.join(folder, d) for d in os.listdir(folder)]
    commands = subprocess.run(["ninja", "-t", "commands"], cwd=build, capture_output=True,
                              text=True, check=True).stdout.splitlines()
    print(f"load_inline, whole (MAX_JOBS=1, a fresh folder): {whole:.1f} s")
    for command in commands:
        phases = os.path.join(folder, "nvcc_time.csv")
        timed = command + f" --time {phases}" if "nvcc" in command.split()[0] else command
        began = time.perf_counter()
        subprocess.run(timed, shell=True, cwd=build, check=True, capture_output=True)
        seconds = time.perf_counter() - began
        words = shlex.split(command)
        what = next((w for w in words if re.search(r"\.(cpp|cu)$", w)), "link")
        print(f"  {os.path.basename(words[0])} {os.path.basename(what)}: {seconds:.1f} s")
        if timed != command and os.path.exists(phases):
            with open(phases) as f:
                rows = [line.split(",") for line in f.read().splitlines()[1:]]
            # columns: ..., phase name (2nd), ..., the time, its unit (ms)
            print("    " + ", ".join(f"{r[1].strip()} {float(r[-2]) / 1000:.1f} s" for r in rows
                                     if len(r) > 3 and r[-1].strip() == "ms"))


def stream(count: int, jobs: int) -> None:
    with open(CANDIDATE) as f:
        source = f.read()
    folder = tempfile.mkdtemp(prefix="kjudge-stream-")
    requests = []
    for i in range(count):
        path = os.path.join(folder, f"c{i}.py")
        with open(path, "w") as f:
            f.write(f"# copy {i}\n" + source)
        requests.append({"id": i, "op": "check", "problem": EXAMPLE, "candidate": path})
    text = "".join(json.dumps(r) + "\n" for r in requests)
    for build_jobs in (0, jobs):
        cache = tempfile.mkdtemp(prefix="kjudge-cache-")
        began = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "kjudge.kernelbench.serve", "--build-jobs",
                              str(build_jobs), "--build-cache", cache], input=text,
                             capture_output=True, text=True)
        seconds = time.perf_counter() - began
        answers = [json.loads(line) for line in out.stdout.splitlines() if '"id"' in line]
        verdicts = [a.get("verdict", {}) for a in answers]
        outcomes = sorted({f"{v.get('outcome')}({v.get('reason')})" for v in verdicts})
        loaded = sum(v.get("metadata", {}).get("build", {}).get("calls", {}).get("loaded", 0)
                     for v in verdicts)
        compile_s = [v.get("compile_seconds") or 0 for v in verdicts]
        print(f"{count} distinct inline-CUDA candidates, --build-jobs {build_jobs}: {seconds:.1f} s"
              f" ({count / seconds * 3600:.0f} candidates/hour); verdicts {outcomes}; builds "
              f"loaded {loaded}; the judge's import {min(compile_s):.1f} to {max(compile_s):.1f} s")
        if out.returncode != 0:
            print(out.stderr[-2000:])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="split,stream")
    p.add_argument("--candidates", type=int, default=4)
    p.add_argument("--build-jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    args = p.parse_args()
    parts = args.parts.split(",")
    if "split" in parts:
        split()
    if "stream" in parts:
        stream(args.candidates, args.build_jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
