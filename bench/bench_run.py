"""`kjudge run` throughput on the host backend: samples per second over the bundled candidates of
a few problems, in one process (--jobs 1 and 2) and on a local Ray cluster (--actors 1 and 2),
each after a warm-up run so the compile caches are warm for all; the Ray ratio (2 actors over 1)
is the issue's figure. Ray's start is inside each run's time, as a user sees it.

usage: python bench/bench_run.py KJUDGE [PROBLEM ...]   (default: vector_add relu softmax)"""
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(kjudge: str, problems: list[str], out: Path, *extra: str) -> tuple[float, int]:
    only = [a for p in problems for a in ("--only", p)]
    began = time.perf_counter()
    done = subprocess.run([kjudge, "run", str(ROOT / "problems"), *only, "--backend", "host",
                           "--runs", "1", "--out", str(out), *extra], capture_output=True,
                          text=True, env={**os.environ, "KJUDGE_PYTHON": sys.executable})
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"bench_run: kjudge run {' '.join(extra)} exited {done.returncode}: "
                 f"{done.stderr[-500:]}")
    return seconds, int(re.search(r"(\d+) samples judged", done.stdout)[1])


def main() -> int:
    kjudge = sys.argv[1]
    problems = sys.argv[2:] or ["vector_add", "relu", "softmax"]
    with tempfile.TemporaryDirectory() as tmp:
        run(kjudge, problems, Path(tmp) / "warm")
        rates = {}
        for label, extra in [("one process, --jobs 1", ()), ("one process, --jobs 2", ("--jobs", "2")),
                             ("Ray local, 1 actor", ("--ray", "local", "--actors", "1")),
                             ("Ray local, 2 actors", ("--ray", "local", "--actors", "2"))]:
            seconds, samples = run(kjudge, problems, Path(tmp) / label.replace(" ", "_"), *extra)
            rates[label] = samples / seconds
            print(f"{label:24s} {samples} samples in {seconds:6.1f} s: {rates[label]:5.2f} samples/s")
    print(f"Ray, 2 actors over 1: {rates['Ray local, 2 actors'] / rates['Ray local, 1 actor']:.2f}x "
          f"({os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
