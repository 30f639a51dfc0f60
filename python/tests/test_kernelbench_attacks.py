"""Attacks on the KernelBench adapter, each by a candidate of its own (on the CPU, run in CI), and
the defence that holds it. Where the static scan would refuse the candidate's spelling, the scan
is switched off for the test, so the defence behind it is what is tried. Each test fails with its
defence off: the note on each says what it would see then."""
import json
import os
import secrets
import subprocess
import sys
import textwrap
import time

import pytest

torch = pytest.importorskip("torch")

from kjudge.kernelbench import Settings, scan  # noqa: E402
from kjudge.kernelbench import client, evaluate, serve  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCALED_SUM = os.path.join(HERE, "kernelbench", "scaled_sum", "problem.py")

# scaled_sum's own arithmetic (bit for bit the reference), so a candidate passes the check and
# only its attack decides.
MODEL = """
class ModelNew(torch.nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
{body}
        return torch.sum(x, dim=1) * self.scale
"""


def candidate(tmp_path, preamble: str, body: str = "        pass") -> str:
    path = tmp_path / "candidate.py"
    path.write_text("import torch\n" + textwrap.dedent(preamble) + MODEL.format(body=body))
    return str(path)


def judge(path: str, device: str = "cpu", **settings) -> dict:
    with evaluate.Evaluator(Settings(device=device, run_timeout=30.0, **settings)) as e:
        return e.check(SCALED_SUM, path)


@pytest.fixture
def no_scan(monkeypatch):
    monkeypatch.setattr(scan, "forbidden_constructs", lambda source: [])


# ---- the watchers inside the worker -----------------------------------------------------------

SOFTMAX = os.path.join(HERE, "kernelbench", "softmax", "problem.py")


def softmax_candidate(tmp_path, preamble: str, body: str) -> str:
    path = tmp_path / "candidate.py"
    path.write_text("import torch\n" + textwrap.dedent(preamble) +
                    "\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n" +
                    textwrap.indent(textwrap.dedent(body).strip() + "\n", "        "))
    return str(path)


def test_an_op_hidden_from_the_dispatch_recorder_is_seen_by_the_profilers(tmp_path, no_scan):
    """Python dispatch turned off around torch.softmax: the dispatch mode sees nothing, the
    profiler's record of the dispatcher's ops does (defence off: PASS, softmax by torch)."""
    path = softmax_candidate(tmp_path, "", """
        with torch._C._DisableTorchDispatch():
            return torch.softmax(x, dim=1)
    """)
    v = evaluate.check(SOFTMAX, path, device="cpu", run_timeout=30.0)
    assert (v["outcome"], v["reason"]) == ("FAIL", "forbidden_op"), v["message"]
    assert "hidden from the dispatch recorder" in v["message"]


def test_a_recorder_swapped_in_kjudges_modules_is_not_the_workers(tmp_path, no_scan):
    """hooks.OpRecorder replaced by a blind one: the worker bound its own before the candidate
    ran, and the dispatch recorder sees the op (defence off: only the profiler's record does)."""
    path = softmax_candidate(tmp_path, """
        import kjudge.kernelbench.hooks as hooks

        class Blind:
            counts = {}

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        hooks.OpRecorder = Blind
    """, "return torch.softmax(x, dim=1)")
    v = evaluate.check(SOFTMAX, path, device="cpu", run_timeout=30.0)
    assert (v["outcome"], v["reason"]) == ("FAIL", "forbidden_op"), v["message"]
    assert "hidden" not in v["message"]


def test_an_input_changed_in_place_is_seen_by_the_judge(tmp_path, no_scan):
    """The input scaled in place and the worker's old comparison helper replaced to say "same":
    the judge compares the inputs as the call left them with what it sent (defence off, the
    comparison in the worker: PASS)."""
    path = candidate(tmp_path, """
        import __main__
        __main__._same_bits = lambda *args: True
    """, "        x[0, 0] = 0.0")
    v = judge(path)
    assert (v["outcome"], v["reason"]) == ("FAIL", "input_modified"), v["message"]


