"""Mutation analysis on KernelBench-format programs (kjudge.kernelbench.mutate): the kernels a
solution holds (load_inline sources, @triton.jit functions) found and mutated with the native
catalogue, each mutant a program that differs from its solution by that one edit; the campaign's
steps with an observer standing in for the GPU (CI has none), its results read by the library's
reports; and on the GPU the campaign itself, on the project's own examples."""
import ast
import dataclasses
import difflib
import json
import os
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from kjudge import _kjudge  # noqa: E402
from kjudge.kernelbench import mutate  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXAMPLES = os.path.join(ROOT, "examples", "kernelbench")
RELU = os.path.join(EXAMPLES, "relu")
GPU = _kjudge.cuda_available()[0]


def read(path):
    with open(path) as f:
        return f.read()


def one_edit(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(),
                                                  lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_a_triton_kernel_is_mutated_in_its_body_and_nowhere_else():
    source = read(os.path.join(RELU, "candidates", "triton_correct.py"))
    mutants = mutate.solution_mutants("relu/triton.py", source, [])
    assert len(mutants) == 16
    assert {m.record["category"] for m in mutants} == {"arithmetic", "boundary", "precision"}
    mask = next(m for m in mutants if m.record["op"] == "BD-ROR" and m.record["line"] == 13)
    assert one_edit(source, mask.source) == ["-    mask = offs < n", "+    mask = offs <= n"]
    r = mask.record
    assert source[r["offset"]:r["offset"] + r["length"]] == "<" and r["column"] == 17
    assert r["file"] == "relu/triton.py" and r["function"] == "kb_relu_triton_kernel"
    assert r["description"].endswith("(line 13)")
    # Every mutant is the solution with one line changed, inside the kernel (lines 12 to 15).
    for m in mutants:
        changed = one_edit(source, m.source)
        assert len(changed) == 2, changed
        assert 12 <= m.record["line"] <= 15


def test_comments_and_docstrings_of_a_triton_kernel_are_not_mutated():
    source = (
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(x_ptr, n):\n"
        '    """offs + 1 < n, as a docstring"""\n'
        "    offs = tl.arange(0, 8)  # offs + 1 < n, as a comment\n"
        "    tl.store(x_ptr + offs, 0.0, mask=offs < n)\n")
    mutants = mutate.solution_mutants("k.py", source, [])
    assert mutants
    for m in mutants:
        changed = one_edit(source, m.source)
        assert "as a" not in changed[1] or changed[1].count("offs + 1 < n") == 1, changed
        assert "docstring" not in changed[0]
    # The comment's text is the same in every mutant.
    assert all("# offs + 1 < n, as a comment" in m.source for m in mutants)


def test_a_cuda_source_is_mutated_inside_its_kernel_at_its_place_in_the_file():
    path = os.path.join(RELU, "candidates", "cuda_correct.py")
    source = read(path)
    mutants = mutate.solution_mutants("relu/cuda.py", source, [])
    assert len(mutants) == 23
    for m in mutants:
        r = m.record
        assert source[r["offset"]:r["offset"] + r["length"]] == r["original"]
        assert r["function"] == "kb_relu_kernel"
        ast.parse(m.source)  # still Python
    boundary = [m for m in mutants if m.record["category"] == "boundary"]
    assert one_edit(source, boundary[0].source)[0].strip().startswith("-    for (int64_t i")


def test_a_string_with_escapes_is_written_back_as_the_mutated_text():
    source = ('cuda_source = "__global__ void k(float* y, int n) {\\n'
              '  int i = threadIdx.x;\\n  if (i < n) y[i] = 1.0f;\\n}\\n"\n')
    value = ast.literal_eval(source.split("=", 1)[1].strip())
    expected = [_kjudge.apply_mutant(value, m)
                for m in _kjudge.mutants("k.py:cuda_source@1", value, ["BD-ROR"])]
    mutants = mutate.solution_mutants("k.py", source, ["BD-ROR"])
    assert len(mutants) == len(expected) == 1
    assert [ast.literal_eval(m.source.split("=", 1)[1].strip()) for m in mutants] == expected
    assert [m.record["line"] for m in mutants] == [3]  # the literal on line 1, `<` on its 3rd


def test_the_problems_of_a_suite_and_their_solutions_are_found():
    found = {p.name: [os.path.basename(s) for s in p.solutions]
             for p in mutate.find_problems(EXAMPLES)}
    assert sorted(found) == ["matmul", "relu", "row_sum", "softmax_small"]
    assert "torch_reference.py" not in found["relu"]  # no kernel to mutate
    assert found["softmax_small"] == ["crash.py", "cuda_correct.py", "triton_correct.py",
                                      "zeros.py"]
    triton = {p.name: [os.path.basename(s) for s in p.solutions]
              for p in mutate.find_problems(EXAMPLES, ("triton",))}
    assert list(triton) == ["relu", "row_sum", "softmax_small", "matmul"]  # the manifest's order
    assert triton["row_sum"] == ["triton_correct.py"]
    with pytest.raises(mutate.BadInput, match="no such folder"):
        mutate.find_problems(os.path.join(EXAMPLES, "nowhere"))


def test_the_budget_takes_every_category_in_turn():
    source = read(os.path.join(EXAMPLES, "softmax_small", "candidates", "cuda_correct.py"))
    mutants = mutate.solution_mutants("s.py", source, [])
    chosen = mutate.choose_within_budget(mutants, 12)
    categories = [m.record["category"] for m in mutants if m.record["id"] in chosen]
    assert len(chosen) == 12
    assert sorted(set(categories)) == sorted({m.record["category"] for m in mutants})
    assert mutate.choose_within_budget(mutants, 0) == {m.record["id"] for m in mutants}


def small_suite(tmp_path):
    """relu's Triton solution beside a small problem (scaled_sum's: the observer below never
    runs the solution, and its pool is cheap to make on two cores)."""
    folder = tmp_path / "relu"
    (folder / "solutions").mkdir(parents=True)
    shutil.copy(os.path.join(ROOT, "python", "tests", "kernelbench", "scaled_sum", "problem.py"),
                folder / "problem.py")
    shutil.copy(os.path.join(RELU, "candidates", "triton_correct.py"), folder / "solutions")
    return folder


def fake_observer(errors: dict):
    """An observer that reads the mutated line: a program whose kernel has `<=` where the
    solution has `<` errs by errors["boundary"] on every case, one with `*` turned `/` crashes
    on seed 45; all others are exact. Tolerance checkers see the same error."""
    def observe(evaluator, problem, path, build, checkers):
        source = read(path)
        ob = mutate.Observation(verdict={"outcome": "PASS"})
        error = errors["boundary"] if "offs <= n" in source else 0.0
        for cid in [c.id for c in evaluator._problem(problem.path).cases]:
            if "program_id(0) / BLOCK" in source and cid == "seed:45":
                ob.fault, ob.fault_case = "runtime_error: an illegal memory access", cid
                break
            ob.cases[cid] = {"error": [error], "bad": [0], "tolerance": {
                c["name"]: error < 1e-3 for c in checkers if c["judge"] == "tolerance"}}
            ob.policy[cid] = error == 0
        return ob
    return observe


def test_a_campaign_goes_through_the_librarys_reports(tmp_path):
    folder = small_suite(tmp_path)
    options = mutate.Options(str(folder), checkers=["kjudge", "kernelbench-v0"],
                             state=str(tmp_path / "state"), device="cpu", confine=False)
    campaign = mutate.run_campaign(options, fake_observer({"boundary": 0.5}))
    statuses = {}
    for m in campaign["mutants"]:
        statuses.setdefault(m["status"], []).append(m["rewrite"])
    assert campaign["controls"] == [{"problem": "relu", "name": "solutions/triton_correct.py",
                                     "broken": "", "accepted": {"kjudge": True,
                                                                "kernelbench-v0": True}}]
    assert len(campaign["pool"]) == 7  # seeds 42 to 46, the first scaled by 64 and 1/64
    assert [p["default_case"] for p in campaign["pool"]].count(True) == 5
    assert sorted(statuses["killed"]) == ["* -> /", "< -> <="]
    assert statuses["compile_error"] == ["double literal -> float literal"] * 2  # 0.0f: no Python
    assert len(statuses["not_killable"]) == 12
    # The crash on seed 45 ended the pool's run before kjudge's scaled cases: its own draw
    # (seeds 42 to 44, the scalings) was run for it, and passed; kernelbench-v0 draws seed 45.
    crash = next(m for m in campaign["mutants"] if m["rewrite"] == "* -> /")
    assert crash["accepted"] == {"kjudge": True, "kernelbench-v0": False}
    assert crash["witness"] == 3 and crash["killed_on"] == [3]
    assert crash["replay"].endswith("--seeds 45 --scalings ''")
    boundary = next(m for m in campaign["mutants"] if m["status"] == "killed" and
                    m["rewrite"] == "< -> <=")
    assert boundary["accepted"] == {"kjudge": False, "kernelbench-v0": False}
    assert boundary["killed_on"] == list(range(7))
    reports = _kjudge.mutation_reports(json.dumps(campaign), "test")
    assert "kernelbench-v0" in reports["console"] and "boundary" in reports["console"]
    assert json.loads(reports["json"])["schemaVersion"] == "2"
    assert len(reports["jsonl"].splitlines()) == len(campaign["mutants"])
    # Two judges at once: the same campaign, in the same order.
    two = mutate.run_campaign(dataclasses.replace(options, judges=2, fresh=True,
                                                  state=str(tmp_path / "two")),
                              fake_observer({"boundary": 0.5}))
    assert [(m["id"], m["status"], m["accepted"]) for m in two["mutants"]] == \
        [(m["id"], m["status"], m["accepted"]) for m in campaign["mutants"]]
    # Kept in the state folder: a second campaign judges nothing again.
    seen = []

    def counting(*args):
        seen.append(args[2])
        return fake_observer({"boundary": 0.5})(*args)
    again = mutate.run_campaign(options, counting)
    assert [m["status"] for m in again["mutants"]] == [m["status"] for m in campaign["mutants"]]
    assert seen == [str(folder / "solutions" / "triton_correct.py")]


def test_a_campaign_on_ray_gives_the_campaign_made_here(tmp_path, monkeypatch):
    """The same campaign with its programs judged by Ray actors (a local cluster, no GPU): the
    problem and each program travel as text and are judged where the actor is."""
    pytest.importorskip("ray")
    # The actors import this module for the observer: the cluster starts with it on the path.
    here_dir = os.path.dirname(os.path.abspath(__file__))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [
        here_dir, os.environ.get("PYTHONPATH")])))
    folder = small_suite(tmp_path)
    here = mutate.run_campaign(mutate.Options(
        str(folder), checkers=["kjudge", "kernelbench-v0"], state=str(tmp_path / "here"),
        device="cpu", confine=False), fake_observer({"boundary": 0.5}))
    there = mutate.run_campaign(mutate.Options(
        str(folder), checkers=["kjudge", "kernelbench-v0"], state=str(tmp_path / "there"),
        device="cpu", confine=False, ray="local", actors=2), fake_observer({"boundary": 0.5}))
    def steady(c):
        return [{k: m[k] for k in ("id", "status", "accepted", "killed_on", "witness")}
                for m in c["mutants"]]
    assert steady(there) == steady(here)
    assert there["controls"] == here["controls"] and there["pool"] == here["pool"]


