"""kjudge.compare and kjudge.assert_close on NumPy arrays: the C++ comparator's verdicts and
messages through the package, torch.testing.assert_close's contract (defaults per dtype, NaN,
shapes, dtypes), and bad input refused with a ValueError that names the argument."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import kjudge

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def bf16_truncated(x):
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


def test_the_reference_itself_passes_relative_against_its_golden():
    golden = np.random.default_rng(0).standard_normal((4, 1000))
    reference = golden.astype(np.float32)
    report = kjudge.compare(reference, reference, golden=golden)
    assert report.passed and bool(report)
    assert (report.outcome, report.reason, report.message) == ("PASS", "none", "")
    assert report.output["bound"]["policy"] == "relative(16)"
    assert report.output["count"] == 4000


def test_bf16_precision_fails_relative_and_names_the_worst_element():
    golden = np.random.default_rng(0).standard_normal((4, 1000))
    reference = golden.astype(np.float32)
    report = kjudge.compare(bf16_truncated(reference), reference, golden=golden)
    assert not report.passed
    assert report.reason == "mismatch"
    assert report.message.startswith("actual: 3978 of 4000 elements (99.5%) beyond the bound; "
                                     "worst at [0, 616]: -2.40625 vs -2.421833014859781")
    assert report.output["bound"]["source"].startswith("k=16 (f32 default)")
    assert repr(report).startswith("<kjudge.Report FAIL(mismatch): actual: 3978 of 4000")


def test_the_bundled_examples_judge_as_the_cli_judges_them():
    golden = np.load(EXAMPLES / "golden.npy")
    reference = np.load(EXAMPLES / "reference.npy")
    verdicts = {name: kjudge.compare(np.load(EXAMPLES / f"{name}.npy"), reference, golden=golden,
                                     slice=0).reason
                for name in ("reordered", "bf16", "zeros")}
    assert verdicts == {"reordered": "none", "bf16": "mismatch", "zeros": "mismatch"}
    # A hollow tolerance: zeros pass KernelBench's allclose(1e-2, 1e-2).
    hollow = kjudge.compare(np.load(EXAMPLES / "zeros.npy"), golden,
                            policy="allclose(1e-2, 1e-2)", expected_kind="golden")
    assert hollow.passed


def test_assert_close_takes_torchs_float32_defaults():
    expected = np.zeros(8, np.float32)
    kjudge.assert_close(expected + np.float32(9e-6), expected)  # atol 1e-5
    with pytest.raises(AssertionError) as e:
        kjudge.assert_close(expected + np.float32(2e-5), expected)
    assert str(e.value).startswith("Tensor-likes are not close (mismatch): actual: 8 of 8 "
                                   "elements (100.0%) beyond the bound")
    kjudge.assert_close(expected + np.float32(2e-5), expected, rtol=0.0, atol=1e-4)
    with pytest.raises(ValueError, match="give both or neither"):
        kjudge.assert_close(expected, expected, rtol=1e-3)


def test_assert_close_on_nan_as_torch_does():
    expected = np.array([1.0, np.nan, 3.0], np.float32)
    with pytest.raises(AssertionError, match="expected holds NaN at flat index 1; with "
                                             "equal_nan=False"):
        kjudge.assert_close(expected.copy(), expected)
    kjudge.assert_close(expected.copy(), expected, equal_nan=True)
    # equal_nan asks for NaN there: a number in its place fails.
    with pytest.raises(AssertionError, match=r"\(mismatch\)"):
        kjudge.assert_close(np.array([1, 2, 3], np.float32), expected, equal_nan=True)
    # NaN is never a wildcard: a NaN of the actual where a number is expected fails.
    with pytest.raises(AssertionError, match=r"\(nonfinite\)"):
        kjudge.assert_close(np.array([1, np.nan, 3], np.float32), np.ones(3, np.float32))


def test_assert_close_checks_shape_and_dtype_first():
    with pytest.raises(AssertionError, match="attribute 'shape' do not match: \\(3,\\) != \\(4,\\)"):
        kjudge.assert_close(np.zeros(3, np.float32), np.zeros(4, np.float32))
    with pytest.raises(AssertionError, match="attribute 'dtype' do not match: float64 != float32"):
        kjudge.assert_close(np.zeros(3), np.zeros(3, np.float32))
    kjudge.assert_close(np.zeros(3), np.zeros(3, np.float32), check_dtype=False)
    with pytest.raises(AssertionError, match="my message"):
        kjudge.assert_close(np.ones(3, np.float32), np.zeros(3, np.float32), msg="my message")


def test_bad_input_is_a_value_error_naming_what():
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="--policy"):
        kjudge.compare(x, x, policy="roughly")
    with pytest.raises(ValueError, match="^actual: a dtype kjudge does not judge"):
        kjudge.compare(np.zeros(3, np.complex64), np.zeros(3, np.complex64))
    with pytest.raises(ValueError, match="shape \\[4\\] differs from \\[3\\]"):
        kjudge.compare(np.zeros(4, np.float32), x)
    with pytest.raises(ValueError, match="unknown dtype \"f33\""):
        kjudge.compare(x, x, dtype="f33")


def test_integers_and_lists_are_judged_exactly():
    assert kjudge.compare(np.arange(5, dtype=np.int32), np.arange(5, dtype=np.int32),
                          policy="exact").passed
    report = kjudge.compare([1, 2, 4], [1, 2, 3], policy="exact")
    assert report.reason == "mismatch"


def test_python_dash_m_runs_the_installed_cli():
    out = subprocess.run([sys.executable, "-m", "kjudge", "--version"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"kjudge {kjudge.__version__}"


def test_percentiles_of_a_passing_output_come_when_asked():
    x = np.linspace(1, 2, 16, dtype=np.float32)
    assert kjudge.compare(x, x).output["stats"] is None
    stats = kjudge.compare(x, x, stats=True).output["stats"]
    assert stats["percentiles"] == "binned"
    assert stats["abs"] == {"max": 0.0, "p50": 0.0, "p99": 0.0, "p999": 0.0}
    # A failing output always carries them.
    assert kjudge.compare(x + 1, x).output["stats"]["abs"]["max"] == 1.0000001192092896  # f32 rounding of x + 1
