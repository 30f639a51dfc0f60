"""kjudge for Python: its comparator on arrays from NumPy, PyTorch or anything with DLPack.

    report = kjudge.compare(out, ref, golden=gold)   # relative(k) against an f64 golden
    kjudge.assert_close(out, ref)                    # torch.testing.assert_close's contract

The verdict is the one `kjudge compare --json` writes (docs/cli.md): the same policies, the
same non-finite rules (NaN is never a wildcard), the same fields. `python -m kjudge` runs the CLI.
"""
from __future__ import annotations

from typing import Any, Optional

from . import _kjudge
from .judge import BenchResult, CheckResult, Judge, JudgeError, JudgeRequestError, Reward, reward

__version__ = _kjudge.version
__all__ = ["Report", "compare", "assert_close", "__version__", "Judge", "CheckResult",
           "BenchResult", "JudgeError", "JudgeRequestError", "Reward", "reward"]


class Report:
    """One output judged: `passed`, `outcome` ("PASS" or "FAIL"), `reason` ("none",
    "mismatch", "nonfinite", ...), `message` (one line naming the worst element and the bound),
    `output` (the finding: bound with its source, count, first failing elements, percentiles)
    and `verdict` (the whole JSON object of `kjudge compare --json`). Truthy when it passed.

    `output` and `verdict` are made from the C++ verdict when first read, then kept: a call
    that only asks whether it passed pays for neither."""

    __slots__ = ("outcome", "reason", "message", "_judgement", "_output", "_verdict")

    def __init__(self, judgement: "_kjudge.Judgement"):
        self._judgement = judgement
        self.outcome: str = judgement.outcome
        self.reason: str = judgement.reason
        self.message: str = judgement.message
        self._output: Optional[dict[str, Any]] = None
        self._verdict: Optional[dict[str, Any]] = None

    @property
    def output(self) -> dict[str, Any]:
        if self._output is None:
            self._output = self._judgement.output()
        return self._output

    @property
    def verdict(self) -> dict[str, Any]:
        if self._verdict is None:
            self._verdict = self._judgement.verdict()
        return self._verdict

    @property
    def passed(self) -> bool:
        return self.outcome == "PASS"

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        detail = f": {self.message}" if self.message else ""
        return f"<kjudge.Report {self.outcome}({self.reason}){detail}>"


def compare(actual, expected, *, golden=None, policy: Optional[str] = None,
            dtype: Optional[str] = None, expected_kind: Optional[str] = None,
            slice: Optional[int] = None, nan: str = "exempt", stats: bool = False) -> Report:
    """Judge `actual` against `expected`, the same-precision reference, and `golden`, a more
    precise run of it (float64) where there is one.

    policy: "relative" (the default with a golden: k times the reference's own error),
    "allclose" (the default without one: torch's per-dtype rtol and atol), "allclose(rtol,
    atol)", "ulp(n)", "exact", ... as in problem.toml. dtype: the output dtype ("f32", "bf16",
    ...; default actual's). expected_kind: "golden" or "reference", what the policy compares
    against (default the policy's). slice: an axis judged slice by slice. nan: what a NaN in
    the golden demands ("exempt", "propagate": NaN there too, "ignore"). stats: the error
    percentiles of a passing output too (a failing one always has them).
    Arrays on a CUDA device (PyTorch, CuPy: anything with DLPack) are judged there by the GPU
    comparator, in place, with the host comparator's verdict for the same values; all three
    must then be on that one device.
    Raises ValueError for arrays that disagree in shape or device, or hold a dtype kjudge does
    not judge, and for a policy, dtype or rule it does not know."""
    slice_axis = -1 if slice is None else slice
    if golden is None:
        return Report(_kjudge.compare(actual, expected, expected,
                                      "allclose" if policy is None else policy, dtype or "",
                                      expected_kind or "", slice_axis, nan, stats, "expected"))
    return Report(_kjudge.compare(actual, golden, expected,
                                  "relative" if policy is None else policy, dtype or "",
                                  expected_kind or "", slice_axis, nan, stats, "golden"))


def assert_close(actual, expected, *, rtol: Optional[float] = None, atol: Optional[float] = None,
                 equal_nan: bool = False, check_dtype: bool = True, msg: Optional[str] = None,
                 policy: Optional[str] = None, golden=None) -> None:
    """torch.testing.assert_close's contract, judged by kjudge: rtol and atol default to torch's
    for the dtype (both or neither), NaN in `expected` fails unless equal_nan (then actual must
    be NaN there too), shapes and (with check_dtype) dtypes must match. `policy` replaces
    allclose by another kjudge policy ("relative" with `golden`). Raises AssertionError with
    kjudge's message (the worst element, the bound and where it comes from), or `msg`."""
    if (rtol is None) != (atol is None):
        raise ValueError("rtol and atol: give both or neither (as torch.testing.assert_close)")
    a, e = _host_view(actual, "actual"), _host_view(expected, "expected")
    if tuple(a.shape) != tuple(e.shape):
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: "
                                    f"{tuple(a.shape)} != {tuple(e.shape)}.")
    if check_dtype and str(a.dtype) != str(e.dtype):
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: "
                                    f"{a.dtype} != {e.dtype}.")
    if policy is None:
        policy = "allclose" if rtol is None else f"allclose({rtol!r}, {atol!r})"
    nan_at = None if equal_nan else _first_nan(e)
    if nan_at is not None:
        raise AssertionError(msg or f"expected holds NaN at flat index {nan_at}; with "
                                    "equal_nan=False (torch's default) no value matches it: pass "
                                    "equal_nan=True to require NaN there")
    report = compare(actual, expected, golden=golden, policy=policy,
                     expected_kind=None if golden is not None else "golden",
                     nan="propagate" if equal_nan else "exempt")
    if not report.passed:
        raise AssertionError(msg or f"Tensor-likes are not close ({report.reason}): "
                                    f"{report.message}\n{report.output['bound']['source']}")


def _host_view(array, name: str):
    """The array as an object with shape and dtype: NumPy, PyTorch and CuPy arrays (host or
    device) as they are, lists and scalars through NumPy."""
    if hasattr(array, "__dlpack__") or hasattr(array, "__array_interface__"):
        return array
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy is how plain lists come in
        raise TypeError(f"{name}: not an array (pass a NumPy or PyTorch array)") from e
    return numpy.asarray(array)


def _first_nan(array):
    """The flat index of the first NaN of a float array (NumPy, PyTorch, CuPy), or None; a
    device array is searched on its device."""
    if hasattr(array, "isnan") and hasattr(array, "flatten"):  # torch, bfloat16 included
        flat = array.flatten().isnan().nonzero()
        return int(flat[0]) if len(flat) else None
    if hasattr(array, "__array_namespace__") and not hasattr(array, "__array_interface__"):
        xp = array.__array_namespace__()  # CuPy and other array-API device arrays
        if not xp.isdtype(array.dtype, "real floating"):
            return None
        flat = xp.nonzero(xp.isnan(xp.reshape(array, (-1,))))[0]
        return int(flat[0]) if flat.shape[0] else None
    import numpy
    values = numpy.asarray(array)
    if values.dtype.kind != "f":
        return None
    flat = numpy.flatnonzero(numpy.isnan(values))
    return int(flat[0]) if flat.size else None
