"""The extension loads wherever torch does: in either import order, in a fresh interpreter, and
needing no shared library but the C and C++ runtimes (fmt, toml++, libcrypto and libseccomp are
built in; NVRTC and the driver are opened at run time)."""
import shutil
import subprocess
import sys

import pytest

from kjudge import _kjudge, _sandbox

# The C and C++ runtimes and the dynamic loader: on every Linux a wheel lands on.
RUNTIMES = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2",
            "libdl.so.2", "libpthread.so.0", "librt.so.1"}


@pytest.mark.parametrize("order", [("kjudge", "torch"), ("torch", "kjudge")])
def test_kjudge_and_torch_import_in_either_order(order):
    pytest.importorskip("torch")
    code = "; ".join(f"import {m}" for m in order) + \
        "; import kjudge.kernelbench.worker; print(kjudge.compare([1.0], [1.0]).outcome)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert (out.returncode, out.stdout.strip()) == (0, "PASS"), out.stderr[-3000:]


@pytest.mark.parametrize("module", [_kjudge, _sandbox], ids=["_kjudge", "_sandbox"])
def test_the_extension_needs_only_the_c_and_cpp_runtimes(module):
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf (binutils) on this machine")
    dynamic = subprocess.run([readelf, "-dW", module.__file__], capture_output=True, text=True,
                             check=True).stdout
    needed = {line.split("[")[1].split("]")[0] for line in dynamic.splitlines()
              if "(NEEDED)" in line}
    assert needed and needed <= RUNTIMES, sorted(needed - RUNTIMES)


@pytest.mark.parametrize("module", [_kjudge, _sandbox], ids=["_kjudge", "_sandbox"])
def test_the_init_function_is_all_the_extension_exports(module):
    """Nothing else: neither kjudge's nor what is linked in (fmt, OpenSSL, NVRTC's forwarders, a
    static libstdc++) can interpose on a library torch or Python loads. On the GPU machine, whose
    compiler links libstdc++ statically, the extension exported std::locale's internals and
    `import kjudge; import torch` aborted in torch's stringstream (free(): invalid pointer)."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf (binutils) on this machine")
    table = subprocess.run([readelf, "--dyn-syms", "-W", module.__file__], capture_output=True,
                           text=True, check=True).stdout
    exported = sorted(f[7] for f in (line.split() for line in table.splitlines())
                      if len(f) >= 8 and f[6] != "UND" and f[4] in ("GLOBAL", "WEAK", "UNIQUE")
                      and f[3] not in ("SECTION", "FILE"))
    assert exported == [f"PyInit_{module.__name__.rsplit('.', 1)[1]}"]
