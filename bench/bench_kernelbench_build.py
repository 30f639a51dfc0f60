"""Where a KernelBench candidate's load_inline build spends its seconds, and what the compile
stage (kjudge.kernelbench.build) buys a stream of candidates. Needs torch, nvcc and kjudge; the
throughput part needs a GPU.

1. split: examples/kernelbench/softmax_small's inline-CUDA candidate built once by torch in a
   fresh folder (the whole load_inline), then each of the commands of its build.ninja run
   again alone (the C++ translation unit with torch/extension.h, the CUDA one, the link), the
   CUDA one split into nvcc's phases (`nvcc --time`: preprocessing, cudafe++ the host front
   end, cicc the device compiler, ptxas, the host compile of cudafe++'s output).
2. stream: N distinct inline-CUDA candidates over examples/kernelbench's four problems (their
   cuda_correct.py, a comment apart) judged through `python -m kjudge.kernelbench.serve` with
   the build farm (--build-jobs J) on a fresh cache; the same N again (all duplicates, from the
   cache); then S others through today's serial path (--build-jobs 0, each building in its
   judge): candidates/hour of each, the farm's over the serial one's, a duplicate's cost.

usage: bench_kernelbench_build.py [--parts split,stream] [--candidates N] [--serial S]
                                  [--build-jobs J]"""
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


def whole_build(pch: str = "") -> tuple[float, str]:
    """The candidate's load_inline in a fresh folder (MAX_JOBS=1), as a build worker makes it
    (with torch's header precompiled in `pch`, where given): its seconds and build folder."""
    folder = tempfile.mkdtemp(prefix="kjudge-split-")
    record = tempfile.mkdtemp(prefix="kjudge-record-")
    env = dict(os.environ, TORCH_EXTENSIONS_DIR=folder, MAX_JOBS="1")
    code = (f"from kjudge.kernelbench import prebuilt; prebuilt.record_builds({record!r}, "
            f"{pch!r} or None); exec(open({CANDIDATE!r}).read())")
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
    (build,) = [os.path.join(folder, d) for d in os.listdir(folder)]
    return time.perf_counter() - began, build


def split() -> None:
    import torch  # noqa: F401: the build's environment, as a worker has it
    from kjudge.kernelbench.build import private_folder, toolchain_identity, torch_header_pch
    whole, build = whole_build()
    commands = subprocess.run(["ninja", "-t", "commands"], cwd=build, capture_output=True,
                              text=True, check=True).stdout.splitlines()
    print(f"load_inline, whole (MAX_JOBS=1, a fresh folder): {whole:.1f} s")
    main_cpp = None
    for command in commands:
        phases = os.path.join(build, "nvcc_time.csv")
        timed = command + f" --time {phases}" if "nvcc" in command.split()[0] else command
        began = time.perf_counter()
        subprocess.run(timed, shell=True, cwd=build, check=True, capture_output=True)
        seconds = time.perf_counter() - began
        words = shlex.split(command)
        what = next((w for w in words if re.search(r"\.(cpp|cu)$", w)), "link")
        if what.endswith("main.cpp"):
            main_cpp = command
        print(f"  {os.path.basename(words[0])} {os.path.basename(what)}: {seconds:.1f} s")
        if timed != command and os.path.exists(phases):
            with open(phases) as f:
                rows = [line.split(",") for line in f.read().splitlines()[1:]]
            # columns: ..., phase name (2nd), ..., the time, its unit (ms)
            print("    " + ", ".join(f"{r[1].strip()} {float(r[-2]) / 1000:.1f} s" for r in rows
                                     if len(r) > 3 and r[-1].strip() == "ms"))
    # The cut: torch's header precompiled (kjudge.kernelbench.build.torch_header_pch), main.cpp
    # compiled again with and without it, and the whole build with it.
    cache = private_folder(tempfile.mkdtemp(prefix="kjudge-pch-"))
    began = time.perf_counter()
    include = torch_header_pch(cache, toolchain_identity(os.environ.get("TORCH_CUDA_ARCH_LIST",
                                                                        "")))
    print(f"torch/extension.h precompiled, once per toolchain: {time.perf_counter() - began:.1f}"
          f" s ({'made' if include else 'not made'})")
    if include and main_cpp:
        objects = []
        for extra in ("", f" -I{include}"):
            out = os.path.join(build, f"main_{len(objects)}.o")
            began = time.perf_counter()
            subprocess.run(re.sub(r"-o \S+", f"-o {out}", main_cpp) + extra, shell=True,
                           cwd=build, check=True, capture_output=True)
            objects.append((time.perf_counter() - began, open(out, "rb").read()))
        print(f"  c++ main.cpp: {objects[0][0]:.1f} s, with the precompiled header "
              f"{objects[1][0]:.1f} s; the same object byte for byte: "
              f"{objects[0][1] == objects[1][1]}")
        after, _ = whole_build(include)
        print(f"load_inline, whole, with the precompiled header: {after:.1f} s (without: "
              f"{whole:.1f} s)")


