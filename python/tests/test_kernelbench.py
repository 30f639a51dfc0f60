"""kjudge.kernelbench on the CPU: the expectations of python/tests/kernelbench (pure-PyTorch
candidates, one per defence) through the one runner, the worker's confinement tried from inside,
and the adapter's wire format and static scan. Skipped where torch is not installed."""
import json
import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

torch = pytest.importorskip("torch")

import kjudge  # noqa: E402
from kjudge.kernelbench import Settings, expect, scan, wire  # noqa: E402
from kjudge.kernelbench.__main__ import main as cli_main  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "kernelbench")
# Where kjudge is imported from (site-packages, or a folder on PYTHONPATH on the GPU machine).
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(kjudge.__file__)))


def test_every_expectation_holds_on_the_cpu():
    assert expect.run(FIXTURES, settings=Settings(device="cpu", run_timeout=5.0)) == []


def test_the_worker_cannot_reach_the_judge(tmp_path):
    """Inside the confinement: the judge's memory (its pid not even in the namespace's /proc), a
    signal to it, a file outside the lists, a TCP connection to a server the judge listens on, all
    refused; the build folder writable; the worker the first process of its PID namespace."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    secret = tmp_path / "secret.txt"
    secret.write_text("the golden")
    build = tmp_path / "build"
    build.mkdir()
    probe = textwrap.dedent(f"""
        import os, signal, socket, sys, json
        from kjudge import _sandbox
        gaps = _sandbox.confine(sorted(set(["/usr", "/lib", "/lib64", "/etc", "/proc",
                                            sys.prefix, sys.base_prefix] + sys.path[1:])),
                                [{str(build)!r}])
        tried = {{"gaps": gaps}}
        def attempt(name, f):
            try:
                f()
                tried[name] = "allowed"
            except OSError as e:
                tried[name] = e.__class__.__name__
        attempt("read_secret", lambda: open({str(secret)!r}).read())
        attempt("parent_memory", lambda: open("/proc/{os.getpid()}/mem", "rb").read(1))
        attempt("signal_parent", lambda: os.kill({os.getpid()}, 0))
        tried["pid"] = os.getpid()  # the first process of a PID namespace of its own
        attempt("connect", lambda: socket.create_connection(("127.0.0.1", {port}), timeout=2))
        attempt("write_build", lambda: open({str(build / "x")!r}, "w").write("ok"))
        print(json.dumps(tried))
    """)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": PACKAGE_PARENT,
                                          # where the GPU machine finds kjudge's libraries
                                          **{k: os.environ[k] for k in ["LD_LIBRARY_PATH"]
                                             if k in os.environ}})
    server.close()
    assert out.returncode == 0, out.stderr
    tried = json.loads(out.stdout.strip().splitlines()[-1])
    # The judge's process is not even listed in the namespace's own /proc.
    assert tried == {"gaps": "", "read_secret": "PermissionError",
                     "parent_memory": "FileNotFoundError", "signal_parent": "PermissionError",
                     "connect": tried["connect"], "write_build": "allowed", "pid": 1}
    assert tried["connect"] != "allowed"  # no network in its own namespace


def test_the_wire_refuses_a_size_that_disagrees_with_the_shape(tmp_path):
    path = tmp_path / "message"
    with open(path, "wb") as f:
        wire.send(f, {"op": "run"}, (torch.arange(6, dtype=torch.float32).reshape(2, 3),))
    with open(path, "rb") as f:
        header, tensors = wire.receive(f, byte_cap=1 << 20)
    assert header == {"op": "run"} and tensors[0].tolist() == [[0, 1, 2], [3, 4, 5]]
    with open(path, "rb") as f:
        with pytest.raises(wire.WireError, match="more than 16 bytes"):
            wire.receive(f, byte_cap=16)
    raw = path.read_bytes().replace(b'"nbytes": 24', b'"nbytes": 99')
    path.write_bytes(raw)
    with open(path, "rb") as f:
        with pytest.raises(wire.WireError, match="size disagrees"):
            wire.receive(f, byte_cap=1 << 20)


def test_the_scan_names_what_it_refuses_and_the_kernels_it_finds():
    source = textwrap.dedent("""
        import ctypes
        s = torch.cuda.Stream()
        y = torch.compile(f)            # allowed: torch's compiler
        __global__ void __launch_bounds__(256) relu_kernel(const float* x) {}
        @triton.jit
        def add_kernel(x_ptr):
            pass
    """)
    assert [str(f) for f in scan.forbidden_constructs(source)] == [
        "line 2: `ctypes` ctypes reaches native code and memory outside torch",
        "line 3: `torch.cuda.Stream` makes or uses a stream of its own: the work would escape "
        "the timed stream"]
    assert scan.kernel_names(source) == ["add_kernel", "relu_kernel"]
    # A Triton candidate's first call has the JIT's deadline; a CUDA one's the run's.
    assert scan.uses_triton(source) and not scan.uses_triton(source.replace("@triton.jit", ""))


def test_the_cli_prints_a_line_and_exits_1_on_a_fail(capsys):
    problem = os.path.join(FIXTURES, "scaled_sum", "problem.py")
    status = cli_main([problem, os.path.join(FIXTURES, "scaled_sum", "candidates",
                                             "uses_ctypes.py"), "--device", "cpu"])
    assert status == 1
    assert capsys.readouterr().out.startswith("FAIL(forbidden_construct) ")


def test_a_defence_turned_off_is_in_the_verdict_and_on_the_line(capsys):
    """--allow-torch (like --unconfined) leaves a trace: a score made with a defence off must not
    pass for one made with all of them."""
    problem = os.path.join(FIXTURES, "softmax", "problem.py")
    torch_softmax = os.path.join(FIXTURES, "softmax", "candidates", "calls_softmax.py")
    assert cli_main([problem, torch_softmax, "--device", "cpu", "--allow-torch"]) == 0
    assert capsys.readouterr().out.rstrip().endswith(" | defences off: --allow-torch")
    assert cli_main([problem, torch_softmax, "--device", "cpu", "--allow-torch", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["defences_off"] == ["--allow-torch"]


def test_the_cli_names_a_missing_problem_and_exits_2(capsys):
    status = cli_main(["/nonexistent/problem.py", os.path.join(FIXTURES, "softmax", "candidates",
                                                               "by_hand.py"), "--device", "cpu"])
    assert status == 2
    assert capsys.readouterr().err == \
        "kjudge kernelbench: /nonexistent/problem.py: no such problem file\n"


def test_the_json_verdict_carries_kernelbench_fields_and_a_bench(capsys):
    problem = os.path.join(FIXTURES, "softmax", "problem.py")
    status = cli_main([problem, os.path.join(FIXTURES, "softmax", "candidates", "by_hand.py"),
                       "--device", "cpu", "--json", "--bench", "--trials", "3"])
    v = json.loads(capsys.readouterr().out)
    assert status == 0
    assert (v["compiled"], v["correctness"], v["outcome"], v["trust"]) == (True, True, "PASS",
                                                                           "python")
    assert v["runtime"] > 0 and v["ref_runtime"] > 0 and v["runtime_stats"]["trials"] == 3
    assert [c["id"] for c in v["cases"]][:5] == ["seed:42", "seed:43", "seed:44", "scaled:64",
                                                 "scaled:0.015625"]
    assert any(c["id"].endswith(":timed") for c in v["cases"])
    assert v["isolation"]["confined"] is True
    # What the candidate's process could blind, named; the rest was decided in the judge.
    assert v["checks_in_worker"] == ["forbidden_op", "output_reused", "side_stream",
                                     "decoy_kernel", "runtime"]
    # Of those, what the candidate's Python could reach (no kernels on the CPU, no record).
    assert v["checks_in_python"] == ["forbidden_op", "output_reused", "runtime"]
    assert v["launches"]["kernel_record"] is None
    assert v["runtime_stats"]["decided_by"] in ("worker_events", "judge_clock")


def test_backward_compares_the_gradients_of_inputs_and_parameters(capsys):
    """scaled_sum's gradient is the scale everywhere: the blocked sum gets it exactly; each
    seed's gradient case is judged and named."""
    problem = os.path.join(FIXTURES, "scaled_sum", "problem.py")
    status = cli_main([problem, os.path.join(FIXTURES, "scaled_sum", "candidates",
                                             "blocked_sum.py"), "--device", "cpu", "--json",
                       "--backward", "--scalings", ""])
    v = json.loads(capsys.readouterr().out)
    assert (status, v["outcome"]) == (0, "PASS")
    assert [c["id"] for c in v["cases"]] == ["seed:42", "seed:43", "seed:44", "seed:42:backward",
                                             "seed:43:backward", "seed:44:backward"]
    assert [o["name"] for o in v["cases"][3]["outputs"]] == ["input0"]


