"""The KernelBench adapter's candidate worker: one process per candidate, started by the judge
(kjudge.kernelbench.client) with an empty environment and two pipes. It confines itself before
torch is imported (kjudge._sandbox: namespaces, Landlock, seccomp), builds the candidate's
ModelNew in its one writable folder, then answers the judge's requests: run a case (on its own
copy of the inputs, with the caching allocator's free blocks poisoned, the torch ops it calls
recorded and its inputs checked afterwards), profile a call (which kernels ran, on which
streams), time calls. It never sees the golden or the reference.

A build worker (hello's "build", kjudge.kernelbench.build) only imports the candidate and makes
its ModelNew on the CPU, with no GPU visible, recording each load_inline build
(kjudge.kernelbench.prebuilt), and ends; a judging worker given those builds loads them."""
from __future__ import annotations

import importlib.util
import os
import sys
import threading
import time
import traceback

from kjudge.kernelbench import wire
# Bound here, before any of the candidate's code runs: a candidate that replaces the names in
# kjudge's modules afterwards (hooks.OpRecorder, timing.time_calls) does not reach the worker's.
# Neither module imports torch at import: the worker is still single-threaded here.
from kjudge.kernelbench.hooks import OpRecorder, profile_call
from kjudge.kernelbench.timing import time_calls
from kjudge.kernelbench import prebuilt

_BYTE_CAP = 1 << 36  # the judge is trusted; its messages are as large as the problem's inputs


def main() -> int:
    inbox, outbox = wire.pipe_streams(int(sys.argv[1]), int(sys.argv[2]))
    hello, _ = wire.receive(inbox, byte_cap=0)
    gaps = _confine(hello)  # single-threaded still: a user namespace refuses a threaded process
    _exit_with_the_judge()
    wire.send(outbox, {"confined": gaps})
    if gaps and hello.get("require_confinement", True):
        return 0
    if hello.get("build"):
        return _build(inbox, outbox, hello.get("pch"))
    state = _State(hello)
    wire.send(outbox, {"status": "warm"})
    try:
        candidate, weights = wire.receive(inbox, byte_cap=_BYTE_CAP)
    except wire.WireError:
        return 0  # a spare the judge never used
    wire.send(outbox, state.build_candidate(candidate, dict(zip(candidate["weights"], weights))))
    if not state.model:
        return 0
    while True:
        try:
            request, tensors = wire.receive(inbox, byte_cap=_BYTE_CAP)
        except wire.WireError:
            return 0  # the judge is done with us
        op = request.get("op")
        if op == "quit":
            return 0
        began = time.perf_counter()
        try:
            header, out = getattr(state, f"op_{op}")(request, tensors)
        except Exception as e:  # the candidate's exception: a verdict, reported with its trace
            header, out = {"status": "runtime_error", "message": _exception_text(e)}, ()
        header["seconds"] = time.perf_counter() - began  # the judge's breakdown of its time
        wire.send(outbox, header, out)


def _build(inbox, outbox, pch) -> int:
    """The build worker: torch up, then the candidate's import and ModelNew on the CPU, each
    load_inline build recorded in builds/ (torch's header read precompiled from `pch`, where
    the judge gives one). How the import ended is reported, never judged."""
    import torch
    wire.send(outbox, {"status": "warm"})
    try:
        candidate, _ = wire.receive(inbox, byte_cap=_BYTE_CAP)
    except wire.WireError:
        return 0
    prebuilt.record_builds(os.path.join(os.getcwd(), "builds"), pch if isinstance(pch, str) else None)
    began = time.perf_counter()
    ended = "built"
    try:
        module = _import_candidate(candidate["source"])
        if hasattr(module, "ModelNew") and candidate.get("init_inputs") is not None:
            torch.manual_seed(candidate["init_seed"])  # a build in its __init__ is made here
            module.ModelNew(*candidate["init_inputs"])
    except BaseException as e:  # the judging worker meets it again and says what it was
        ended = _exception_text(e)[:2000]
    wire.send(outbox, {"status": "built", "import": ended,
                       "seconds": time.perf_counter() - began})
    return 0


