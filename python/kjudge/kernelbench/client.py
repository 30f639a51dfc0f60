"""The judge's handle on one candidate worker (kjudge.kernelbench.worker): it starts the process
with an empty environment, its own build folder and the confinement's paths, then sends
requests and reads answers under a deadline. A crash, a hang or junk on the pipe ends the
worker and becomes a verdict (runtime_error, timeout); the judge's process is never touched."""
from __future__ import annotations

import glob
import os
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
from typing import Optional

from kjudge.kernelbench import wire

# What a candidate's process may read and run: the system, Python and its packages, the CUDA
# toolkit. Not the judge's files: the problem (its Model is the reference), the goldens.
_SYSTEM_READABLE = ["/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev",
                    "/opt", "/usr/local/cuda"]


class WorkerGone(Exception):
    """The worker ended or broke the protocol: `kind` is "timeout" or "runtime_error"."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class Worker:
    """One candidate's process. `start` confines it and imports torch (a spare can wait here);
    `load` hands it the candidate; `request` asks for one step."""

    def __init__(self, device: str, *, confine: bool = True, require_confinement: bool = True,
                 memory_bytes: int = 0, kernel_record: str = "cupti",
                 build: Optional[dict] = None):
        """`build`: a build worker's (kjudge.kernelbench.build) environment beyond the usual,
        its CUDA architectures and compile jobs; it sees no GPU."""
        self.folder = tempfile.mkdtemp(prefix="kjudge-kernelbench-")
        self.device = device
        self.confinement = ""
        self._timed_out = False
        to_worker, self._to_worker_fd = os.pipe()
        self._from_worker_fd, from_worker = os.pipe()
        self._log = open(os.path.join(self.folder, "worker.log"), "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-s", "-m", "kjudge.kernelbench.worker", str(to_worker),
             str(from_worker)],
            pass_fds=(to_worker, from_worker), env=worker_environment(self.folder, build),
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, cwd=self.folder,
            start_new_session=True)
        os.close(to_worker)
        os.close(from_worker)
        self._inbox, self._outbox = wire.pipe_streams(self._from_worker_fd, self._to_worker_fd)
        readable, writable = confinement_paths(self.folder)
        pch = build.get("pch") if build is not None else None
        if pch:  # torch's precompiled header (kjudge.kernelbench.build), read only
            readable.append(pch)
        self._send({"device": device, "confine": confine, "readable": readable,
                    "writable": writable, "require_confinement": require_confinement,
                    "memory_bytes": memory_bytes, "kernel_record": kernel_record,
                    "build": build is not None, "pch": pch})
        self._confine_required = require_confinement

    def start(self, timeout: float = 120.0) -> str:
        """Waits until the worker is confined and has torch up. Returns the confinement's gap
        ("" when whole); raises WorkerGone when the worker refused to run without it."""
        answer, _ = self._receive(timeout, byte_cap=0)
        self.confinement = answer.get("confined", "")
        if self.confinement and self._confine_required:
            self.close()
            raise WorkerGone("runtime_error", f"the worker cannot be confined: {self.confinement}")
        answer, _ = self._receive(timeout, byte_cap=0)
        if answer.get("status") != "warm":
            raise WorkerGone("runtime_error", f"the worker did not start: {self.log_tail()}")
        return self.confinement

    def load(self, source: str, init_inputs: list, init_seed: int, timeout: float,
             weights: Optional[dict] = None, prebuilt: Optional[str] = None) -> dict:
        """The candidate's import (its compile, or the builds in the folder `prebuilt` loaded)
        and ModelNew's construction (with the recorded weights where given): the worker's
        answer, {"status": "ready"} or a compile_error / runtime_error with its message. A
        build worker answers {"status": "built"} and ends."""
        names = list(weights or {})
        if prebuilt:  # copied into the worker's own folder: the cache is none of its business
            shutil.copytree(prebuilt, os.path.join(self.folder, "prebuilt"))
        self._send({"op": "candidate", "source": source, "init_inputs": init_inputs,
                    "init_seed": init_seed, "weights": names, "prebuilt": bool(prebuilt)},
                   tuple(weights[n] for n in names))
        answer, _ = self._receive(timeout, byte_cap=0)
        return answer

    def request(self, header: dict, tensors=(), *, timeout: float, byte_cap: int):
        self._send(header, tensors)
        return self._receive(timeout, byte_cap=byte_cap)

    def log_tail(self, lines: int = 20) -> str:
        self._log.flush()
        try:
            with open(os.path.join(self.folder, "worker.log"), "rb") as f:
                text = f.read()[-8000:].decode(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Ends the worker (its whole process group) and keeps its folder, to be read."""
        self._kill()

    def close(self) -> None:
        """Ends the worker (its whole process group: compilers it started too) and removes its
        folder."""
        for stream in (self._outbox, self._inbox):
            try:
                stream.close()
            except OSError:
                pass
        self._kill()
        self._log.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _send(self, header: dict, tensors=()) -> None:
        try:
            wire.send(self._outbox, header, tensors)
        except (BrokenPipeError, OSError):
            raise self._gone() from None

    def _receive(self, timeout: float, *, byte_cap: int):
        timer = threading.Timer(timeout, self._expire)
        timer.start()
        try:
            return wire.receive(self._inbox, byte_cap=byte_cap)
        except (wire.WireError, OSError, ValueError) as e:
            raise self._gone(str(e)) from None
        finally:
            timer.cancel()

    def _expire(self) -> None:
        self._timed_out = True
        self._kill()

    def _kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except OSError:
                pass
        self.process.wait()

    def _gone(self, detail: str = "") -> WorkerGone:
        self._kill()
        if self._timed_out:
            return WorkerGone("timeout", "the candidate ran past its deadline")
        code = self.process.returncode
        how = (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else
               f"exited with status {code}")
        tail = self.log_tail()
        message = f"the worker {how}".replace("worker killed", "worker was killed") + (f" ({detail})" if detail and code == 0 else "")
        return WorkerGone("runtime_error", message + (f":\n{tail}" if tail else ""))