def test_the_options_are_those_docs_cli_md_lists():
    """`kjudge kernelbench` is parsed twice (the C++ CLI for --help, this module for the run):
    both follow docs/cli.md's Options block, which the C++ help test holds to its parser."""
    import re
    docs = open(os.path.join(HERE, "..", "..", "docs", "cli.md")).read()
    section = docs.split("## kjudge kernelbench\n")[1].split("\n## ")[0]
    block = section.split("Options:\n")[1].split("\nExit status")[0]
    documented = set(re.findall(r"^    (--[a-z-]+)", block, re.M))
    from kjudge.kernelbench.__main__ import make_parser
    registered = {o for a in make_parser()._actions for o in a.option_strings
                  if o.startswith("--")}
    assert registered - {"--help"} == documented


def _record(folder, problem_path, seed=5):
    """Writes inputs.npz, weights.npz and outputs.npz of the linear problem: weights and inputs
    of their own (not the seeded ones), the predictions the Model made with them."""
    import numpy
    from kjudge.kernelbench.problem import load_problem
    problem = load_problem(problem_path)
    torch.manual_seed(seed)
    model = problem.module.Model(*problem.init_inputs)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p))
        x = torch.randn(8, 256)
        out = model(x)
    numpy.savez(folder / "inputs.npz", arg0=x.numpy())
    numpy.savez(folder / "weights.npz", **{k: v.float().numpy()
                                          for k, v in model.state_dict().items()})
    numpy.savez(folder / "outputs.npz", out0=out.numpy())


