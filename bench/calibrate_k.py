#!/usr/bin/env python3
"""Calibrates relative(k) for low-precision outputs: how far past the reference's own error the
correct variants go, and how far the downgrades go, per case. The suite's bf16-output problem
(rmsnorm) and its f16 twin (made here from it by retyping the storage) are checked with k set
so large that nothing fails; each case's error over the reference's own error (the bound over
k, floors included) is then read off the JSON report. k must lie above every correct variant's
worst ratio and below every downgrade's worst (a downgrade is caught when one case exposes it).

usage: calibrate_k.py KJUDGE OUTDIR [--backend cuda|host]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUGE_K = 1e6  # nothing fails on the bound, so every case's ratio is measured

# bf16 names to f16 ones: the twin's sources.
RETYPE = [("__nv_bfloat162", "__half2"), ("__nv_bfloat16", "__half"),
          ("__bfloat1622float2", "__half22float2"), ("__floats2bfloat162_rn", "__floats2half2_rn"),
          ("__bfloat162float", "__half2float"), ("__float2bfloat16_rn", "__float2half_rn"),
          ("cuda_bf16.h", "cuda_fp16.h"), ('"bf16"', '"f16"')]

# Which candidates are correct variants and which are downgrades of the accumulation.
KINDS = {"solutions": "correct", "traps/bf16_accumulate.cu": "downgrade"}


def make_problem(outdir, dtype, k=HUGE_K):
    """rmsnorm with relative(k) on its output, in bf16 or retyped to f16."""
    src = os.path.join(ROOT, "problems", "rmsnorm")
    dst = os.path.join(outdir, f"rmsnorm_{dtype}_k{k:g}")
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("card.toml", "expect.toml"))
    for folder, _, files in os.walk(dst):
        for name in files:
            path = os.path.join(folder, name)
            text = open(path).read()
            if dtype == "f16":
                for a, b in RETYPE:
                    text = text.replace(a, b)
            if name == "problem.toml":
                text = re.sub(r'name = "rmsnorm"', f'name = "rmsnorm_{dtype}"', text)
                text = re.sub(r'policy = "relative"', f'policy = "relative({int(k)})"', text)
            open(path, "w").write(text)
    return dst


def ratios(kjudge, problem, candidate, backend, report):
    """Per case: the output's error over the reference's own error (the worse of max and rms)."""
    subprocess.run([kjudge, "check", problem, "--candidate", candidate, "--backend", backend,
                    "--json", report], capture_output=True, text=True, timeout=600)
    try:
        verdict = json.load(open(report))
    except (OSError, ValueError):
        return None
    out = []
    for case in verdict["cases"]:
        for o in case["outputs"]:
            if o.get("log_error_ratio") is None or o["reason"] not in ("none", "mismatch"):
                continue
            out.append((HUGE_K * 10 ** o["log_error_ratio"], case["id"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kjudge")
    ap.add_argument("outdir")
    ap.add_argument("--backend", default="cuda")
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    rows = []
    for dtype in ("bf16", "f16"):
        problem = make_problem(args.outdir, dtype)
        candidates = sorted(os.path.join("solutions", f) for f in os.listdir(os.path.join(problem, "solutions")))
        candidates.append("traps/bf16_accumulate.cu")
        for cand in candidates:
            kind = KINDS.get(cand, KINDS.get(cand.split("/")[0]))
            report = os.path.join(args.outdir, f"k_{dtype}_{os.path.basename(cand)}.json")
            r = ratios(args.kjudge, problem, os.path.join(problem, cand), args.backend, report)
            if not r:
                rows.append((dtype, cand, kind, None, None, None))
                continue
            worst = max(r)
            rows.append((dtype, cand, kind, worst[0], sorted(x for x, _ in r)[len(r) // 2], worst[1]))
    print(f"{'output':<6} {'candidate':<28} {'kind':<9} {'worst ratio':>12} {'median':>9}  worst case")
    for dtype, cand, kind, worst, median, case in rows:
        if worst is None:
            print(f"{dtype:<6} {cand:<28} {kind:<9} {'no report':>12}")
            continue
        print(f"{dtype:<6} {cand:<28} {kind:<9} {worst:>12.3g} {median:>9.3g}  {case}")
    # The audit's downgrades (inputs rounded to a narrower format: bf16 below f16) under the
    # default k, their margins as error over reference error.
    for dtype in ("bf16", "f16"):
        problem = make_problem(args.outdir, dtype, 4)
        report = os.path.join(args.outdir, f"k_{dtype}_audit.json")
        subprocess.run([args.kjudge, "audit", problem, "--backend", args.backend, "--json", report],
                       capture_output=True, text=True, timeout=600)
        try:
            audit = json.load(open(report))
        except (OSError, ValueError):
            print(f"{dtype}: no audit report")
            continue
        for p in audit["problems"][0]["policies"]:
            for d in p.get("downgrades", []):
                ratio = 4 * 10 ** d["log_error_ratio"]
                rows.append((dtype, d["format"] + " inputs", "downgrade", ratio, None, d.get("closest_case")))
                print(f"{dtype:<6} {d['format'] + ' inputs (audit)':<28} {'downgrade':<9} {ratio:>12.3g} "
                      f"{'':>9}  passed {d['passed']} of {d['cases']} cases")
    for dtype in ("bf16", "f16"):
        correct = [w for d, _, k, w, _, _ in rows if d == dtype and k == "correct" and w is not None]
        down = [w for d, _, k, w, _, _ in rows if d == dtype and k == "downgrade" and w is not None]
        if correct and down:
            print(f"{dtype}: k must lie in ({max(correct):.3g}, {min(down):.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
