"""kjudge.ray: `kjudge serve`'s protocol over a Ray cluster. `python -m kjudge.ray` reads request
lines on standard input and writes each answer line when it is ready (as `serve --unordered`),
but each request is a Ray task on one of a pool of actors, each actor holding a warm `kjudge
serve` of its own (one per GPU of each node, or --actors of them on the host backend). An actor
lost mid-run (its process or its node) is restarted by Ray and its task retried, and the driver
writes one answer per request, so nothing is lost or answered twice. `kjudge run --ray ADDRESS`
starts this as its judge: the run's folder, resume and summaries stay `kjudge run`'s.

A KernelBench-format request whose candidate calls load_inline gets a build task first (one
CPU, on whichever node has one free): the candidate is built there by a confined build worker
(kjudge.kernelbench.build), for the toolchain of the actor that will judge it, and the actor
puts the build in its node's cache before its serve reads the request, so the judge loads it.
A node whose toolchain differs builds nothing, and the judge builds as it would alone.

usage: python -m kjudge.ray [--address ADDRESS|local] [--actors N] [--backend auto|cuda|host]
                            [--kjudge PATH]
"local" starts a one-machine cluster bound to 127.0.0.1, without the dashboard.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from typing import Optional

import ray


@ray.remote(num_cpus=1)
def build_task(source: str, arch_list: str, identity: str) -> Optional[dict]:
    """A KernelBench candidate's load_inline builds, made on this node for a judge elsewhere;
    None where none was made. Whatever the candidate's build does, the task ends with an answer:
    a failed task would fail its judge's task too, an error of the run the candidate chose."""
    from kjudge.kernelbench.build import build_for
    try:
        return build_for(source, arch_list, identity)
    except Exception:  # noqa: BLE001: the judge builds it itself, as it would alone
        return None


def kernelbench_source(line: str) -> Optional[str]:
    """The candidate source of a KernelBench-format request that builds (calls load_inline)."""
    from kjudge.kernelbench.serve import _problem_file, candidate_source
    try:
        request = json.loads(line)
    except ValueError:
        return None
    if not isinstance(request, dict) or not str(request.get("problem", "")) or \
            not _problem_file(str(request["problem"])).endswith(".py"):
        return None
    source = candidate_source(request)
    return source if source and "load_inline" in source else None


@ray.remote(max_restarts=-1, max_task_retries=-1)
class JudgeActor:
    """One warm `kjudge serve`; requests one at a time (a bench holds its device alone)."""

    def __init__(self, kjudge: str, backend: str):
        self._backend = backend
        self._toolchain: Optional[tuple[str, str]] = None
        # A KernelBench-format request is handed by serve to the Python adapter: this actor's
        # Python (with kjudge and torch) unless the node's environment names another.
        env = {"KJUDGE_PYTHON": sys.executable, **os.environ}
        self._serve = subprocess.Popen([kjudge, "serve", "--backend", backend],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                       env=env)

    def toolchain(self) -> tuple[str, str]:
        """(arch list, toolchain identity) of the builds this actor's serve loads."""
        if self._toolchain is None:
            from kjudge.kernelbench.build import toolchain_of
            self._toolchain = toolchain_of("cpu" if self._backend == "host" else None)
        return self._toolchain

    def judge(self, line: str, built: Optional[dict] = None) -> str:
        if built is not None:  # a build task's build: into this node's cache, where serve looks
            from kjudge.kernelbench.build import default_cache_root, store_build
            source, root = kernelbench_source(line), default_cache_root()
            if source is not None and root:
                try:
                    store_build(root, self.toolchain()[1], source, built)
                except OSError:
                    pass  # no cache here: the judge builds
        self._serve.stdin.write(line.rstrip("\n") + "\n")
        self._serve.stdin.flush()
        answer = self._serve.stdout.readline()
        if not answer:  # serve died: this actor is no use; Ray restarts it and retries the task
            os._exit(1)
        return answer.rstrip("\n")

    def pid(self) -> int:
        return os.getpid()