def worker_environment(folder: str, build: Optional[dict] = None) -> dict[str, str]:
    """Nothing of the judge's environment but where the toolchain is: the build folder is the
    home, the temporary folder and the extension and Triton caches. A build worker's (`build`)
    sees no GPU and is told the architectures and compile jobs."""
    cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or _nvcc_home()
    path = [os.path.dirname(sys.executable)]
    if cuda_home:
        path.append(os.path.join(cuda_home, "bin"))
    path += ["/usr/local/bin", "/usr/bin", "/bin"]
    env = {"PATH": ":".join(path), "HOME": folder, "TMPDIR": folder,
           # kjudge itself, wherever it is installed (a wheel unpacked beside site-packages)
           "PYTHONPATH": os.path.dirname(_package_folder()), "PYTHONNOUSERSITE": "1",
           "TORCH_EXTENSIONS_DIR": os.path.join(folder, "torch_extensions"),
           "TRITON_CACHE_DIR": os.path.join(folder, "triton"), "PYTHONDONTWRITEBYTECODE": "1",
           "LANG": "C.UTF-8"}
    if cuda_home:
        env["CUDA_HOME"] = cuda_home
    for name in ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "TORCH_CUDA_ARCH_LIST"):
        if name in os.environ:
            env[name] = os.environ[name]
    if build is not None:
        env.update({"CUDA_VISIBLE_DEVICES": "", "TORCH_CUDA_ARCH_LIST": build["arch_list"],
                    "MAX_JOBS": str(build.get("jobs", 1))})
    return env


def confinement_paths(folder: str) -> tuple[list[str], list[str]]:
    """(readable, writable) for the worker's Landlock ruleset."""
    readable = list(_SYSTEM_READABLE)
    readable += [sys.prefix, sys.base_prefix, sys.exec_prefix]
    readable += site.getsitepackages() + [site.getusersitepackages()]
    package = _package_folder()
    readable += [package] + [os.path.realpath(os.path.join(package, entry))  # symlinked dev trees
                             for entry in os.listdir(package)]
    readable += [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p]
    home = os.environ.get("CUDA_HOME") or _nvcc_home()
    if home:
        readable.append(home)
    # /proc/self: the CUDA driver writes its own process's entries (cudaGetDeviceCount fails
    # with "OS call failed" without); the rule is made in the worker, so it is the worker's.
    writable = [folder, "/dev/null", "/dev/shm", "/proc/self"] + glob.glob("/dev/nvidia*")
    return sorted(set(p for p in readable if os.path.exists(p))), writable


def _package_folder() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _nvcc_home() -> Optional[str]:
    nvcc = shutil.which("nvcc")
    return os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else None
