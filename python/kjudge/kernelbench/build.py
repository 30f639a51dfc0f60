"""The compile stage of KernelBench judging: a pool of confined build workers, sized to the CPU
cores, imports each candidate (which builds its `load_inline` extensions) with no GPU in
sight, and keeps the builds on disk under a key of the source and the toolchain, so that a
GPU judge loads them without building (kjudge.kernelbench.prebuilt) and a duplicate candidate,
common in RL batches, is built once. Builds run while other candidates are judged.

What a build worker does decides nothing: its import's end is reported, never judged, and a
build the judging worker does not find it makes itself, as before. The cache is this user's
alone (a folder of mode 0700 this user owns; any other is refused and nothing is cached)."""
from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Optional

import kjudge
from kjudge.kernelbench import prebuilt
from kjudge.kernelbench.client import Worker, WorkerGone

# An entry's files: record.json, KEY.so for each build, build.json (what the build said).
_ENTRY_FILES_CAP = 64
_ENTRY_BYTES_CAP = 2 << 30


@dataclass
class Build:
    """One candidate's builds: `folder` holds them (None when there are none to load)."""
    key: str
    folder: Optional[str]
    seconds: float          # the build worker's import, 0 for a cache hit
    from_cache: bool
    message: str            # how the build worker's import ended ("built" or its exception)


def default_cache_root() -> Optional[str]:
    """Where `kjudge cache` looks: $XDG_CACHE_HOME/kjudge or ~/.cache/kjudge."""
    base = os.environ.get("XDG_CACHE_HOME") or (
        os.path.join(os.environ["HOME"], ".cache") if os.environ.get("HOME") else "")
    return os.path.join(base, "kjudge") if base else None