class RayJudge:
    """The driver: a pool of JudgeActor, requests spread to the least busy actor."""

    def __init__(self, actors: int, kjudge: str, backend: str, gpus_per_actor: float = 0):
        options = {"num_gpus": gpus_per_actor} if gpus_per_actor else {"num_cpus": 0}
        self.actors = [JudgeActor.options(**options).remote(kjudge, backend)
                       for _ in range(actors)]
        self._busy = [0] * actors
        self._lock = threading.Lock()
        self._toolchains: dict[int, tuple[str, str]] = {}

    def submit(self, line: str):
        """The answer's ObjectRef (ray.get gives the answer line) and the actor's index."""
        with self._lock:
            which = min(range(len(self.actors)), key=self._busy.__getitem__)
            self._busy[which] += 1
        built = None
        source = kernelbench_source(line)
        if source is not None:
            if which not in self._toolchains:
                self._toolchains[which] = ray.get(self.actors[which].toolchain.remote())
            arch, identity = self._toolchains[which]
            built = build_task.remote(source, arch, identity)
        return self.actors[which].judge.remote(line, built), which

    def done(self, which: int) -> None:
        with self._lock:
            self._busy[which] -= 1


def _answer_for_a_lost_request(line: str, error: Exception) -> str:
    """A request Ray could not carry out even with retries: an internal error naming it, never a
    verdict, so the run's resume judges it again."""
    try:
        rid = json.loads(line).get("id")
    except ValueError:
        rid = None
    return json.dumps({"id": rid, "error": {"kind": "internal",
                                            "message": f"kjudge.ray: {type(error).__name__}: {error}"}})


def serve_stream(judge: RayJudge, lines, write) -> int:
    """Every line of `lines` judged; `write(answer_line)` called once per request, as answers
    come. Returns the number of requests."""
    pending = {}  # ObjectRef -> (line, actor)
    total = 0
    source = iter(lines)
    exhausted = False
    window = 4 * len(judge.actors)  # enough queued to keep every actor busy
    while pending or not exhausted:
        while not exhausted and len(pending) < window:
            line = next(source, None)
            if line is None:
                exhausted = True
                break
            if not line.strip():
                continue
            ref, which = judge.submit(line)
            pending[ref] = (line, which)
            total += 1
        if not pending:
            break
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            line, which = pending.pop(ref)
            judge.done(which)
            try:
                write(ray.get(ref))
            except ray.exceptions.RayError as e:
                write(_answer_for_a_lost_request(line, e))
    return total


def connect(address: Optional[str]) -> None:
    """Joins the cluster at ADDRESS, or ("local") starts one on this machine on loopback only."""
    if address in (None, "", "local"):
        ray.init(include_dashboard=False, _node_ip_address="127.0.0.1",
                 configure_logging=False, log_to_driver=False)
    else:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)


def _default_actors(backend: str) -> tuple[int, float]:
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if backend != "host" and gpus > 0:
        return gpus, 1.0
    return 2, 0.0


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kjudge.ray", description=__doc__.split("\n\n")[0])
    p.add_argument("--address", default="local")
    p.add_argument("--actors", type=int, default=0, help="judges (default: one per GPU, else 2)")
    p.add_argument("--backend", default="auto", choices=["auto", "cuda", "host"])
    p.add_argument("--kjudge", default=None, help="the kjudge executable (default: the package's)")
    args = p.parse_args(argv)
    from kjudge.judge import find_binary
    kjudge = find_binary(args.kjudge)
    connect(args.address)
    count, gpus = _default_actors(args.backend)
    judge = RayJudge(args.actors or count, kjudge, args.backend, gpus)

    def write(answer: str) -> None:
        sys.stdout.write(answer + "\n")
        sys.stdout.flush()

    serve_stream(judge, sys.stdin, write)
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
