"""`kjudge kernelbench PROBLEM.py CANDIDATE.py...` (also `python -m kjudge.kernelbench`): one
verdict per candidate, a line each or JSON. Exit status as kjudge check's: 0 all passed, 1 a
FAIL, 2 bad input (named on standard error), 3 an ERROR."""
from __future__ import annotations

import argparse
import json
import sys

def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kjudge kernelbench", description=(
        "Judges KernelBench-format candidates (ModelNew) against a problem (Model, get_inputs, "
        "get_init_inputs): float64 golden, kjudge's policy, the candidate in a confined worker."))
    p.add_argument("problem")
    p.add_argument("candidates", nargs="+")
    p.add_argument("--json", action="store_true", help="one JSON verdict per line")
    p.add_argument("--bench", action="store_true", help="time it beside the reference")
    p.add_argument("--backward", action="store_true", help="compare gradients too")
    p.add_argument("--policy", default="relative", help="kjudge's policy (default relative)")
    p.add_argument("--seeds", default="42,43,44", help="seeds for get_inputs (default 42,43,44)")
    p.add_argument("--scalings", default="64,0.015625",
                   help="factors for extra cases from the first seed's inputs ('' for none)")
    p.add_argument("--device", default=None, help="cuda:N or cpu (default cuda:0 if any)")
    p.add_argument("--forbid", action="append", default=None, metavar="OP",
                   help="a torch op the candidate may not call (aten.mm); repeatable")
    p.add_argument("--allow-torch", action="store_true",
                   help="forbid no torch op (not even the problem's own)")
    p.add_argument("--record", default=None, metavar="DIR",
                   help="replay recorded inputs, weights and predictions from DIR")
    p.add_argument("--trials", type=int, default=100)
    p.add_argument("--kernelbench-tolerance", type=float, default=1e-2)
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per step of a run")
    p.add_argument("--unconfined", action="store_true",
                   help="run the worker without its sandbox (machines without user namespaces "
                        "or Landlock); the verdict's isolation says so")
    return p


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    return make_parser().parse_args(argv)


def settings_from(args: argparse.Namespace):
    from kjudge.kernelbench.evaluate import Settings

    def numbers(text: str, kind):
        return [kind(x) for x in text.split(",") if x.strip()]
    try:
        seeds, scalings = numbers(args.seeds, int), numbers(args.scalings, float)
    except ValueError as e:
        raise SystemExit(_bad(f"--seeds/--scalings: {e}"))
    if not seeds:
        raise SystemExit(_bad("--seeds: at least one seed"))
    if args.trials < 1:
        raise SystemExit(_bad("--trials: at least 1"))
    return Settings(seeds=seeds, scalings=scalings, device=args.device, policy=args.policy,
                    kernelbench_tolerance=args.kernelbench_tolerance,
                    forbid=[] if args.allow_torch else args.forbid, bench=args.bench,
                    trials=args.trials, backward=args.backward, run_timeout=args.timeout,
                    record=args.record,
                    confine=not args.unconfined, require_confinement=not args.unconfined,
                    defences_off=[flag for flag, on in (("--unconfined", args.unconfined),
                                                        ("--allow-torch", args.allow_torch)) if on])


def _bad(message: str) -> int:
    print(f"kjudge kernelbench: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(sys.argv[1:] if argv is None else argv)
    settings = settings_from(args)
    from kjudge.kernelbench.evaluate import Evaluator
    from kjudge.kernelbench.problem import ProblemError
    status = 0
    with Evaluator(settings) as judge:
        for candidate in args.candidates:
            try:
                verdict = judge.check(args.problem, candidate)
            except ProblemError as e:
                return _bad(str(e))
            print(json.dumps(verdict) if args.json else one_line(verdict), flush=True)
            status = max(status, {"PASS": 0, "FAIL": 1}.get(verdict["outcome"], 3))
    return status


def one_line(v: dict) -> str:
    """PASS/FAIL(reason) candidate: message, times, KernelBench's own verdict beside."""
    head = v["outcome"] if v["reason"] == "none" else f"{v['outcome']}({v['reason']})"
    parts = [f"{head} {v['candidate']}"]
    if v["message"]:
        parts.append(v["message"].splitlines()[0][:300])
    if v["runtime"] > 0:
        parts.append(f"{v['runtime']:.4g} ms (reference {v['ref_runtime']:.4g} ms, "
                     f"speedup {v['speedup']:.3g})")
    kb = {True: "correct", False: "incorrect", None: "unknown"}[v["kernelbench_correctness"]]
    parts.append(f"KernelBench's allclose: {kb}")
    if v.get("defences_off"):
        parts.append(f"defences off: {', '.join(v['defences_off'])}")
    return " | ".join(parts)


if __name__ == "__main__":
    sys.exit(main())
