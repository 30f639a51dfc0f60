"""kjudge.compare and kjudge.assert_close on NumPy arrays: the C++ comparator's verdicts and
messages through the package, torch.testing.assert_close's contract (defaults per dtype, NaN,
shapes, dtypes), and bad input refused with a ValueError that names the argument. On a machine
where torch sees a CUDA device, the same data judged on the device by the GPU comparator gives
the host's report field for field (those tests skip elsewhere)."""
import json
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


def test_the_verdict_is_the_json_object_kjudge_compare_writes():
    golden = np.load(EXAMPLES / "golden.npy")
    reference = np.load(EXAMPLES / "reference.npy")
    report = kjudge.compare(np.load(EXAMPLES / "bf16.npy"), reference, golden=golden, stats=True)
    assert report._verdict is None  # made when first read, then kept
    verdict = report.verdict
    assert report.verdict is verdict
    assert (verdict["outcome"], verdict["reason"], verdict["message"]) == (
        report.outcome, report.reason, report.message)
    assert verdict["cases"][0]["outputs"][0] == report.output
    assert (verdict["manifest"]["problem"], verdict["manifest"]["backend"]) == ("compare",
                                                                                 "tensors")
    assert verdict["cases"][0]["id"] == "actual vs golden"
    assert json.loads(json.dumps(verdict)) == verdict  # plain JSON values, as json.loads makes
    # The finding is the CLI's on the same files, but for the output's name (the file's stem).
    cli = subprocess.run([sys.executable, "-m", "kjudge", "compare", str(EXAMPLES / "bf16.npy"),
                          str(EXAMPLES / "golden.npy"), "--reference",
                          str(EXAMPLES / "reference.npy"), "--policy", "relative", "--json", "-"],
                         capture_output=True, text=True, timeout=60)
    cli_output = json.loads(cli.stdout)["cases"][0]["outputs"][0]
    assert cli_output.pop("output") == "bf16"
    assert {k: v for k, v in report.output.items() if k != "output"} == cli_output


class FakeDeviceArray:
    """An array that says it lives on a device and must not be read: the placement checks come
    before any CUDA call."""

    def __init__(self, device_type=2, device_id=0):
        self.device = (device_type, device_id)

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None, **kwargs):
        raise AssertionError("a misplaced array was read")


def test_host_and_device_arrays_together_are_a_value_error_naming_which():
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match=r"^expected: in host memory while another array is in "
                                         r"cuda:0: pass all three on one device"):
        kjudge.compare(FakeDeviceArray(), x)
    with pytest.raises(ValueError, match="^actual: in host memory while another array is in "
                                         "cuda:0"):
        kjudge.compare(x, FakeDeviceArray())
    with pytest.raises(ValueError, match="^golden: in cuda:1 while another array is in cuda:0"):
        kjudge.compare(FakeDeviceArray(), FakeDeviceArray(), golden=FakeDeviceArray(2, 1))
    with pytest.raises(ValueError, match="^actual: in DLPack device type 10; kjudge judges host "
                                         "memory and CUDA devices"):
        kjudge.compare(FakeDeviceArray(10), FakeDeviceArray(10))


def test_device_arrays_without_a_driver_say_why():
    usable, why = kjudge._kjudge.cuda_available()
    if usable:
        pytest.skip("a CUDA driver is usable here")
    with pytest.raises(RuntimeError, match=why.split(":")[0]):
        kjudge.compare(FakeDeviceArray(), FakeDeviceArray())


# ---- on a CUDA device (torch with CUDA; skipped elsewhere) -------------------------------------

@pytest.fixture
def torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device")
    return torch


def host_and_device_reports(torch, actual, expected, golden=None, **kwargs):
    """The reports of the same data judged on the host (CPU tensors) and on the device."""
    host = kjudge.compare(actual, expected, golden=golden, **kwargs)
    on_device = kjudge.compare(actual.cuda(), expected.cuda(),
                               golden=None if golden is None else golden.cuda(), **kwargs)
    return host, on_device


def assert_same_report(host, on_device):
    assert (on_device.outcome, on_device.reason, on_device.message) == (
        host.outcome, host.reason, host.message)
    assert on_device.output == host.output


def test_a_device_comparison_names_the_host_comparisons_worst_element(torch_cuda):
    torch = torch_cuda
    golden = np.random.default_rng(0).standard_normal((4, 1000))
    reference = golden.astype(np.float32)
    report = kjudge.compare(torch.from_numpy(bf16_truncated(reference)).cuda(),
                            torch.from_numpy(reference).cuda(),
                            golden=torch.from_numpy(golden).cuda())
    assert report.reason == "mismatch"
    assert report.message.startswith("actual: 3978 of 4000 elements (99.5%) beyond the bound; "
                                     "worst at [0, 616]: -2.40625 vs -2.421833014859781")
    assert report.output["bound"]["source"].startswith("k=16 (f32 default)")
    assert report.verdict["manifest"]["gpu"] == torch.cuda.get_device_name()


DEVICE_DTYPES = ["float32", "float16", "bfloat16"]
DEVICE_POLICIES = [None, "allclose", "allclose(1e-3, 1e-5)", "ulp(4)", "exact"]


