"""Under KJUDGE_REQUIRE_GPU=1 (tools/gpu-check on the GPU machine) a skipped test is a failed
one, as in the C++ GPU tests: a CUDA test that cannot run there must say so, not pass quietly.
The skips that only make sense where there is no GPU (a test of the no-driver path) are exempt
by their reason, which names it."""
import os

import pytest

_GPU_REQUIRED = os.environ.get("KJUDGE_REQUIRE_GPU") == "1"
# Skips that are right on a GPU machine: a test of the path of a machine without one, and Ray's
# tests where Ray is not installed (none of them needs a GPU).
_EXEMPT = ("a CUDA driver is usable here", "could not import 'ray'")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if not _GPU_REQUIRED or not report.skipped:
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if any(exempt in reason for exempt in _EXEMPT):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped under KJUDGE_REQUIRE_GPU=1 (a GPU test must run here): {reason}"