def test_a_campaign_file_that_is_not_one_is_named():
    with pytest.raises(ValueError, match="broken.json: a campaign"):
        _kjudge.mutation_reports("{}", "broken.json")
    bad_index = {"backend": "x", "checkers": [], "pool": [], "controls": [],
                 "forced_fail_killed": True, "seconds": {}, "mutants": [dict(
                     id="m", op="BD-ROR", category="boundary", rewrite="< -> <=",
                     description="", file="f", offset=0, length=1, line=1, column=1,
                     original="<", replacement="<=", prelude="", function="k",
                     equivalence_prone=False, problem="p", status="killed", status_reason="",
                     replay="", ptx_hash="", equivalence_class="", accepted={}, killed_on=[3],
                     flaky=False, witness=3, error_ratios=[])]}
    with pytest.raises(ValueError, match="pool input 3 of 0"):
        _kjudge.mutation_reports(json.dumps(bad_index), "c.json")


def run_module(*args):
    return subprocess.run([sys.executable, "-m", "kjudge.kernelbench.mutate", *args],
                          capture_output=True, text=True, timeout=300)


def test_bad_arguments_are_named_with_exit_2(tmp_path):
    r = run_module(str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "nowhere: no such folder" in r.stderr
    r = run_module(EXAMPLES, "--sites", "ptx")
    assert r.returncode == 2 and "--sites ptx" in r.stderr
    r = run_module(EXAMPLES, "--device", "cpu")
    assert r.returncode == 2 and "run on a CUDA device" in r.stderr


@pytest.mark.skipif(not GPU, reason="the mutants' kernels need a CUDA device")
def test_a_triton_campaign_on_the_gpu(tmp_path):
    folder = tmp_path / "relu"
    shutil.copytree(RELU, folder, ignore=shutil.ignore_patterns("*cuda*", "decoy*", "input*",
                                                                "output*", "partial*"))
    out = tmp_path / "c.json"
    r = run_module(str(folder), "--state", str(tmp_path / "state"), "--campaign", str(out),
                   "--checkers", "kjudge,kernelbench-v0")
    assert r.returncode == 0, r.stderr[-3000:]
    campaign = json.loads(out.read_text())
    assert campaign["controls"][0]["broken"] == ""
    assert campaign["controls"][0]["accepted"] == {"kjudge": True, "kernelbench-v0": True}
    statuses = [m["status"] for m in campaign["mutants"]]
    assert statuses.count("compile_error") >= 2 and "killed" in statuses
    assert "mutants judged" in r.stdout