def private_folder(path: str) -> str:
    """`path` made (mode 0700) or checked: this user's, no one else's to read or write.
    Raises PermissionError naming it otherwise."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.lstat(path)
    if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != os.getuid() or \
            st.st_mode & 0o077:
        raise PermissionError(f"{path}: the build cache must be a folder of this user's that no "
                              "one else can read or write (mode 0700)")
    return path


def toolchain_identity(arch_list: str) -> str:
    """What a build depends on beyond the source: torch, its CUDA, nvcc, the host compiler, the
    architectures, Python and kjudge."""
    import torch
    words = [f"torch {torch.__version__}", f"cuda {torch.version.cuda}", f"arch {arch_list}",
             f"python {sys.version}", f"kjudge {kjudge.__version__}"]
    for tool in ("nvcc", "c++"):
        try:
            words.append(subprocess.run([tool, "--version"], capture_output=True, text=True,
                                        timeout=30).stdout)
        except (OSError, subprocess.SubprocessError):
            words.append(f"no {tool}")
    return "\n".join(words)


def cuda_arch_list(device: str) -> str:
    """TORCH_CUDA_ARCH_LIST for builds the judge on `device` loads ("9.0"); the environment's
    own where it is set; "" on the CPU (no CUDA build is loaded there)."""
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    if not str(device).startswith("cuda"):
        return ""
    import torch
    major, minor = torch.cuda.get_device_capability(torch.device(device))
    return f"{major}.{minor}"


# ---- torch's header precompiled (the C++ translation unit's fifth of a build) -----------------

def torch_header_pch(cache: str, identity: str, timeout: float = 900.0) -> Optional[str]:
    """The folder to put first on a build's include path so that `#include <torch/extension.h>`
    (the first line of every load_inline main.cpp) reads a precompiled header: made once per
    toolchain in the cache, here in the judge (torch's own header and flags, nothing of any
    candidate's), from the flags torch gives a main.cpp without extra ones. A compile whose
    flags differ is refused the header by the compiler itself and reads the text: the object is
    the same byte for byte either way. None where it cannot be made (the reason is kept)."""
    key = hashlib.sha256(("torch/extension.h precompiled\0" + identity).encode()).hexdigest()
    entry = os.path.join(cache, key)
    include = os.path.join(entry, "include")
    if os.path.isfile(os.path.join(entry, "build.json")):
        return include if os.path.isfile(os.path.join(include, "torch", "extension.h.gch")) \
            else None
    began = time.perf_counter()
    staging = tempfile.mkdtemp(prefix=".entry-", dir=cache)
    message = "torch/extension.h precompiled"
    try:
        cxx, flags = _torch_main_cpp_flags(staging)
        header = os.path.join(staging, "include", "torch", "extension.h")
        os.makedirs(os.path.dirname(header))
        from torch.utils.cpp_extension import include_paths
        os.symlink(os.path.join(include_paths()[0], "torch", "extension.h"), header)
        done = subprocess.run([cxx, "-x", "c++-header", *flags, header, "-o", header + ".gch"],
                              capture_output=True, text=True, timeout=timeout, cwd=staging)
        if done.returncode != 0:
            message = f"no precompiled header: {done.stderr[-2000:]}"
            os.remove(header)
    except (OSError, subprocess.SubprocessError, ValueError, ImportError) as e:
        message = f"no precompiled header: {type(e).__name__}: {e}"
    with open(os.path.join(staging, "build.json"), "w") as f:
        json.dump({"message": message, "seconds": time.perf_counter() - began}, f)
    try:
        os.rename(staging, entry)
    except OSError:  # made meanwhile by another farm: theirs stays
        shutil.rmtree(staging, ignore_errors=True)
    return torch_header_pch(cache, identity, timeout)


def _torch_main_cpp_flags(folder: str) -> tuple[str, list[str]]:
    """The compiler and flags torch's build.ninja gives a load_inline main.cpp with no extra
    flags, but the extension's name (each build's own, which the header does not read)."""
    from torch.utils import cpp_extension
    main = os.path.join(folder, "main.cpp")
    open(main, "w").close()
    ninja = os.path.join(folder, "build.ninja")
    cpp_extension._write_ninja_file_to_build_library(
        path=ninja, name="kjudge_pch", sources=[main], extra_cflags=[], extra_cuda_cflags=[],
        extra_sycl_cflags=[], extra_ldflags=[], extra_include_paths=[], with_cuda=False,
        with_sycl=False, is_standalone=False)
    lines = dict(line.split(" = ", 1) for line in open(ninja).read().splitlines()
                 if " = " in line and not line.startswith(" "))
    os.remove(ninja)
    os.remove(main)
    flags = [f for f in shlex.split(lines["cflags"]) if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    return lines["cxx"], flags + shlex.split(lines.get("post_cflags", ""))


class BuildFarm:
    """`submit(source)` starts a candidate's build (or finds it in the cache, or joins the same
    source's build under way) and returns a Future of its Build. With `init_inputs` the build
    worker also makes ModelNew on the CPU (a build in its __init__ is made then)."""

    def __init__(self, jobs: int, device: str, *, cache_root: Optional[str] = None,
                 timeout: float = 600.0, confine: bool = True,
                 require_confinement: bool = True, memory_bytes: int = 0,
                 arch_list: Optional[str] = None, pch: bool = True):
        self.jobs = max(1, jobs)
        self.timeout = timeout
        self.arch_list = cuda_arch_list(device) if arch_list is None else arch_list
        self.identity = toolchain_identity(self.arch_list)
        root = cache_root if cache_root is not None else default_cache_root()
        self.cache = None
        self.cache_refused = ""
        if root:
            try:
                self.cache = private_folder(os.path.join(root, "kernelbench-builds"))
            except OSError as e:
                self.cache_refused = str(e)
        self._worker_options = dict(confine=confine, require_confinement=require_confinement,
                                    memory_bytes=memory_bytes)
        self._pool = concurrent.futures.ThreadPoolExecutor(self.jobs, "kjudge-build")
        self._lock = threading.Lock()
        self._under_way: dict[str, concurrent.futures.Future] = {}
        self._scratch = tempfile.mkdtemp(prefix="kjudge-builds-")  # when there is no cache
        # torch's header precompiled beside the builds (the first ones build without it).
        self._pch = concurrent.futures.ThreadPoolExecutor(1, "kjudge-pch").submit(
            torch_header_pch, self.cache, self.identity) if self.cache and pch else None

    def key(self, source: str) -> str:
        return hashlib.sha256((self.identity + "\0" + source).encode()).hexdigest()

    def submit(self, source: str, init_inputs: Optional[list] = None,
               init_seed: int = 42) -> concurrent.futures.Future:
        key = self.key(source)
        with self._lock:
            if key not in self._under_way:
                self._under_way[key] = self._pool.submit(self._build, key, source, init_inputs,
                                                         init_seed)
            return self._under_way[key]

    def precompiled_header(self) -> Optional[str]:
        """torch_header_pch's folder once it is made, else None (a build then reads the text)."""
        if self._pch is None or not self._pch.done() or self._pch.exception() is not None:
            return None
        return self._pch.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._scratch, ignore_errors=True)

    def _entry(self, key: str) -> str:
        return os.path.join(self.cache or self._scratch, key)

    def _build(self, key: str, source: str, init_inputs: Optional[list], init_seed: int) -> Build:
        entry = self._entry(key)
        if os.path.isfile(os.path.join(entry, "build.json")):
            os.utime(entry)  # most recently used
            return Build(key, entry, 0.0, True, _said(entry))
        began = time.perf_counter()
        worker = Worker("cpu", build={"arch_list": self.arch_list, "jobs": 1,
                                      "pch": self.precompiled_header()},
                        **self._worker_options)
        try:
            worker.start(timeout=self.timeout)
            answer = worker.load(source, init_inputs, init_seed, self.timeout)
            message = str(answer.get("import", answer.get("status", "")))
        except WorkerGone as e:
            message = f"the build worker ended: {e}"
        seconds = time.perf_counter() - began
        worker.stop()  # nothing of the candidate's runs while its folder is read
        folder = _keep(os.path.join(worker.folder, "builds"), entry, message, seconds)
        worker.close()
        return Build(key, folder, seconds, False, message)


