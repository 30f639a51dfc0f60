#!/usr/bin/env python3
"""The three targets of `kjudge bench`'s GPU timing, measured on this machine in one run:

  spread      problems/vector_add's basic.cu benched 3 times (separate processes): the spread
              (max - min) / mean of the 3 medians of "runtime" and of each timed case.
              Target: under 1%.
  agreement   the same kernel (bench/kernels/vector_add_extern_c.cu, N = 16777216, memory bound)
              timed by kjudge bench, by triton.testing.do_bench (its own L2 flush: a 256 MB
              buffer zeroed before each call) and by a plain CUDA-event loop (a buffer of twice
              the L2 zeroed before each launch); the peers compile the file with nvcc and launch
              it through the driver API on torch's stream. Target: kjudge within 3% of both.
  wall time   kjudge bench's wall clock on a variant of vector_add whose cases are all small
              (public N = 2097152, about 10 us; hidden N = 65537), compile cache warm, median
              of 3 runs; beside it, for reference, the wall time of one do_bench call on the
              same kernel and N. Target: under 2 s.

A missed target is printed, not an error. The last line of stdout is the figures as JSON,
prefixed with "BENCH_TIMING_JSON ". Exit 1 only when something could not be measured (kjudge
failed, or a peer could not run).

usage: bench_timing.py KJUDGE   (from the repository root; KJUDGE is the kjudge binary)
"""
import ctypes
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROBLEM = os.path.join(ROOT, "problems", "vector_add")
BASIC = os.path.join(PROBLEM, "solutions", "basic.cu")
SHARED = os.path.join(ROOT, "bench", "kernels", "vector_add_extern_c.cu")
KERNEL = b"vector_add_c"
N_AGREE = 16777216
N_WALL = 2097152
RUNS = 3


def say(*args):
    print(*args, flush=True)


class KjudgeFailed(Exception):
    pass


def tail(text, lines=30):
    return "\n".join((text or "").rstrip().splitlines()[-lines:])


def kjudge_bench(kjudge, problem, candidate, cache, tmp, tag):
    """One `kjudge bench` process: (the JSON report, its wall time in s)."""
    out = os.path.join(tmp, f"{tag}.json")
    cmd = [kjudge, "bench", problem, "--candidate", candidate, "--json", out, "--cache", cache]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    except subprocess.TimeoutExpired as e:
        raise KjudgeFailed(f"{' '.join(cmd)}: no answer in {e.timeout} s\n"
                           f"stdout:\n{tail(e.stdout if isinstance(e.stdout, str) else '')}")
    wall = time.perf_counter() - t0
    report = None
    if os.path.exists(out):
        try:
            with open(out) as f:
                report = json.load(f)
        except ValueError:
            report = None
    if r.returncode != 0 or report is None or report.get("outcome") != "PASS":
        outcome = report.get("outcome") if report else "no JSON report"
        raise KjudgeFailed(f"{' '.join(cmd)}: exit {r.returncode}, outcome {outcome}\n"
                           f"stdout:\n{tail(r.stdout)}\nstderr:\n{tail(r.stderr)}")
    return report, wall


def median_ms(stats):
    """A case's candidate median: "median_ms" in the report (also read as "median")."""
    v = stats.get("median_ms", stats.get("median"))
    return float(v) if v is not None else None


def timed_cases(report):
    """{case id: the candidate's timing object} for the cases bench timed."""
    return {c["id"]: c["timing"] for c in report.get("cases", [])
            if c.get("timing") and c["timing"].get("candidate")}


def case_median(report, marker):
    for cid, t in timed_cases(report).items():
        if marker in cid:
            return median_ms(t["candidate"]), t
    raise KjudgeFailed(f"no timed case with '{marker}' in its id: "
                       f"{sorted(timed_cases(report))}")


def spread_pct(values):
    mean = statistics.mean(values)
    return 100 * (max(values) - min(values)) / mean if mean > 0 else float("nan")


def rel_pct(ours, peer):
    return 100 * (ours / peer - 1) if ours and peer else None


def met(ok):
    return "met" if ok else "NOT met"


# ---------------------------------------------------------------------------------------------
# The peers: the shared kernel compiled with nvcc, launched through the CUDA driver API.

def find_nvcc():
    for cand in [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc",
                 *sorted(glob.glob("/usr/local/cuda*/bin/nvcc"), reverse=True)]:
        if cand and os.path.exists(cand):
            return cand
    raise RuntimeError("nvcc not found (not on PATH, nor under /usr/local/cuda*/bin)")