# Through the scan as it stands: the stream class fetched by a name built at run time, and
# torch's profiler blinded from Python (its result object replaced by one that reports every
# kernel on the first kernel's stream, the judge's marker's).
BLINDED_SIDE_STREAM = """
    import torch.autograd.profiler as _ap

    _real_disable = _ap._disable_profiler


    class _Event:
        def __init__(self, event, stream):
            self._event, self._stream = event, stream

        def __getattr__(self, name):
            return getattr(self._event, name)

        def device_resource_id(self):
            return self._stream


    class _Result:
        def __init__(self, result):
            self._result = result

        def __getattr__(self, name):
            return getattr(self._result, name)

        def events(self):
            events = self._result.events()
            on_device = [e for e in events if e.device_type() == torch.autograd.DeviceType.CUDA]
            first = min(on_device, key=lambda e: e.start_ns()).device_resource_id() \
                if on_device else 0
            return [_Event(e, first) if e.device_type() == torch.autograd.DeviceType.CUDA else e
                    for e in events]


    _ap._disable_profiler = lambda: _Result(_real_disable())
    _make_queue = getattr(torch.cuda, "Str" + "eam")
    _run_on = getattr(torch.cuda, "str" + "eam")
    _side = []
"""
BLINDED_SIDE_STREAM_BODY = """\
        if not _side:
            _side.append(_make_queue(device=x.device))
        _side[0].wait_stream(torch.cuda.current_stream(x.device))
        with _run_on(_side[0]):
            out = torch.sum(x, dim=1) * self.scale
        torch.cuda.current_stream(x.device).wait_stream(_side[0])
        return out"""


def test_kernels_hidden_from_the_profilers_record_are_in_cuptis(tmp_path):
    """The whole forward on a stream of its own, and torch's profiler record rewritten from
    Python to show every kernel on the current stream: CUPTI's record, read in native code, is
    not rewritten (defence off, kernel_record "torch.profiler": PASS, and the verdict names the
    check among those the candidate's Python could reach)."""
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    path = candidate(tmp_path, BLINDED_SIDE_STREAM, BLINDED_SIDE_STREAM_BODY)
    assert scan.forbidden_constructs(open(path).read()) == []
    blinded = judge(path, device="cuda:0", kernel_record="torch.profiler")
    assert (blinded["outcome"], blinded["launches"]["kernel_record"]) == \
        ("PASS", "torch.profiler"), blinded["message"]
    assert "side_stream" in blinded["checks_in_python"]
    assert "kernel_record=torch.profiler" in blinded["defences_off"]
    v = judge(path, device="cuda:0")
    assert (v["outcome"], v["reason"]) == ("FAIL", "side_stream"), v["message"]
    assert v["launches"]["kernel_record"] == "cupti", v["launches"]
    assert v["checks_in_python"] == ["forbidden_op", "output_reused", "runtime"]
    assert v["defences_off"] == []


# ---- timing ------------------------------------------------------------------------------------

def test_a_clock_slowed_by_the_candidate_is_overruled_by_the_judges(tmp_path):
    """The worker's clock slowed 1000x: it reports 0.02 ms for a 20 ms call. The judge's own
    clock around the request decides (defence off: runtime 0.02 ms, a 1000x forged speedup)."""
    path = candidate(tmp_path, """
        import time
        _real = time.perf_counter
        time.perf_counter = lambda: _real() / 1000.0
    """, "        time.sleep(0.02)")
    v = judge(path, bench=True, trials=5)
    assert v["outcome"] == "PASS", v["message"]
    assert v["runtime_stats"]["decided_by"] == "judge_clock"
    assert v["runtime_stats"]["reported_mean"] < 1.0
    assert v["runtime"] > 15.0


def test_each_timed_call_gets_inputs_no_call_before_it_saw(tmp_path):
    """A cache keyed by the inputs' values: 50 ms on a miss, nothing on a hit. Every timed call
    misses (defence off, sets reused across trials: most calls hit, min ~0 ms)."""
    path = candidate(tmp_path, """
        import time
        seen = {}
    """, textwrap.indent(textwrap.dedent("""
        key = float(x[0, :8].sum())
        if key not in seen:
            time.sleep(0.05)
            seen[key] = torch.sum(x, dim=1) * self.scale
        return seen[key].clone()
    """), "        "))
    v = judge(path, bench=True, trials=6)
    assert v["outcome"] == "PASS", v["message"]
    assert v["runtime_stats"]["trials"] == 6
    assert v["runtime_stats"]["min"] > 40.0