# ---- builds made on another machine (kjudge.ray's build tasks) -------------------------------

_ENTRY_NAME = re.compile(r"(record\.json|build\.json|[0-9a-f]{64}\.so)")


def toolchain_of(device: str) -> tuple[str, str]:
    """(arch list, toolchain identity) of builds a judge on `device` loads, asked of a child
    process: the asker's own process starts no CUDA context for it."""
    code = ("import json, sys; from kjudge.kernelbench.build import cuda_arch_list, "
            "toolchain_identity as t; a = cuda_arch_list(sys.argv[1]); "
            "print(json.dumps([a, t(a)]))")
    out = subprocess.run([sys.executable, "-c", code, device], capture_output=True, text=True,
                         timeout=300, check=True).stdout
    arch, identity = json.loads(out.splitlines()[-1])
    return arch, identity


def build_for(source: str, arch_list: str, identity: str, *,
              confine: bool = True) -> Optional[dict]:
    """The cache entry of `source` built here for a judge elsewhere whose toolchain is
    `identity` ({"key", "files": {name: bytes}}), or None where this machine's toolchain is
    another (its build would not be the judge's) or nothing was built."""
    if toolchain_identity(arch_list) != identity:
        return None
    with tempfile.TemporaryDirectory(prefix="kjudge-remote-build-") as root:
        farm = BuildFarm(1, "cpu", cache_root=root, confine=confine,
                         require_confinement=confine, arch_list=arch_list)
        try:
            build = farm.submit(source).result()
        finally:
            farm.close()
        if build.folder is None:
            return None
        files = {name: _read_plain(os.path.join(build.folder, name), _ENTRY_BYTES_CAP)
                 for name in os.listdir(build.folder) if _ENTRY_NAME.fullmatch(name)}
        return {"key": build.key, "files": files}