def compile_cubin(tmp, arch):
    cubin = os.path.join(tmp, "vector_add_c.cubin")
    cmd = [find_nvcc(), "-cubin", f"-arch={arch}", "-O3", "-o", cubin, SHARED]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{tail(r.stdout)}\n{tail(r.stderr)}")
    return cubin


class Driver:
    """The few driver calls the peers need, each CUresult checked."""

    def __init__(self):
        cu = ctypes.CDLL("libcuda.so.1")
        vp, u = ctypes.c_void_p, ctypes.c_uint
        sig = {
            "cuInit": [u],
            "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
            "cuCtxGetCurrent": [ctypes.POINTER(vp)],
            "cuCtxSetCurrent": [vp],
            "cuDeviceGet": [ctypes.POINTER(ctypes.c_int), ctypes.c_int],
            "cuDevicePrimaryCtxRetain": [ctypes.POINTER(vp), ctypes.c_int],
            "cuModuleLoadData": [ctypes.POINTER(vp), vp],
            "cuModuleGetFunction": [ctypes.POINTER(vp), vp, ctypes.c_char_p],
            "cuLaunchKernel": [vp, u, u, u, u, u, u, u, vp,
                               ctypes.POINTER(vp), ctypes.POINTER(vp)],
        }
        for name, args in sig.items():
            fn = getattr(cu, name)
            fn.argtypes = args
            fn.restype = ctypes.c_int
        self.cu = cu

    def check(self, name, *args):
        rc = getattr(self.cu, name)(*args)
        if rc != 0:
            err = ctypes.c_char_p()
            self.cu.cuGetErrorName(rc, ctypes.byref(err))
            raise RuntimeError(f"{name} failed: CUresult {rc} ({(err.value or b'?').decode()})")

    def ensure_context(self, device):
        """torch's primary context should be current already; make it so if it is not."""
        self.check("cuInit", 0)
        ctx = ctypes.c_void_p()
        self.check("cuCtxGetCurrent", ctypes.byref(ctx))
        if not ctx.value:
            dev = ctypes.c_int()
            self.check("cuDeviceGet", ctypes.byref(dev), device)
            self.check("cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
            self.check("cuCtxSetCurrent", ctx)

    def load(self, cubin, name):
        with open(cubin, "rb") as f:
            self.image = ctypes.create_string_buffer(f.read())  # kept alive with the module
        self.module = ctypes.c_void_p()
        self.check("cuModuleLoadData", ctypes.byref(self.module),
                   ctypes.cast(self.image, ctypes.c_void_p))
        func = ctypes.c_void_p()
        self.check("cuModuleGetFunction", ctypes.byref(func), self.module, name)
        return func

    def launcher(self, func, x, y, z, n, stream):
        """A call that launches vector_add_c(x, y, z, n) on stream: the arguments built once."""
        args = [ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(y.data_ptr()),
                ctypes.c_void_p(z.data_ptr()), ctypes.c_int(n)]
        params = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.pointer(a), ctypes.c_void_p) for a in args])
        grid = (n + 255) // 256
        handle = ctypes.c_void_p(stream)

        def launch():
            self.check("cuLaunchKernel", func, grid, 1, 1, 256, 1, 1, 0, handle, params, None)
        launch.keep = (args, params, x, y, z)  # the pointers in params must outlive the calls
        return launch


def do_bench_ms(fn):
    from triton.testing import do_bench
    r = do_bench(fn, warmup=25, rep=100, quantiles=[0.5])
    return float(r[0] if isinstance(r, (list, tuple)) else r)


def event_loop_ms(torch, fn, warmup=50, iters=200):
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or 50 * 1024 * 1024
    buf = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        buf.zero_()
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(iters)]
    for s, e in zip(starts, ends):
        buf.zero_()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))