def _import_candidate(source: str):
    """The candidate's module, from candidate.py in the worker's folder."""
    path = os.path.join(os.getcwd(), "candidate.py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("candidate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _open_kernel_record(torch, hello: dict):
    """kjudge._kernel_record opened on the CUPTI torch loaded (else one beside torch or in the
    CUDA toolkit), or None with why not: the profiler's CUDA record then stands in. Opened here,
    before any of the candidate's code exists. hello's kernel_record "torch.profiler" keeps to
    the profiler's (a test's switch, which the verdict lists among the defences off)."""
    if hello.get("kernel_record", "cupti") != "cupti":
        return None, "the judge asked for torch's profiler record"
    try:
        from kjudge import _kernel_record
    except ImportError as e:
        return None, f"kjudge._kernel_record does not import: {e}"
    roots = [os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(torch.__file__))]
    home = os.environ.get("CUDA_HOME", "")
    paths = [os.path.join(root, *parts, "libcupti.so" + suffix)
             for root in roots
             for parts in (("lib",), ("nvidia", "cuda_cupti", "lib"), ("nvidia", "cu13", "lib"))
             for suffix in (".13", ".12", "")]
    if home:
        paths += [os.path.join(home, sub, "libcupti.so") for sub in
                  ("lib64", "lib", os.path.join("extras", "CUPTI", "lib64"))]
    gap = _kernel_record.open([p for p in paths if os.path.exists(p)])
    return (None, gap) if gap else (_kernel_record, "")


def _warm_up(torch, device, kernel_record) -> str:
    """What the first case would otherwise pay, paid while the worker waits as a spare: the op
    recorder's first dispatch mode (torch imports its machinery then: 1 s here, 4 to 6 s on the
    16-core GPU machine, which ran CPU candidates past a 5 s deadline), and on CUDA the context
    (created at the first allocation) and the profiler's or CUPTI's first session (its start
    takes about a second). Returns why the kernel record cannot be trusted ("" when it can): one
    that did not see the marker and the add here, before any of the candidate's code exists,
    is not used (the profiler's record stands in, and the verdict says so)."""
    x = torch.zeros(1, device=device)
    with OpRecorder():
        x.add_(1)
    try:
        seen = profile_call(lambda: x.add_(1), device, kernel_record)
    except RuntimeError as e:
        if kernel_record is None:
            raise
        return f"CUPTI's record failed at warm-up: {e}"
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    if kernel_record is not None and (seen["current_stream"] is None or not seen["kernels"]):
        return "CUPTI's record held no kernel at warm-up"
    return ""


def _exit_with_the_judge() -> None:
    """A judge killed while its candidate spins must not leave the candidate running (the pipe's
    end tells a worker only when it next reads). The judge's deadline timer dies with the judge,
    so the worker watches its parent itself; PR_SET_PDEATHSIG would fire when the judge's
    thread that started it ends, which a judge's worker pool does between checks. A confined
    worker (the first process of its PID namespace) needs no watch: the process outside the
    namespace, the one the judge started, watches the judge and takes the namespace with it."""
    if os.getpid() == 1:
        return
    judge = os.getppid()

    def watch() -> None:
        while os.getppid() == judge:
            time.sleep(0.25)
        os._exit(0)

    threading.Thread(target=watch, name="judge-watch", daemon=True).start()


def _confine(hello: dict) -> str:
    if not hello.get("confine", True):
        return ""
    from kjudge import _sandbox
    return _sandbox.confine(hello["readable"], hello["writable"],
                            memory_bytes=hello.get("memory_bytes", 0))


def _exception_text(e: BaseException) -> str:
    """"Type: message (candidate.py, line N)" first, then the end of the trace."""
    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if f.filename.endswith("candidate.py")]
    where = f" (candidate.py, line {mine[-1].lineno})" if mine else ""
    trace = "".join(traceback.format_exception(type(e), e, e.__traceback__)[-6:])
    return f"{type(e).__name__}: {e}{where}"[:1000] + "\n" + trace[-3000:]


