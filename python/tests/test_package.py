"""The extension loads wherever torch does: in either import order, in a fresh interpreter, and
needing no shared library but the C and C++ runtimes (fmt, toml++, libcrypto and libseccomp are
built in; NVRTC and the driver are opened at run time)."""
import shutil
import subprocess
import sys

import pytest

import kjudge
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


def test_nothing_of_the_archives_is_exported():
    """Only the init function: a library torch or Python loads cannot interpose on kjudge's
    symbols, nor kjudge's on theirs (nvrtc*, fmt, OpenSSL)."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf (binutils) on this machine")
    table = subprocess.run([readelf, "--dyn-syms", "-W", _kjudge.__file__], capture_output=True,
                           text=True, check=True).stdout
    exported = sorted(line.split()[-1] for line in table.splitlines()
                      if len(line.split()) >= 8 and line.split()[6] != "UND"
                      and line.split()[4] in ("GLOBAL", "WEAK") and line.split()[3] != "SECTION")
    assert [s for s in exported if s.startswith(("nvrtc", "_ZN3fmt", "EVP_", "SHA256",
                                                 "seccomp"))] == []
    assert "PyInit__kjudge" in exported
    assert kjudge.__version__