def test_the_reference_is_timed_before_the_candidate_exists(tmp_path, monkeypatch):
    """Nothing of the candidate's (a thread, a process) can load the machine while the reference
    is timed: it is timed before the candidate's code is in its worker (defence off: after)."""
    order = []
    time_reference, load = evaluate.time_reference, client.Worker.load

    def timed(*args, **kwargs):
        order.append("reference timed")
        return time_reference(*args, **kwargs)

    def loaded(self, *args, **kwargs):
        order.append("candidate loaded")
        return load(self, *args, **kwargs)

    monkeypatch.setattr(evaluate, "time_reference", timed)
    monkeypatch.setattr(client.Worker, "load", loaded)
    v = judge(candidate(tmp_path, ""), bench=True, trials=3)
    assert v["outcome"] == "PASS", v["message"]
    assert order == ["reference timed", "candidate loaded"]


def test_times_that_are_not_the_loops_are_the_candidates_fail(tmp_path):
    """The worker's clock stopped, so every trial reads 0 ms: FAIL(timing_tampered) (defence
    off: a speedup divided by zero, the judge broken)."""
    path = candidate(tmp_path, """
        import time
        time.perf_counter = lambda: 1.0
    """)
    v = judge(path, bench=True, trials=3)
    assert (v["outcome"], v["reason"]) == ("FAIL", "timing_tampered")


# ---- faults of the judge -----------------------------------------------------------------------

def test_a_candidate_that_breaks_the_judge_is_its_fail(monkeypatch, tmp_path):
    """Whatever escapes the evaluator on a candidate is that candidate's FAIL in serve's answer,
    and the next request gets a new judge (defence off: the exception ends the serve child)."""
    def broken(self, problem, path, build=None):
        raise ZeroDivisionError("float division by zero")

    monkeypatch.setattr(evaluate.Evaluator, "check", broken)
    judges = {}
    answer = serve.answer(judges, {"id": 7, "op": "check", "problem": SCALED_SUM,
                                   "source": "x = 1"}, Settings(device="cpu"))
    v = answer["verdict"]
    assert (answer["id"], v["outcome"], v["reason"]) == (7, "FAIL", "runtime_error")
    assert "ZeroDivisionError" in v["message"]
    assert judges == {}


# A stand-in for `python -m kjudge.kernelbench.serve`: PASS for every sample, its message naming
# what the descriptors it inherited beyond the standard streams lead to; it dies on a "killer".
FAKE_SERVE = """
import json, os, sys
def target(fd):
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:  # the listing's own descriptor, closed by now
        return None
inherited = sorted(t for t in map(target, [f for f in os.listdir("/proc/self/fd") if int(f) > 2])
                   if t and not t.startswith("/proc"))
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    request = json.loads(line)
    if "killer" in request.get("candidate", ""):
        sys.exit(3)
    print(json.dumps({"id": request["id"], "verdict": {"outcome": "PASS", "reason": "none",
                      "compiled": True, "correctness": True, "message": json.dumps(inherited)}}),
          flush=True)
"""


def run_with_fake_serve(tmp_path, names: list[str]) -> dict:
    """`kjudge run` over scaled_sum with the samples `names`, judged by FAKE_SERVE: its results
    by sample."""
    from kjudge.judge import find_binary
    suite = os.path.join(HERE, "kernelbench")
    samples = tmp_path / "samples" / "scaled_sum"
    samples.mkdir(parents=True)
    for name in names:
        (samples / f"{name}.py").write_text(f"# {name}\n")
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} {tmp_path / 'serve.py'}\n")
    fake.chmod(0o755)
    (tmp_path / "serve.py").write_text(FAKE_SERVE)
    out = tmp_path / "run"
    done = subprocess.run([find_binary(), "run", suite, "--samples", str(tmp_path / "samples"),
                           "--out", str(out)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "KJUDGE_PYTHON": str(fake)})
    assert done.returncode == 0, done.stderr[-2000:]
    return {x["sample"]: x for x in map(json.loads,
                                        (out / "results.jsonl").read_text().splitlines())}