PROBLEMS = ("relu", "row_sum", "softmax_small", "matmul")


def write_stream(folder: str, count: int, tag: str) -> str:
    """`count` distinct inline-CUDA candidates over the four problems (each problem's
    cuda_correct.py, a comment apart), as serve's request lines."""
    lines = []
    for i in range(count):
        problem = os.path.join(HERE, "..", "examples", "kernelbench", PROBLEMS[i % 4])
        with open(os.path.join(problem, "candidates", "cuda_correct.py")) as f:
            source = f.read()
        path = os.path.join(folder, f"{tag}{i}.py")
        with open(path, "w") as f:
            f.write(f"# copy {tag}{i}\n" + source)
        lines.append(json.dumps({"id": i, "op": "check", "problem": problem, "candidate": path}))
    return "".join(line + "\n" for line in lines)


def serve(text: str, build_jobs: int, cache: str) -> tuple[float, list[dict]]:
    began = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "kjudge.kernelbench.serve", "--build-jobs",
                          str(build_jobs), "--build-cache", cache], input=text,
                         capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if out.returncode != 0:
        print(out.stderr[-2000:])
    answers = [json.loads(line) for line in out.stdout.splitlines() if '"id"' in line]
    return seconds, [a.get("verdict", {}) for a in answers]


def report(what: str, count: int, seconds: float, verdicts: list[dict]) -> float:
    outcomes = sorted({f"{v.get('outcome')}({v.get('reason')})" for v in verdicts})
    builds = [v.get("metadata", {}).get("build", {}) for v in verdicts]
    built = [b.get("seconds", 0) for b in builds if b and not b.get("from_cache")]
    judge = sum((v.get("seconds") or 0) for v in verdicts)
    rate = count / seconds * 3600
    print(f"{what}: {count} candidates in {seconds:.1f} s, {rate:.0f} candidates/hour; verdicts "
          f"{outcomes}; fresh builds {len(built)} (mean {sum(built) / max(len(built), 1):.1f} s "
          f"each), from the cache {sum(1 for b in builds if b.get('from_cache'))}; the judge's "
          f"own seconds {judge:.1f}")
    return rate


def stream(count: int, jobs: int, serial: int) -> None:
    """The farm over `count` distinct candidates, then the same again (every one a duplicate,
    found in the cache), then today's serial path (each candidate builds in its judge) over
    `serial` others: throughput of each in one run, and a duplicate's cost."""
    folder = tempfile.mkdtemp(prefix="kjudge-stream-")
    cache = tempfile.mkdtemp(prefix="kjudge-cache-")
    text = write_stream(folder, count, "d")
    seconds, verdicts = serve(text, jobs, cache)
    farm = report(f"farm (--build-jobs {jobs})", count, seconds, verdicts)
    fresh = [v["metadata"]["build"]["seconds"] for v in verdicts
             if v.get("metadata", {}).get("build", {}).get("seconds")]
    again, verdicts = serve(text, jobs, cache)
    report("the same candidates again (duplicates: the cache)", count, again, verdicts)
    if fresh:
        print(f"a duplicate, end to end: {again / count:.2f} s, {100 * again / count / (sum(fresh) / len(fresh)):.1f}% "
              "of a fresh build's seconds")
    if serial:
        seconds, verdicts = serve(write_stream(folder, serial, "s"), 0,
                                  tempfile.mkdtemp(prefix="kjudge-cache-"))
        alone = report("serial (--build-jobs 0: each builds in its judge)", serial, seconds,
                       verdicts)
        print(f"the farm's throughput over the serial path's: {farm / alone:.1f}x")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--parts", default="split,stream")
    p.add_argument("--candidates", type=int, default=64)
    p.add_argument("--serial", type=int, default=4, help="candidates through the serial path")
    p.add_argument("--build-jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    args = p.parse_args()
    parts = args.parts.split(",")
    if "split" in parts:
        split()
    if "stream" in parts:
        stream(args.candidates, args.build_jobs, args.serial)
    return 0


if __name__ == "__main__":
    sys.exit(main())