class _State:
    def __init__(self, hello: dict):
        import torch
        self.torch = torch
        self.hello = hello
        self.device = torch.device(hello["device"])
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        self.kernel_record, self.kernel_record_gap = None, ""
        if self.device.type == "cuda":
            self.kernel_record, self.kernel_record_gap = _open_kernel_record(torch, hello)
        distrusted = _warm_up(torch, self.device, self.kernel_record)
        if distrusted:
            self.kernel_record, self.kernel_record_gap = None, distrusted
            _warm_up(torch, self.device, None)  # the profiler's CUDA record's first session
        self.model = None
        self.returned: list = []  # every output handed back, kept alive: a reused one shows
        self.timing_sets: list[list] = []
        self.timed_outputs: list = []

    def build_candidate(self, candidate: dict, weights: dict) -> dict:
        """Writes the candidate's source into the build folder, imports it (its load_inline
        compile included, or a build worker's build of it loaded) and builds ModelNew with the problem's init inputs under the
        problem's seed, as KernelBench does."""
        torch = self.torch
        builds = None
        if candidate.get("prebuilt"):  # a build worker's builds, in this worker's folder
            builds = prebuilt.use_builds(os.path.join(os.getcwd(), "prebuilt"))
        try:
            module = _import_candidate(candidate["source"])
            if not hasattr(module, "ModelNew"):
                return {"status": "compile_error", "message": "the candidate defines no ModelNew",
                        "builds": builds}
        except BaseException as e:  # SystemExit from a failed build included
            return {"status": "compile_error", "message": _exception_text(e), "builds": builds}
        try:
            torch.manual_seed(candidate["init_seed"])
            model = module.ModelNew(*candidate["init_inputs"])
            if weights:  # recorded ones: ModelNew keeps the Model's parameter names
                model.load_state_dict(weights, strict=True)
            if isinstance(model, torch.nn.Module):
                model = model.to(self.device)
            self.model = model
        except BaseException as e:
            return {"status": "runtime_error", "message": _exception_text(e)}
        return {"status": "ready", "builds": builds}

    def op_run(self, request: dict, tensors: list):
        """One case: the outputs, the torch ops called and the outputs it reused; the inputs as
        the call left them come back after the outputs, so the judge compares them with what it
        sent (no helper of the worker's decides that)."""
        torch = self.torch
        inputs = self._inputs(request, tensors)
        self._poison_free_blocks()
        with OpRecorder() as ops, torch.no_grad():
            result = self.model(*inputs)
        self._synchronize()
        outputs = _output_tensors(result, torch)
        if outputs is None:
            return {"status": "wrong_type", "message": f"forward returned {type(result).__name__}"
                    ", not a tensor or a tuple of tensors"}, ()
        reused = [i for i, t in enumerate(outputs)
                  if any(t.data_ptr() == r.data_ptr() and t.numel() for r in self.returned)]
        self.returned.extend(outputs)
        after = [x for x in inputs if isinstance(x, torch.Tensor)]
        return {"status": "ok", "ops": ops.counts, "output_reused": reused,
                "outputs": len(outputs)}, outputs + after

    def op_profile(self, request: dict, tensors: list):
        """One call under the profiler, after a marker kernel on the current stream: every
        device kernel with its stream and time (CUPTI's record where it opened), the marker's
        stream (the current one), and the aten ops the profiler recorded (its own record,
        beside the dispatch recorder's)."""
        inputs = self._inputs(request, tensors)
        profile = profile_call(lambda: self.model(*inputs), self.device, self.kernel_record)
        return {"status": "ok", **profile, "kernel_record_gap": self.kernel_record_gap}, ()

    def op_timing_sets(self, request: dict, tensors: list):
        self.timing_sets = []
        for count in request["set_sizes"]:
            self.timing_sets.append(self._inputs(request, tensors[:count]))
            tensors = tensors[count:]
        return {"status": "ok"}, ()

    def op_time(self, request: dict, tensors: list):
        """The timing loop over the sets sent before, each set one call's (the first `warmup`
        the warm-up calls'). Only the times come back, so the judge's clock around this request
        bounds them; the outputs of the trials in `keep` wait for op_timed_outputs."""
        sets, self.timing_sets = self.timing_sets, []
        times, kept = time_calls(lambda xs: self.model(*xs), sets, warmup=request["warmup"],
                                 keep=request["keep"])
        self.timed_outputs = [kept.get(t) for t in request["keep"]]
        return {"status": "ok", "times_ms": times}, ()

    def op_timed_outputs(self, request: dict, tensors: list):
        """The outputs of the trials op_time kept, so the judge re-checks what was timed."""
        outputs, counts = [], []
        for result in self.timed_outputs:
            tensors = _output_tensors(result, self.torch) or []
            outputs.extend(tensors)
            counts.append(len(tensors))
        self.timed_outputs = []
        return {"status": "ok", "output_counts": counts}, outputs

    def op_backward(self, request: dict, tensors: list):
        """The gradients of the float inputs and of the parameters, given the outputs'
        cotangents (the last `cotangents` tensors of the message)."""
        torch = self.torch
        count = request["cotangents"]
        inputs = self._inputs(request, tensors[:len(tensors) - count])
        cotangents = [t.to(self.device) for t in tensors[len(tensors) - count:]]
        leaves = [x.requires_grad_() for x in inputs
                  if isinstance(x, torch.Tensor) and x.is_floating_point()]
        params = [(n, p) for n, p in self.model.named_parameters() if p.requires_grad] \
            if isinstance(self.model, torch.nn.Module) else []
        result = self.model(*inputs)
        outputs = [result] if isinstance(result, torch.Tensor) else list(result)
        grads = torch.autograd.grad(outputs, leaves + [p for _, p in params], cotangents,
                                    allow_unused=True)
        grads = [torch.zeros_like(x) if g is None else g for x, g in
                 zip(leaves + [p for _, p in params], grads)]
        return {"status": "ok", "names": [f"input{i}" for i in range(len(leaves))] +
                [n for n, _ in params]}, grads

    def _inputs(self, request: dict, tensors: list) -> list:
        """The case's arguments in order: tensors moved to the device, other values as sent."""
        values, it = [], iter(tensors)
        for slot in request["arguments"]:
            values.append(next(it).to(self.device) if slot == "tensor" else slot["value"])
        return values

    def _poison_free_blocks(self) -> None:
        """Fills the caching allocator's free blocks with NaN, so a candidate that reads a block
        it never wrote (a stale result in torch.empty's memory) reads NaN, not an answer. Block
        by block, largest first (the allocator's best fit hands each request that block back):
        one tensor of all the free bytes would take a new segment where the free memory is
        split, and the pool would grow with every call."""
        torch = self.torch
        if self.device.type != "cuda":
            return
        index = self.device.index if self.device.index is not None else \
            torch.cuda.current_device()
        sizes = sorted((block["size"] for segment in torch.cuda.memory_snapshot()
                        if segment["device"] == index for block in segment["blocks"]
                        if block["state"] == "inactive"), reverse=True)
        reserved = torch.cuda.memory_reserved(self.device)
        held = []
        for size in sizes:
            if size >= 4:
                held.append(torch.full((size // 4,), float("nan"), device=self.device))
            if torch.cuda.memory_reserved(self.device) != reserved:
                break  # a request that did not fit a free block: the pool grew; stop there
        torch.cuda.synchronize(self.device)
        del held

    def _synchronize(self) -> None:
        if self.device.type == "cuda":
            self.torch.cuda.synchronize(self.device)


def _output_tensors(result, torch):
    if isinstance(result, torch.Tensor):
        return [result.detach()]
    if isinstance(result, (tuple, list)) and all(isinstance(t, torch.Tensor) for t in result):
        return [t.detach() for t in result]
    return None


if __name__ == "__main__":
    os._exit(main())