@pytest.mark.parametrize("dtype", DEVICE_DTYPES)
@pytest.mark.parametrize("policy", DEVICE_POLICIES)
@pytest.mark.parametrize("with_golden", [True, False])
def test_device_and_host_reports_agree(torch_cuda, dtype, policy, with_golden):
    torch = torch_cuda
    t = getattr(torch, dtype)
    golden = torch.from_numpy(np.random.default_rng(1).standard_normal((64, 300)))
    reference = golden.to(t)
    # Off by an ulp or two here and there, and far off in one element: some policies pass it,
    # others fail it, each with its worst element named.
    noise = torch.from_numpy(np.random.default_rng(2).integers(-2, 3, (64, 300)) * 2.0 ** -10)
    actual = (golden * (1 + noise * (torch.rand(64, 300, generator=torch.Generator().manual_seed(3))
                                     < 0.1))).to(t)
    actual[17, 42] = 3.5
    host, on_device = host_and_device_reports(torch, actual, reference,
                                              golden if with_golden else None, policy=policy,
                                              stats=True)
    assert host.reason == "mismatch"
    assert_same_report(host, on_device)
    passing_host, passing_device = host_and_device_reports(
        torch, reference, reference, golden if with_golden else None, policy=policy)
    assert passing_host.passed
    assert_same_report(passing_host, passing_device)


@pytest.mark.parametrize("dtype", DEVICE_DTYPES)
def test_device_and_host_agree_on_nan(torch_cuda, dtype):
    torch = torch_cuda
    t = getattr(torch, dtype)
    golden = torch.linspace(-3, 3, 1000, dtype=torch.float64)
    golden[10] = float("nan")
    reference = golden.to(t)
    actual = reference.clone()
    actual[500] = float("nan")  # NaN where a number is expected: never a wildcard
    for nan in ("exempt", "propagate", "ignore"):
        host, on_device = host_and_device_reports(torch, actual, reference, golden, nan=nan,
                                                  stats=True)
        # `ignore` stands for NaN planted in the inputs: a NaN anywhere is excused then.
        assert host.reason == ("none" if nan == "ignore" else "nonfinite")
        assert_same_report(host, on_device)
    host, on_device = host_and_device_reports(torch, reference, reference, golden,
                                              nan="propagate", stats=True)
    assert host.passed
    assert_same_report(host, on_device)


def test_device_and_host_agree_on_a_million_elements(torch_cuda):
    torch = torch_cuda
    golden = torch.from_numpy(np.random.default_rng(4).standard_normal(1 << 20))
    reference = golden.float()
    for actual in (reference, reference.bfloat16().float(), golden.half().float()):
        for policy in (None, "allclose", "ulp(2)"):
            host, on_device = host_and_device_reports(torch, actual, reference, golden,
                                                      policy=policy, stats=True)
            assert_same_report(host, on_device)
    host, on_device = host_and_device_reports(torch, reference.bfloat16().float(), reference,
                                              golden)
    assert host.reason == "mismatch" and host.output["count"] == 1 << 20
    assert_same_report(host, on_device)


def test_device_conversions_agree_with_the_host(torch_cuda):
    torch = torch_cuda
    golden = torch.from_numpy(np.random.default_rng(5).standard_normal((8, 128)))
    reference = golden.float()
    # f32 arrays judged as bf16: rounded on the device as the host rounds them; an f32
    # expected without a golden widened to f64 on the device.
    for actual in (reference, golden.bfloat16().float()):
        host, on_device = host_and_device_reports(torch, actual, reference, golden, dtype="bf16",
                                                  policy="allclose", stats=True)
        assert_same_report(host, on_device)
        host, on_device = host_and_device_reports(torch, actual, reference, dtype="bf16",
                                                  policy="ulp(1)", stats=True)
        assert_same_report(host, on_device)


def test_device_integers_agree_with_the_host(torch_cuda):
    torch = torch_cuda
    ints = torch.arange(1000, dtype=torch.int32)
    off = ints.clone()
    off[7] = 8
    host, on_device = host_and_device_reports(torch, off, ints, policy="exact")
    assert host.reason == "mismatch"
    assert_same_report(host, on_device)


def test_device_arrays_on_a_side_stream_are_read_after_their_writes(torch_cuda):
    torch = torch_cuda
    x = torch.linspace(1, 2, 1 << 20, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        y = torch.full_like(x, float("nan"))
        torch.cuda._sleep(100_000_000)  # the copy below lands long after this call is queued
        y.copy_(x)
        # __dlpack__(stream=...) makes the judge's stream wait for the side stream's work.
        report = kjudge.compare(y, x)
    assert report.passed, report.message


def test_device_arrays_refused_as_the_host_refuses(torch_cuda):
    torch = torch_cuda
    x = torch.zeros(4, 4, device="cuda")
    with pytest.raises(ValueError, match="^expected: in host memory while another array is in "
                                         "cuda:0"):
        kjudge.compare(x, x.cpu())
    with pytest.raises(ValueError, match="^actual: a device array that is not C-contiguous"):
        kjudge.compare(x.t()[:, :2], x[:, :2].contiguous())
    with pytest.raises(ValueError, match="shape \\[4, 3\\] differs from \\[4, 4\\]"):
        kjudge.compare(x[:, :3].contiguous(), x)
    with pytest.raises(ValueError, match="--policy"):
        kjudge.compare(x, x, policy="roughly")


def test_assert_close_on_device_tensors(torch_cuda):
    torch = torch_cuda
    expected = torch.zeros(8, device="cuda")
    kjudge.assert_close(expected + 9e-6, expected)
    with pytest.raises(AssertionError, match="^Tensor-likes are not close \\(mismatch\\): "
                                             "actual: 8 of 8 elements"):
        kjudge.assert_close(expected + 2e-5, expected)
    with_nan = torch.tensor([1.0, float("nan"), 3.0], device="cuda")
    with pytest.raises(AssertionError, match="expected holds NaN at flat index 1"):
        kjudge.assert_close(with_nan.clone(), with_nan)
    kjudge.assert_close(with_nan.clone(), with_nan, equal_nan=True)
