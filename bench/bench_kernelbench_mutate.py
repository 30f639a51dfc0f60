"""A mutation campaign on KernelBench-format solutions (`kjudge mutate --kernelbench`), end to
end on one GPU node: mutants per second, the split of its seconds, and the escape table of the
checkers (kjudge, kernelbench-v0, kernelbench, torch-defaults). Needs torch, triton, nvcc and a
GPU.

The suite is examples/kernelbench's correct solutions, copied into a fresh folder: the Triton
ones of softmax_small, matmul, row_sum and relu, and relu's inline-CUDA one (each of its mutants
a load_inline build of about a minute and a half on one core, made by the build farm while the
Triton mutants are judged; relu comes last so its builds have that long). A fresh state folder
and a fresh build cache: nothing is reused.

usage: bench_kernelbench_mutate.py [--budget N] [--judges K] [--build-jobs J] [--out DIR]
                                   [--cuda NAMES]"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples", "kernelbench")
# (problem, its solutions) in the order they are judged.
SUITE = [("softmax_small", ["triton_correct"]), ("matmul", ["triton_correct"]),
         ("row_sum", ["triton_correct"]), ("relu", ["triton_correct", "cuda_correct"])]


def make_suite(folder: str, cuda: set[str]) -> None:
    with open(os.path.join(folder, "manifest.toml"), "w") as manifest:
        for problem, solutions in SUITE:
            os.makedirs(os.path.join(folder, problem, "solutions"))
            shutil.copy(os.path.join(EXAMPLES, problem, "problem.py"),
                        os.path.join(folder, problem))
            for s in solutions:
                if s.startswith("cuda") and problem not in cuda:
                    continue
                shutil.copy(os.path.join(EXAMPLES, problem, "candidates", s + ".py"),
                            os.path.join(folder, problem, "solutions"))
            manifest.write(f'[[problem]]\nname = "{problem}"\npath = "{problem}"\n\n')


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--budget", type=int, default=0)
    p.add_argument("--build-jobs", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    p.add_argument("--judges", type=int, default=4, help="mutants judged at once")
    p.add_argument("--out", default=os.environ.get("OUT") or tempfile.mkdtemp())
    p.add_argument("--cuda", default="relu", help="problems whose inline-CUDA solution is mutated")
    args = p.parse_args()
    folder = tempfile.mkdtemp(prefix="kjudge-mutate-suite-")
    make_suite(folder, set(filter(None, args.cuda.split(","))))
    cache = tempfile.mkdtemp(prefix="kjudge-cache-")
    env = dict(os.environ, XDG_CACHE_HOME=cache, PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "kjudge.kernelbench.mutate", folder,
               "--state", os.path.join(cache, "state"), "--build-jobs", str(args.build_jobs),
               "--judges", str(args.judges),
               "--html", os.path.join(args.out, "kernelbench_mutate.html"),
               "--json", os.path.join(args.out, "kernelbench_mutate.json"),
               "--campaign", os.path.join(args.out, "kernelbench_campaign.json")]
    if args.budget:
        command += ["--budget", str(args.budget)]
    began = time.perf_counter()
    r = subprocess.run(command, env=env)
    print(f"the campaign, end to end: {time.perf_counter() - began:.1f} s (exit {r.returncode})")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
