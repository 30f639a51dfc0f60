"""`kjudge serve` over several judges (issue 29). For each device list: a stream of distinct fresh
candidates (softmax's solutions and traps, each made distinct so each compiles), checks per second,
p50/p99 of the checks' own latency, each device's share of the requests, and efficiency against
the first list scaled linearly by its judges. Then faults on the last list: an endless kernel and a
crash among quick checks, every request answered exactly once with its verdict, and how many
answers came while the endless kernel held its judge.

usage: python bench/bench_devices.py KJUDGE [--devices 0] [--devices 0,0]... [--candidates N]
                                     [--backend auto|cuda|host]"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOFTMAX = ROOT / "problems" / "softmax"
STREAM = [("solutions/basic.cu", "PASS"), ("solutions/block_reduce.cu", "PASS"),
          ("solutions/warp_shuffle.cu", "PASS"), ("traps/zeros.cu", "FAIL"),
          ("traps/no_max_subtraction.cu", "FAIL")]
CRASH = """/* kjudge
[[launch]]
kernel = "k"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__global__ void k(const float* x, const float* y, float* z, int N) {
  float* nowhere = reinterpret_cast<float*>(0x100);
  nowhere[threadIdx.x] = x[0];
}
"""


BACKEND = ["--backend", "auto"]


def serve(kjudge: str, devices: str, requests: list[dict], cache: Path):
    """Every request through one `kjudge serve --devices DEVICES --unordered`: the answers by id,
    the order they came in, and the seconds from the first request to the last answer."""
    began = time.perf_counter()
    done = subprocess.run([kjudge, "serve", "--devices", devices, "--unordered", *BACKEND, "--cache",
                           str(cache)], input="".join(json.dumps(r) + "\n" for r in requests),
                          capture_output=True, text=True, timeout=900)
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        sys.exit(f"bench_devices: serve --devices {devices} exited {done.returncode}: "
                 f"{done.stderr[-1000:]}")
    order = [json.loads(line) for line in done.stdout.splitlines()]
    by_id = {}
    for answer in order:
        if answer["id"] in by_id:
            sys.exit(f"bench_devices: request {answer['id']} answered twice")
        by_id[answer["id"]] = answer
    missing = [r["id"] for r in requests if r["id"] not in by_id]
    if missing:
        sys.exit(f"bench_devices: requests {missing[:10]} never answered")
    return by_id, [a["id"] for a in order], seconds


def outcome(answer: dict) -> str:
    v = answer.get("verdict")
    return f"{v['outcome']}({v['reason']})" if v else f"error {answer.get('error')}"


def scaling(kjudge: str, device_lists: list[str], candidates: int, tmp: Path) -> None:
    sources = [((SOFTMAX / f).read_text(), want) for f, want in STREAM]
    print("| devices | judges | checks | s | checks/s | efficiency | p50 ms | p99 ms | share |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = None
    for devices in device_lists:
        salt = uuid.uuid4()
        requests = [{"id": i, "problem": str(SOFTMAX), "name": "c.cu",
                     "source": sources[i % len(sources)][0] + f"\n// {salt} {i}\n"}
                    for i in range(candidates)]
        by_id, _, seconds = serve(kjudge, devices, requests, tmp / f"cache-{salt}")
        for i, answer in by_id.items():
            if not outcome(answer).startswith(sources[i % len(sources)][1]):
                sys.exit(f"bench_devices: request {i} misjudged: {outcome(answer)}")
        judges = len(devices.split(","))
        rate = candidates / seconds
        base = base or rate / judges
        latency = sorted(a["verdict"]["judge_time"]["wall_ms"] for a in by_id.values())
        p99 = latency[min(len(latency) - 1, int(0.99 * len(latency)))]
        share = Counter(a["verdict"]["manifest"].get("device") for a in by_id.values())
        print(f"| {devices} | {judges} | {candidates} | {seconds:.1f} | {rate:.2f} | "
              f"{rate / (base * judges):.2f} | {statistics.median(latency):.0f} | {p99:.0f} | "
              + " ".join(f"{d}:{n}" for d, n in sorted(share.items(), key=str)) + " |")


def faults(kjudge: str, devices: str, tmp: Path) -> None:
    crash = tmp / "crash.cu"
    crash.write_text(CRASH)
    quick = (SOFTMAX / "solutions/basic.cu").read_text()
    requests = [{"id": "hang", "problem": str(ROOT / "problems/reduce_sum"),
                 "candidate": str(ROOT / "problems/reduce_sum/traps/infinite_loop.cu")},
                {"id": "crash", "problem": str(ROOT / "problems/vector_add"),
                 "candidate": str(crash)}]
    requests += [{"id": i, "problem": str(SOFTMAX), "name": "c.cu",
                  "source": quick + f"\n// {uuid.uuid4()}\n"} for i in range(12)]
    by_id, order, seconds = serve(kjudge, devices, requests, tmp / "cache-faults")
    wrong = {i: outcome(a) for i, a in by_id.items()
             if outcome(a) != {"hang": "FAIL(timeout)", "crash": "FAIL(crash)"}.get(i, "PASS(none)")}
    print(f"\nfaults on --devices {devices}: {len(requests)} requests, {len(by_id)} answered once "
          f"each in {seconds:.1f} s; endless kernel {outcome(by_id['hang'])}, crash "
          f"{outcome(by_id['crash'])}; {order.index('hang')} answers came before the endless "
          f"kernel's; misjudged: {wrong or 'none'}")
    if wrong:
        sys.exit(1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("kjudge")
    ap.add_argument("--devices", action="append", default=[])
    ap.add_argument("--candidates", type=int, default=100)
    ap.add_argument("--backend", default="auto", help="host: the same streams on the CPU")
    args = ap.parse_args()
    BACKEND[1] = args.backend
    device_lists = args.devices or ["0", "0,0"]
    with tempfile.TemporaryDirectory() as tmp:
        scaling(args.kjudge, device_lists, args.candidates, Path(tmp))
        faults(args.kjudge, device_lists[-1], Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
