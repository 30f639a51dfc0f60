"""The KernelBench adapter's cost on a level-1 problem (examples/kernelbench/relu), beside
KernelBench-style in-process evaluation timed in the same run: a warm kjudge judge
(kjudge.kernelbench.Evaluator: the problem's cases made, a spare worker up) checking a correct
inline-CUDA candidate, its time without the candidate's own compile against the target of 2 s;
and the in-process way (import the candidate here, 5 trials of fresh inputs against the
reference with torch.allclose), also without the compile. Needs a GPU, torch and kjudge."""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
PROBLEM = os.path.join(HERE, "..", "examples", "kernelbench", "relu", "problem.py")
CANDIDATE = os.path.join(HERE, "..", "examples", "kernelbench", "relu", "candidates",
                         "cuda_correct.py")


def kjudge_warm() -> tuple[float, float, dict]:
    from kjudge.kernelbench import Evaluator
    with Evaluator() as judge:
        judge.check(PROBLEM, CANDIDATE)  # makes the cases, warms the spare worker
        time.sleep(5)                     # the spare is up before the timed check
        began = time.perf_counter()
        v = judge.check(PROBLEM, CANDIDATE)
        total = time.perf_counter() - began
    # Where the judge's time went: each request's round trip and the worker's share of it.
    print("judge_seconds: " + ", ".join(f"{k} {t:.3f}" for k, t in
                                        v["metadata"].get("judge_seconds", {}).items()))
    return total, v["compile_seconds"] or 0.0, v


def load_module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernelbench_in_process(trials: int = 5) -> tuple[float, float, bool]:
    """KernelBench's eval, in this process: compile (timed apart), then per trial fresh inputs,
    Model and ModelNew, torch.allclose at 1e-2."""
    os.environ["TORCH_EXTENSIONS_DIR"] = tempfile.mkdtemp(prefix="kb-inproc-")
    began = time.perf_counter()
    candidate = load_module(CANDIDATE, "kb_candidate")
    compile_s = time.perf_counter() - began
    problem = load_module(PROBLEM, "kb_problem")
    began = time.perf_counter()
    ok = True
    for trial in range(trials):
        torch.manual_seed(trial)
        inputs = [x.cuda() for x in problem.get_inputs()]
        torch.manual_seed(42)
        model = problem.Model(*problem.get_init_inputs()).cuda()
        torch.manual_seed(42)
        new = candidate.ModelNew(*problem.get_init_inputs()).cuda()
        with torch.no_grad():
            ok &= bool(torch.allclose(model(*inputs), new(*inputs), atol=1e-2, rtol=1e-2))
        torch.cuda.synchronize()
    return time.perf_counter() - began, compile_s, ok


def main() -> int:
    if not torch.cuda.is_available():
        print("bench_kernelbench: no GPU, nothing measured")
        return 0
    total, compile_s, v = kjudge_warm()
    kb_s, kb_compile, kb_ok = kernelbench_in_process()
    judge_s = total - compile_s
    print(f"kjudge kernelbench, warm judge, relu 4096x4096 ({len(v['cases'])} cases): "
          f"{judge_s:.2f} s beside the compile ({compile_s:.1f} s), verdict {v['outcome']} "
          f"(target < 2 s: {'met' if judge_s < 2 else 'MISSED'})")
    print(f"KernelBench-style in-process, same problem (5 trials): {kb_s:.2f} s beside the "
          f"compile ({kb_compile:.1f} s), allclose {'passed' if kb_ok else 'failed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