def test_recorded_weights_inputs_and_predictions_are_replayed(tmp_path, capsys):
    problem = os.path.join(FIXTURES, "linear", "problem.py")
    _record(tmp_path, problem)
    candidates = os.path.join(FIXTURES, "linear", "candidates")
    status = cli_main([problem, os.path.join(candidates, "by_rows.py"),
                       os.path.join(candidates, "bf16_weights.py"), "--device", "cpu", "--json",
                       "--record", str(tmp_path)])
    good, bf16 = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert status == 1
    assert (good["outcome"], [c["id"] for c in good["cases"]]) == ("PASS", ["recorded"])
    assert (bf16["outcome"], bf16["reason"], bf16["case"]) == ("FAIL", "mismatch", "recorded")


def test_recorded_predictions_that_do_not_fit_the_model_are_named(tmp_path, capsys):
    import numpy
    problem = os.path.join(FIXTURES, "linear", "problem.py")
    _record(tmp_path, problem)
    numpy.savez(tmp_path / "outputs.npz", out0=numpy.zeros((8, 3), dtype=numpy.float32))
    status = cli_main([problem, os.path.join(FIXTURES, "linear", "candidates", "by_rows.py"),
                       "--device", "cpu", "--record", str(tmp_path)])
    assert status == 2
    assert capsys.readouterr().err == (
        f"kjudge kernelbench: {tmp_path}: the recorded outputs' shapes [(8, 3)] are not the "
        "Model's [(8, 128)]\n")


