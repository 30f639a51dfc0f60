"""`kjudge audit --kernelbench` (kjudge.kernelbench.audit) on the CPU, on tiny problems made here:
a wide softmax whose outputs all zeros matches within KernelBench's atol = 1e-2 but not within
kjudge's relative policy, a large smooth row sum that a bf16 run passes at rtol = 1e-2, a
catastrophic cancellation whose float32 reference cannot compute its own answer (unjudgeable),
and problems that do not load (exit 2). The verdict strings and the totals lines are pinned:
the lead's C++ wiring and docs/kernelbench-audit.md quote them. Skipped without torch."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

from kjudge.kernelbench import audit  # noqa: E402

SOFTMAX_WIDE = """
    # Softmax over 16384 columns: every output is below about 1e-3, so zeros is within
    # atol = 1e-2 everywhere.
    import torch


    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)


    def get_inputs():
        return [torch.randn(4, 16384)]


    def get_init_inputs():
        return []
"""

RAND_SUM = """
    # Row sums of torch.rand over 1024 columns: outputs near 512, rtol = 1e-2 allows about 5,
    # and a bf16 run is off by well under 1.
    import torch


    class Model(torch.nn.Module):
        def forward(self, x):
            return torch.sum(x, dim=1)


    def get_inputs():
        return [torch.rand(64, 1024)]


    def get_init_inputs():
        return []
"""

CANCEL = """
    # (x + 1e8) - 1e8 in float32 is 0 or a multiple of 8: the reference loses all of x.
    import torch


    class Model(torch.nn.Module):
        def forward(self, x):
            return (x + 1e8) - 1e8


    def get_inputs():
        return [torch.randn(32, 32)]


    def get_init_inputs():
        return []
