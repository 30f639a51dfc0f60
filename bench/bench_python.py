#!/usr/bin/env python3
"""kjudge.compare from Python: the overhead on a small array (the issue's target: under 20 us)
and the throughput on a large host array, beside numpy.allclose and, where torch is installed,
torch.testing.assert_close on the same arrays in the same run; where torch has CUDA, the
throughput on a large device array (2^28 f32 by default) judged in place by the GPU comparator,
beside torch.allclose and torch.testing.assert_close. Prints one line per measurement.

usage: bench_python.py [--large-log2 N] [--cuda-log2 N]
"""
import argparse
import statistics
import time

import numpy as np

import kjudge


def per_call_us(fn, seconds=0.5):
    """The median over 5 batches of the time per call, in microseconds."""
    fn()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.05:
        fn()
        n += 1
    batch = max(1, int(n * seconds / 0.05 / 5))
    times = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - start) / batch * 1e6)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--large-log2", type=int, default=24)
    ap.add_argument("--cuda-log2", type=int, default=28)
    args = ap.parse_args()
    small = np.ones(16, np.float32)
    rows = [("compare, 16 f32, allclose", per_call_us(lambda: kjudge.compare(small, small))),
            ("numpy.allclose, 16 f32", per_call_us(lambda: np.allclose(small, small)))]
    try:
        import torch
        t = torch.from_numpy(small)
        rows.append(("torch assert_close, 16 f32",
                     per_call_us(lambda: torch.testing.assert_close(t, t))))
    except ImportError:
        torch = None
    for name, us in rows:
        print(f"{name:34s} {us:10.1f} us  (target for kjudge: < 20 us)")
    n = 1 << args.large_log2
    rng = np.random.default_rng(0)
    golden = rng.standard_normal(n)
    ref = golden.astype(np.float32)
    large = [("compare relative + golden", lambda: kjudge.compare(ref, ref, golden=golden)),
             ("compare allclose", lambda: kjudge.compare(ref, ref)),
             ("numpy.allclose", lambda: np.allclose(ref, ref))]
    if torch is not None:
        tr = torch.from_numpy(ref)
        large.append(("torch assert_close (CPU)", lambda: torch.testing.assert_close(tr, tr)))
    for name, fn in large:
        ms = per_call_us(fn, seconds=2) / 1e3
        print(f"{name:34s} 2^{args.large_log2} f32: {ms:8.1f} ms  ({n / ms / 1e6:.2f} G elements/s)")
    if torch is not None and torch.cuda.is_available():
        bench_cuda(torch, args.cuda_log2)


def bench_cuda(torch, log2):
    """Device arrays: the time per call (each call synchronises: kjudge's reads its verdict back,
    torch's are followed by torch.cuda.synchronize) and the bandwidth over the bytes of the
    arrays passed (actual and expected, and the f64 golden where there is one)."""
    n = 1 << log2
    gen = torch.Generator(device="cuda").manual_seed(0)
    golden = torch.randn(n, device="cuda", dtype=torch.float64, generator=gen)
    ref = golden.float()
    out = ref.clone()
    synced = lambda fn: lambda: (fn(), torch.cuda.synchronize())
    cases = [("compare allclose (GPU)", 8 * n, lambda: kjudge.compare(out, ref)),
             ("compare relative + golden (GPU)", 16 * n,
              lambda: kjudge.compare(out, ref, golden=golden)),
             ("torch.allclose (GPU)", 8 * n, synced(lambda: torch.allclose(out, ref))),
             ("torch assert_close (GPU)", 8 * n,
              synced(lambda: torch.testing.assert_close(out, ref)))]
    print(f"device: {torch.cuda.get_device_name()}")
    for name, nbytes, fn in cases:
        ms = per_call_us(fn, seconds=2) / 1e3
        print(f"{name:34s} 2^{log2} f32: {ms:8.2f} ms  ({nbytes / ms / 1e6:7.1f} GB/s)")


if __name__ == "__main__":
    main()