def measure_peers(tmp):
    """The peers' figures; a figure that could not be measured is None, with its reason."""
    res = {"gpu": None, "do_bench_ms": None, "event_loop_ms": None,
           "wall_do_bench_s": None, "wall_do_bench_ms": None, "errors": []}
    try:
        import torch
        torch.cuda.init()
        torch.empty(1, device="cuda")  # torch's primary context, current on this thread
        res["gpu"] = torch.cuda.get_device_name()
        major, minor = torch.cuda.get_device_capability()
        arch = f"sm_{major}{minor}" + ("a" if (major, minor) == (9, 0) else "")
        cubin = compile_cubin(tmp, arch)
        drv = Driver()
        drv.ensure_context(torch.cuda.current_device())
        func = drv.load(cubin, KERNEL)
        stream = torch.cuda.current_stream().cuda_stream

        def setup(n):
            x = torch.randn(n, device="cuda")
            y = torch.randn(n, device="cuda")
            z = torch.empty(n, device="cuda")
            launch = drv.launcher(func, x, y, z, n, stream)
            launch()
            torch.cuda.synchronize()
            if not torch.equal(z, x + y):
                raise RuntimeError(f"vector_add_c through the driver API: z != x + y (N = {n})")
            return launch
    except Exception as e:
        res["errors"].append(f"peers: {type(e).__name__}: {e}")
        return res

    try:
        launch = setup(N_AGREE)
    except Exception as e:
        res["errors"].append(f"peer launch: {type(e).__name__}: {e}")
        return res
    try:
        res["do_bench_ms"] = do_bench_ms(launch)
    except Exception as e:
        res["errors"].append(f"triton do_bench: {type(e).__name__}: {e}")
    try:
        res["event_loop_ms"] = event_loop_ms(torch, launch)
    except Exception as e:
        res["errors"].append(f"event loop: {type(e).__name__}: {e}")
    # After the do_bench above, so triton's one-time driver set-up is not in this wall time.
    try:
        small = setup(N_WALL)
        t0 = time.perf_counter()
        res["wall_do_bench_ms"] = do_bench_ms(small)
        res["wall_do_bench_s"] = time.perf_counter() - t0
    except Exception as e:
        res["errors"].append(f"do_bench wall time: {type(e).__name__}: {e}")
    return res


# ---------------------------------------------------------------------------------------------

def make_10us_variant(tmp):
    """problems/vector_add with one public shape, N = 2097152 (one timed case of about 10 us),
    and one hidden shape no larger (N = 65537): a problem whose every case is of that size, so
    the check before the timing is one of 10 us kernels too. (vector_add's own hidden shape of
    12345679 elements would make the check, not the bench, most of the wall time.)"""
    dst = os.path.join(tmp, "vector_add_10us")
    os.makedirs(dst)
    shutil.copy(os.path.join(PROBLEM, "reference.cu"), dst)
    with open(os.path.join(PROBLEM, "problem.toml")) as f:
        lines = f.read().splitlines(keepends=True)
    hits = [i for i, l in enumerate(lines) if l.lstrip().startswith("public = [")]
    if len(hits) != 1:
        raise KjudgeFailed(f"problem.toml: expected one 'public = [...]' line, found {len(hits)}")
    lines[hits[0]] = f"public = [{{ N = {N_WALL} }}]\n"
    hidden = [i for i, l in enumerate(lines) if l.lstrip().startswith("hidden = [")]
    if len(hidden) != 1:
        raise KjudgeFailed(f"problem.toml: expected one 'hidden = [...]' line, found {len(hidden)}")
    lines[hidden[0]] = "hidden = [{ N = 65537 }]\n"
    with open(os.path.join(dst, "problem.toml"), "w") as f:
        f.write("".join(lines))
    return dst