def test_a_spinning_worker_dies_with_its_judge(tmp_path):
    """The judge killed (SIGKILL: no deadline timer, no cleanup) while its candidate spins: the
    worker notices its parent is gone and exits."""
    spins = os.path.join(FIXTURES, "scaled_sum", "candidates", "spins.py")
    judge = textwrap.dedent(f"""
        import os, signal, sys, torch
        from kjudge.kernelbench.client import Worker
        worker = Worker("cpu", require_confinement=False)
        worker.start()
        assert worker.load(open({spins!r}).read(), [0.5], 42, 60)["status"] == "ready"
        worker._send({{"op": "run", "arguments": ["tensor"]}}, (torch.ones(2, 3),))
        print(worker.process.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    out = subprocess.run([sys.executable, "-c", judge], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": PACKAGE_PARENT})
    pid = int(out.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.1)
    alive = _alive(pid)
    if alive:
        os.killpg(pid, 9)
    assert not alive


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_suite_of_kernelbench_problems_runs_like_any_suite(tmp_path):
    """`kjudge run` over the fixtures as a suite (manifest.toml), judged by the adapter through
    serve's protocol: every candidate's verdict is its expectation's, and the summary counts them
    (the spinning candidate left out: its deadline is a minute here)."""
    from kjudge.judge import find_binary
    samples = tmp_path / "samples"
    expected = {}
    for problem, candidate, outcome, reason in (r[:4] for r in expect.read_expectations(FIXTURES)):
        if candidate == "spins":
            continue
        (samples / problem).mkdir(parents=True, exist_ok=True)
        source = os.path.join(FIXTURES, problem, "candidates", candidate + ".py")
        (samples / problem / (candidate + ".py")).write_text(open(source).read())
        expected[(problem, candidate)] = (outcome, reason)
    out = tmp_path / "run"
    done = subprocess.run([find_binary(), "run", FIXTURES, "--samples", str(samples), "--backend",
                           "host", "--out", str(out)], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "KJUDGE_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    got = {(x["problem"], x["sample"]): (x["outcome"], x["reason"]) for x in lines}
    assert set(got) == set(expected)
    wrong = {key: got[key] for key, want in expected.items() if not expect.holds(*got[key], *want)}
    assert wrong == {}, {key: expected[key] for key in wrong}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["suite_figures"]["problems"] == 3
    assert summary["suite_figures"]["accuracy"] == 1.0  # each problem has a correct candidate


def test_serve_and_the_python_judge_take_a_kernelbench_request(tmp_path, monkeypatch):
    """A trainer posts Python candidates to the endpoint it posts CUDA ones to: `kjudge serve`
    (here through kjudge.Judge) hands a KernelBench-format request (a problem.py or its folder,
    a ModelNew source) to the adapter, which it starts at the first one, and a native request
    beside it is judged as ever."""
    from kjudge.judge import Judge
    monkeypatch.setenv("KJUDGE_PYTHON", sys.executable)
    problem = os.path.join(FIXTURES, "scaled_sum")
    zeros = ("import torch\n\nclass ModelNew(torch.nn.Module):\n    def __init__(self, scale):\n"
             "        super().__init__()\n\n    def forward(self, x):\n"
             "        return torch.zeros(x.shape[0])\n")
    judge = Judge(backend="host", cache=tmp_path / "nvrtc", case_cache_dir=tmp_path / "cases",
                  timeout=600)
    try:
        good = judge.check(problem, os.path.join(problem, "candidates", "blocked_sum.py"))
        wrong = judge.check(os.path.join(problem, "problem.py"), source=zeros, name="zeros.py")
        native = judge.check(os.path.join(HERE, "..", "..", "problems", "vector_add"),
                             os.path.join(HERE, "..", "..", "problems", "vector_add",
                                          "solutions", "basic.cu"))
    finally:
        judge.close()
    assert (good.outcome, good.reason) == ("PASS", "none")
    assert (wrong.outcome, wrong.reason) == ("FAIL", "mismatch")
    assert (native.outcome, native.reason) == ("PASS", "none")