def test_a_run_answers_every_sample_when_its_judge_dies_on_one(tmp_path):
    """The judge child dies on the second of three samples: that sample is FAIL, naming it, and a
    new child judges the third (defence off: the run stops after 1 of 3 answers)."""
    lines = run_with_fake_serve(tmp_path, ["a_first", "b_killer", "c_last"])
    assert {k: (v["outcome"], v["reason"]) for k, v in lines.items()} == {
        "a_first": ("PASS", "none"), "b_killer": ("FAIL", "runtime_error"),
        "c_last": ("PASS", "none")}
    assert "judge process exited with status 3" in lines["b_killer"]["message"]


def test_a_judge_child_inherits_no_descriptor_of_the_runs(tmp_path):
    """The judge child (and through it a candidate) holds the standard streams alone: not
    results.jsonl, into which a line written would be read as a verdict (defence off: the
    results file's descriptor is there)."""
    lines = run_with_fake_serve(tmp_path, ["a_sample"])
    assert json.loads(lines["a_sample"]["message"]) == []


# ---- processes, files, memory ------------------------------------------------------------------

def _processes_with(argument: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if argument.encode() in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                pass
    return found


def test_a_process_the_candidate_starts_dies_with_its_worker(tmp_path, no_scan):
    """A child that leaves the worker's process group (setsid) and sleeps: gone when the check
    ends, with the worker's PID namespace (defence off: it outlives the judge)."""
    mark = f"{secrets.randbelow(10**6)}.5"
    path = candidate(tmp_path, f"""
        import os
        if os.fork() == 0:
            os.setsid()
            os.execv("/bin/sleep", ["sleep", "{mark}"])
    """)
    v = judge(path)
    deadline = time.monotonic() + 5
    while _processes_with(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = _processes_with(mark)
    for pid in survivors:
        os.kill(pid, 9)
    assert v["outcome"] == "PASS", v["message"]
    assert survivors == []


def test_a_file_the_candidate_leaves_in_dev_shm_is_gone_with_it(tmp_path):
    """/dev/shm is the worker's own tmpfs: what it writes there is never in the machine's
    (defence off: the file stays after the check)."""
    name = f"/dev/shm/kjudge-attack-{secrets.token_hex(6)}"
    path = candidate(tmp_path, f"""
        with open("{name}", "wb") as f:
            f.write(b"x" * (1 << 20))
    """)
    v = judge(path)
    left = os.path.exists(name)
    if left:
        os.unlink(name)
    assert v["outcome"] == "PASS", v["message"]
    assert not left


def test_a_candidate_over_the_memory_cap_fails(tmp_path):
    """4 GiB held under a 2 GiB cap: the candidate's FAIL(runtime_error), the judge unharmed
    (defence off: the allocation succeeds and the candidate passes)."""
    path = candidate(tmp_path, "", "        held = torch.ones(1 << 30)  # 4 GiB of float32")
    v = judge(path, memory_limit_bytes=2 << 30)
    assert (v["outcome"], v["reason"]) == ("FAIL", "runtime_error")


def test_a_candidate_over_the_size_limit_is_its_fail(tmp_path):
    """8 MiB and one byte of comment: the candidate's FAIL(compile_error), decided before the
    scan reads it (defence off: the judge reads, scans and ships it all)."""
    path = candidate(tmp_path, "#" + "x" * evaluate.MAX_CANDIDATE_BYTES + "\n")
    v = judge(path)
    assert (v["outcome"], v["reason"]) == ("FAIL", "compile_error"), v["message"]
    assert v["message"].startswith("the candidate's source is ")


# ---- the scan ----------------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [
    "from os import fork", "os.fork()", "os.forkpty()", "os.posix_spawn(a, b, c)",
    "from os import posix_spawnp", "os.spawnlp(0, 'x')", "os.execv('/bin/sh', [])",
    "os.setsid()", "os.killpg(0, 9)", "import kjudge.kernelbench.hooks",
    "from __main__ import _State",
])
def test_the_scan_refuses_every_spelling_of_a_process_or_the_judge(spelling):
    assert scan.forbidden_constructs(spelling), spelling


@pytest.mark.parametrize("innocent", ["y = x.clone()", 'if __name__ == "__main__":',
                                      "executor = 1", "forward_kernel(x)"])
def test_the_scan_leaves_ordinary_code_alone(innocent):
    assert scan.forbidden_constructs(innocent) == []
