"""kjudge for Python: its comparator on arrays from NumPy, PyTorch or anything with DLPack.

    report = kjudge.compare(out, ref, golden=gold)   # relative(k) against an f64 golden
    kjudge.assert_close(out, ref)                    # torch.testing.assert_close's contract

The verdict is the one `kjudge compare --json` writes (docs/cli.md): the same policies, the
same non-finite rules (NaN is never a wildcard), the same fields. `python -m kjudge` runs the CLI.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from . import _kjudge

__version__ = _kjudge.version
__all__ = ["Report", "compare", "assert_close", "__version__"]


class Report:
    """One output judged: `passed`, `outcome` ("PASS" or "FAIL"), `reason` ("none",
    "mismatch", "nonfinite", ...), `message` (one line naming the worst element and the bound),
    `output` (the finding: bound with its source, count, first failing elements, percentiles)
    and `verdict` (the whole JSON object). Truthy when it passed."""

    def __init__(self, verdict: dict[str, Any]):
        self.verdict = verdict
        self.outcome: str = verdict["outcome"]
        self.reason: str = verdict["reason"]
        self.message: str = verdict["message"]
        self.output: dict[str, Any] = verdict["cases"][0]["outputs"][0]

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
    Raises ValueError for arrays that disagree in shape, live on a device, or hold a dtype
    kjudge does not judge, and for a policy, dtype or rule it does not know."""
    truth = golden if golden is not None else expected
    if policy is None:
        policy = "relative" if golden is not None else "allclose"
    truth_name = "golden" if golden is not None else "expected"
    text = _kjudge.compare_json(_host_view(actual, "actual"), _host_view(truth, truth_name),
                                _host_view(expected, "expected"), policy, dtype or "",
                                expected_kind or "", -1 if slice is None else slice, nan,
                                stats, ["actual", truth_name, "expected"])
    return Report(json.loads(text))


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
    """The array as a DLPack-capable host object the extension accepts: NumPy and PyTorch CPU
    arrays as they are, lists and scalars through NumPy. (Device arrays are refused there.)"""
    if hasattr(array, "__dlpack__") or hasattr(array, "__array_interface__"):
        return array
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy is how plain lists come in
        raise TypeError(f"{name}: not an array (pass a NumPy or PyTorch array)") from e
    return numpy.asarray(array)


def _first_nan(array):
    """The flat index of the first NaN of a float array (NumPy or PyTorch), or None."""
    if hasattr(array, "isnan") and hasattr(array, "flatten"):  # torch, bfloat16 included
        flat = array.flatten().isnan().nonzero()
        return int(flat[0]) if len(flat) else None
    import numpy
    values = numpy.asarray(array)
    if values.dtype.kind != "f":
        return None
    flat = numpy.flatnonzero(numpy.isnan(values))
    return int(flat[0]) if flat.size else None