"""


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def run_audit(capsys, *argv):
    status = audit.main([str(a) for a in argv] + ["--device", "cpu"])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def two_problems(tmp_path_factory):
    """softmax_wide as a folder, rand_sum as a file, a helper file that is no problem beside."""
    root = tmp_path_factory.mktemp("problems")
    write(root / "softmax_wide" / "problem.py", SOFTMAX_WIDE)
    write(root / "rand_sum.py", RAND_SUM)
    write(root / "helpers.py", "class ModelNew:\n    pass\n")  # not a problem: no Model
    report = root / "report.json"
    status = audit.main([str(root), "--device", "cpu", "--json", str(report)])
    return root, status, json.loads(report.read_text())


def row(document, name):
    return next(p for p in document["problems"] if p["name"] == name)["policies"]


def test_the_problems_are_found_sorted_and_the_helper_is_not_one(two_problems):
    root, status, document = two_problems
    assert [p["name"] for p in document["problems"]] == ["rand_sum", "softmax_wide"]
    assert document["seeds"] == [42, 43, 44] and document["device"] == "cpu"
    assert status == 0  # both ok under kjudge's policy


def test_zeros_pass_kernelbench_1e2_but_not_kjudge(two_problems):
    policies = row(two_problems[2], "softmax_wide")
    assert policies["kjudge"]["verdict"] == "ok"
    assert policies["kernelbench-1e-2"]["verdict"] == \
        "hollow(zeros,mean); downgrade undetectable(bf16,f16)"
    assert policies["kernelbench-current"]["verdict"] == "downgrade undetectable(bf16,f16)"
    zeros = policies["kernelbench-1e-2"]["trivials"]["zeros"]
    assert zeros["passes_every_case"] and zeros["cases_judged"] == 3
    assert 0 < zeros["error_over_bound"] < 1  # the margin: how far inside the bound it stays
    rejected = policies["kjudge"]["trivials"]["zeros"]
    assert not rejected["passes_every_case"] and rejected["error_over_bound"] > 1e3
    # The signal is a fraction of KernelBench's bound, thousands of kjudge's.
    assert policies["kernelbench-1e-2"]["signal_over_bound"] < 0.01
    assert policies["kjudge"]["signal_over_bound"] > 1e3
    # The noise candidate (ten times each policy's bound) is rejected under every policy.
    for p in policies.values():
        assert not p["trivials"]["noise"]["passes_every_case"]


def test_bf16_passes_1e2_on_a_large_smooth_output(two_problems):
    policies = row(two_problems[2], "rand_sum")
    assert policies["kjudge"]["verdict"] == "ok"
    assert policies["kernelbench-1e-2"]["verdict"] == "downgrade undetectable(bf16,f16)"
    assert policies["kernelbench-current"]["verdict"] == "ok"
    bf16 = policies["kernelbench-1e-2"]["downgrades"]["bf16"]
    assert bf16["status"] == "undetectable" and bf16["cases_passed"] == 3
    caught = policies["kjudge"]["downgrades"]["bf16"]
    assert caught["status"] == "caught" and caught["error_over_bound"] > 16
    # TF32 is a CUDA mode: not applicable on the CPU, and not counted as let through.
    assert policies["kjudge"]["downgrades"]["tf32"]["status"] == "n/a"


def test_the_table_and_the_totals_lines(tmp_path, capsys):
    write(tmp_path / "softmax_wide" / "problem.py", SOFTMAX_WIDE)
    write(tmp_path / "rand_sum" / "problem.py", RAND_SUM)
    status, out, _ = run_audit(capsys, tmp_path, "--seeds", "42")
    assert status == 0
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["problem", "kjudge", "kernelbench-1e-2", "kernelbench-current"]
    assert lines[1].split("  ")[0] == "rand_sum"
    assert "  softmax_wide [kernelbench-1e-2] hollow: all zeros passes every case judged (1)" in out
    assert lines[-3:] == [
        "kjudge: 0 of 2 problems hollow, 0 unjudgeable; let through: TF32 n/a, bf16 0 of 2, "
        "f16 0 of 2",
        "kernelbench-1e-2: 1 of 2 problems hollow, 0 unjudgeable; let through: TF32 n/a, "
        "bf16 2 of 2, f16 2 of 2",
        "kernelbench-current: 0 of 2 problems hollow, 0 unjudgeable; let through: TF32 n/a, "
        "bf16 1 of 2, f16 1 of 2",
    ]


def test_a_reference_that_cannot_compute_its_answer_is_unjudgeable(tmp_path, capsys):
    write(tmp_path / "cancel.py", CANCEL)
    status, out, _ = run_audit(capsys, tmp_path, "--json", "-")
    assert status == 1  # not ok under kjudge's policy
    policies = json.loads(out)["problems"][0]["policies"]
    # Under relative the reference sets the bound, so it is held to float32's ceiling instead;
    # with the whole signal lost, trivial outputs then pass too.
    assert policies["kjudge"]["verdict"] == "unjudgeable; hollow(ones,mean,copy)"
    assert policies["kjudge"]["reference"][0]["max_over_scale"] == pytest.approx(1.0)
    fault = policies["kernelbench-1e-2"]["reference"][0]
    assert policies["kernelbench-1e-2"]["verdict"] == "unjudgeable"
    assert fault["fault"] and 0 < fault["mismatches"] <= 1024 and len(fault["worst"]["index"]) == 2
    assert fault["why"].startswith("the reference fails allclose(rtol=0.01, atol=0.01) against "
                                   f"the float64 golden on {fault['mismatches']} of 1024 elements")
    # bf16 and f16 runs give the same zeros as the float32 one: nothing to detect.
    assert policies["kjudge"]["downgrades"]["bf16"] == \
        {"status": "n/a", "why": "the Model in bf16 changes nothing"}


def test_a_problem_that_does_not_import_is_bad_input(tmp_path, capsys):
    write(tmp_path / "rand_sum" / "problem.py", RAND_SUM)
    broken = write(tmp_path / "broken" / "problem.py", "raise RuntimeError('on purpose')\n")
    status, out, err = run_audit(capsys, tmp_path)
    assert status == 2 and out == ""  # all load before any is audited
    assert err == f"kjudge audit: {broken}: does not import: RuntimeError: on purpose\n"


def test_no_problems_and_an_unknown_name_are_bad_input(tmp_path, capsys):
    status, _, err = run_audit(capsys, tmp_path)
    assert status == 2 and "no problems" in err
    write(tmp_path / "rand_sum" / "problem.py", RAND_SUM)
    status, _, err = run_audit(capsys, tmp_path, "--only", "softmax")
    assert status == 2 and err == f"kjudge audit: --only softmax: no such problem in {tmp_path}\n"


def test_the_module_runs_as_a_command(tmp_path):
    write(tmp_path / "broken.py", "class Model:\n    pass\n")  # no get_inputs
    done = subprocess.run([sys.executable, "-m", "kjudge.kernelbench.audit", str(tmp_path)],
                          capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert done.returncode == 2, done.stderr
    assert "broken.py: defines no get_inputs" in done.stderr