def measure_kjudge(kjudge, tmp, cache):
    res = {}
    # (a) spread of the median over separate runs.
    say(f"(a) {RUNS} runs of kjudge bench problems/vector_add, basic.cu")
    runtimes, cases = [], {}
    for i in range(RUNS):
        report, wall = kjudge_bench(kjudge, PROBLEM, BASIC, cache, tmp, f"spread{i}")
        runtimes.append(float(report["runtime"]))
        notes = []
        for cid, t in timed_cases(report).items():
            cases.setdefault(cid, []).append(median_ms(t["candidate"]))
            if t.get("throttled"):
                notes.append(f"{cid} throttled")
            if t.get("converged") is False:
                notes.append(f"{cid} not converged (noise {t.get('noise')})")
        say(f"    run {i + 1}: runtime {runtimes[-1]:.5f} ms, {wall:.2f} s"
            + (f" ({'; '.join(notes)})" if notes else ""))
    spreads = {cid: spread_pct(v) for cid, v in cases.items()}
    for cid, v in cases.items():
        say(f"    {cid}: medians {' '.join(f'{m:.5f}' for m in v)} ms, spread {spreads[cid]:.2f}%")
    res["spread"] = {"runtimes_ms": runtimes, "runtime_pct": spread_pct(runtimes),
                     "cases": {cid: {"medians_ms": v, "pct": spreads[cid]}
                               for cid, v in cases.items()}}
    worst = max([res["spread"]["runtime_pct"], *spreads.values()])
    res["spread"]["worst_pct"] = worst
    res["spread"]["met"] = worst < 1.0
    say(f"    runtime spread {res['spread']['runtime_pct']:.2f}%, worst of all {worst:.2f}%")

    # (b) kjudge's side of the agreement.
    say(f"(b) kjudge bench problems/vector_add, {os.path.relpath(SHARED, ROOT)}")
    report, _ = kjudge_bench(kjudge, PROBLEM, SHARED, cache, tmp, "agree")
    med, t = case_median(report, ":public0:")
    res["agree_kjudge_ms"] = med
    say(f"    public0 (N = {N_AGREE}): median {med:.5f} ms, {t['candidate'].get('samples')} "
        f"samples, noise {t.get('noise')}, sm clock {t.get('sm_clock_mhz')} MHz")

    # (c) wall time on a ~10 us case, the compile cache warm.
    say(f"(c) kjudge bench on vector_add with one public shape N = {N_WALL}")
    variant = make_10us_variant(tmp)
    kjudge_bench(kjudge, variant, BASIC, cache, tmp, "wall_warm")
    walls, kernel = [], []
    for i in range(RUNS):
        report, wall = kjudge_bench(kjudge, variant, BASIC, cache, tmp, f"wall{i}")
        walls.append(wall)
        kernel.append(case_median(report, ":public0:")[0])
        say(f"    run {i + 1}: {wall:.2f} s wall, kernel median {kernel[-1]:.5f} ms")
    res["wall"] = {"walls_s": walls, "kjudge_s": statistics.median(walls),
                   "kernel_ms": statistics.median(kernel)}
    res["wall"]["met"] = res["wall"]["kjudge_s"] < 2.0
    return res


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    kjudge = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="kjudge-bench-timing-")
    cache = os.path.join(tmp, "cache")
    os.makedirs(cache)
    try:
        res = measure_kjudge(kjudge, tmp, cache)
    except KjudgeFailed as e:
        say(f"kjudge failed, nothing measured:\n{e}")
        shutil.rmtree(tmp, ignore_errors=True)
        return 1
    say("peers: nvcc, the driver API, triton do_bench, a CUDA-event loop")
    peers = measure_peers(tmp)
    shutil.rmtree(tmp, ignore_errors=True)
    for err in peers["errors"]:
        say(f"    not measured: {err}")

    def ms(v):
        return f"{v:.4f} ms" if v is not None else "n/a"

    def pct(v):
        return f"{v:+.1f}%" if v is not None else "n/a"

    k = res["agree_kjudge_ms"]
    vs_db, vs_ev = rel_pct(k, peers["do_bench_ms"]), rel_pct(k, peers["event_loop_ms"])
    agree_met = vs_db is not None and vs_ev is not None and abs(vs_db) <= 3 and abs(vs_ev) <= 3
    sp, wall = res["spread"], res["wall"]
    db_wall = f"{peers['wall_do_bench_s']:.2f} s" if peers["wall_do_bench_s"] is not None else "n/a"

    say()
    say(f"kjudge bench timing ({peers['gpu'] or 'GPU unknown: torch did not start'})")
    say(f"{'spread of the median over 3 runs':37} runtime "
        f"{' '.join(f'{r:.4f}' for r in sp['runtimes_ms'])} ms: {sp['runtime_pct']:.2f}% "
        f"(worst case {max((c['pct'] for c in sp['cases'].values()), default=float('nan')):.2f}%)"
        f"  (target < 1%: {met(sp['met'])})")
    say(f"{'agreement, vector_add_c N=' + str(N_AGREE):37} kjudge {ms(k)}, "
        f"do_bench {ms(peers['do_bench_ms'])} ({pct(vs_db)}), "
        f"event loop {ms(peers['event_loop_ms'])} ({pct(vs_ev)})"
        f"  (target within 3%: {met(agree_met) if vs_db is not None and vs_ev is not None else 'not measured'})")
    say(f"{'wall time, 10 us kernel':37} kjudge bench {wall['kjudge_s']:.2f} s "
        f"(kernel {ms(wall['kernel_ms'])}), triton do_bench {db_wall}"
        f"  (target < 2 s: {met(wall['met'])})")
    figures = {
        "gpu": peers["gpu"],
        "spread": sp,
        "agreement": {"n": N_AGREE, "kjudge_ms": k, "do_bench_ms": peers["do_bench_ms"],
                      "event_loop_ms": peers["event_loop_ms"], "vs_do_bench_pct": vs_db,
                      "vs_event_loop_pct": vs_ev, "met": agree_met},
        "wall": {**wall, "n": N_WALL, "do_bench_s": peers["wall_do_bench_s"],
                 "do_bench_ms": peers["wall_do_bench_ms"]},
        "errors": peers["errors"],
    }
    say("BENCH_TIMING_JSON " + json.dumps(figures))
    return 1 if peers["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