def store_build(cache_root: str, identity: str, source: str, built: dict) -> bool:
    """Another machine's build of `source` (build_for's answer) put in this user's cache under
    its key, whole or not at all, as the farm keeps its own: only the entry's own file names,
    within the caps, and only under the key this machine gives the source."""
    key = hashlib.sha256((identity + "\0" + source).encode()).hexdigest()
    files = built.get("files") if isinstance(built, dict) else None
    if built.get("key") != key or not isinstance(files, dict) or "build.json" not in files or \
            len(files) > _ENTRY_FILES_CAP + 2 or \
            sum(len(b) for b in files.values() if isinstance(b, bytes)) > _ENTRY_BYTES_CAP or \
            not all(isinstance(n, str) and _ENTRY_NAME.fullmatch(n) and isinstance(b, bytes)
                    for n, b in files.items()):
        return False
    cache = private_folder(os.path.join(private_folder(cache_root), "kernelbench-builds"))
    entry = os.path.join(cache, key)
    if os.path.isfile(os.path.join(entry, "build.json")):
        return True
    staging = tempfile.mkdtemp(prefix=".entry-", dir=cache)
    for name, data in files.items():
        with open(os.path.join(staging, name), "wb") as f:
            f.write(data)
    try:
        os.rename(staging, entry)
    except OSError:  # made meanwhile by this machine's own farm: it stays
        shutil.rmtree(staging, ignore_errors=True)
    return True


def _said(entry: str) -> str:
    try:
        with open(os.path.join(entry, "build.json")) as f:
            return str(json.load(f).get("message", ""))
    except (OSError, ValueError):
        return ""


def _read_plain(path: str, cap: int) -> bytes:
    """A regular file's bytes, not through a link (the candidate's process wrote its folder),
    at most `cap` of them (OSError past it)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > cap:
            raise OSError(f"{path}: not a plain file within {cap} bytes")
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(cap + 1)[:cap]
    finally:
        os.close(fd)


def _keep(builds: str, entry: str, message: str, seconds: float) -> Optional[str]:
    """The build worker's builds/ moved into the cache entry (whole or not at all: made beside
    it and renamed): only record.json and the KEY.so files it lists, within the caps."""
    try:
        if os.path.islink(builds):  # the candidate's process made it: a link leads elsewhere
            raise OSError(f"{builds} is a link")
        record = json.loads(_read_plain(os.path.join(builds, prebuilt.RECORD), 1 << 24))
    except (OSError, ValueError):
        record = {}
    if not isinstance(record, dict):
        record = {}
    kept = {}
    total = 0
    for key, built in list(record.items())[:_ENTRY_FILES_CAP]:
        if not isinstance(built, dict) or not isinstance(key, str) or len(key) != 64 or \
                any(c not in "0123456789abcdef" for c in key):
            continue
        so = None
        if "so" in built:
            if built["so"] != key + ".so" or not isinstance(built.get("name"), str):
                continue
            try:
                so = _read_plain(os.path.join(builds, key + ".so"), _ENTRY_BYTES_CAP - total)
            except OSError:
                continue
            total += len(so)
            built = {"so": built["so"], "name": built["name"]}
        elif isinstance(built.get("error"), str):
            built = {"error": built["error"][-20000:]}
        else:
            continue
        kept[key] = (built, so)
    staging = tempfile.mkdtemp(prefix=".entry-", dir=os.path.dirname(entry))
    for key, (built, so) in kept.items():
        if so is not None:
            with open(os.path.join(staging, key + ".so"), "wb") as f:
                f.write(so)
    kept = {key: built for key, (built, _) in kept.items()}
    with open(os.path.join(staging, prebuilt.RECORD), "w") as f:
        json.dump(kept, f)
    with open(os.path.join(staging, "build.json"), "w") as f:
        json.dump({"message": message, "seconds": seconds}, f)
    try:
        os.rename(staging, entry)
    except OSError:  # the same build, finished by another process first: theirs stays
        shutil.rmtree(staging, ignore_errors=True)
    return entry
