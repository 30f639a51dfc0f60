"""The compile stage of KernelBench judging (kjudge.kernelbench.build): a candidate's load_inline
build made by a confined build worker, kept in a private cache under its source's key, loaded
by the judging worker without building, made once for duplicates, and never another
candidate's. On the CPU: a C++ extension of pybind11 alone (a CUDA one is the GPU machine's, in
bench/bench_kernelbench_build.py)."""
import json
import os
import textwrap

import pytest

torch = pytest.importorskip("torch")

from kjudge.kernelbench import Settings  # noqa: E402
from kjudge.kernelbench.build import BuildFarm, private_folder  # noqa: E402
from kjudge.kernelbench.evaluate import Evaluator  # noqa: E402
from kjudge.kernelbench import prebuilt  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "kernelbench")
PROBLEM = os.path.join(FIXTURES, "scaled_sum", "problem.py")

# scaled_sum with its scale from a C++ extension that includes pybind11 alone (no torch header:
# a build of seconds, where one with torch/extension.h takes most of a minute on two cores).
CANDIDATE = textwrap.dedent('''
    import torch
    from torch.utils.cpp_extension import load_inline

    source = """
    #include <pybind11/pybind11.h>
    double scale_of(double scale) { return scale; }
    """
    ext = load_inline("kj_scale_%(tag)s", cpp_sources=source, functions=["scale_of"],
                      no_implicit_headers=True, with_pytorch_error_handling=False)


    class ModelNew(torch.nn.Module):
        def __init__(self, scale):
            super().__init__()
            self.scale = scale

        def forward(self, x):
            return torch.sum(x, dim=1) * ext.scale_of(self.scale)
''')


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One farm and one build of the C++ candidate, shared by the tests (a build takes most of a
    minute on two cores)."""
    root = tmp_path_factory.mktemp("cache")
    farm = BuildFarm(1, "cpu", cache_root=str(root))
    source = CANDIDATE % {"tag": "a"}
    first = farm.submit(source)
    again = farm.submit(source)  # the same source while the first is under way
    yield farm, source, first, again, root
    farm.close()


def test_a_build_made_apart_is_loaded_without_building(built, tmp_path):
    farm, source, first, _, _ = built
    build = first.result()
    assert build.message == "built" and not build.from_cache
    with open(os.path.join(build.folder, prebuilt.RECORD)) as f:
        record = json.load(f)
    assert len(record) == 1 and list(record.values())[0]["name"] == "kj_scale_a"
    candidate = write(tmp_path, "cpp_sum.py", source)
    with Evaluator(Settings(device="cpu")) as judge:
        verdict = judge.check(PROBLEM, candidate, build)
    assert verdict["outcome"] == "PASS", verdict["message"]
    assert verdict["metadata"]["build"]["calls"] == {"loaded": 1, "replayed": 0, "made": 0}


def test_a_duplicate_is_built_once_and_found_in_the_cache(built):
    farm, source, first, again, root = built
    assert again is first
    second_farm = BuildFarm(1, "cpu", cache_root=str(root))
    try:
        hit = second_farm.submit(source).result()
    finally:
        second_farm.close()
    assert hit.from_cache and hit.seconds == 0 and hit.folder == first.result().folder


def test_a_build_of_other_sources_is_made_by_the_judge_itself(built, tmp_path):
    """The same build folder for a candidate whose load_inline differs (another name): nothing
    of it is loaded, the judge builds."""
    farm, _, first, _, _ = built
    other = CANDIDATE % {"tag": "b"}
    candidate = write(tmp_path, "other.py", other)
    with Evaluator(Settings(device="cpu")) as judge:
        verdict = judge.check(PROBLEM, candidate, first.result())
    assert verdict["outcome"] == "PASS", verdict["message"]
    assert verdict["metadata"]["build"]["calls"] == {"loaded": 0, "replayed": 0, "made": 1}


def test_a_compile_error_is_replayed_not_built_again(tmp_path):
    """The compiler's refusal in the build worker is the judging worker's too, without a
    second compile; a build the machine stopped (killed) is made again instead."""
    farm = BuildFarm(1, "cpu", cache_root=str(tmp_path / "cache"))
    source = (CANDIDATE % {"tag": "c"}).replace("return scale;", "return scale")  # no ;
    try:
        build = farm.submit(source).result()
    finally:
        farm.close()
    with open(os.path.join(build.folder, prebuilt.RECORD)) as f:
        (entry,) = json.load(f).values()
    assert "Error building extension" in entry["error"]
    with Evaluator(Settings(device="cpu")) as judge:
        verdict = judge.check(PROBLEM, write(tmp_path, "broken.py", source), build)
    assert (verdict["outcome"], verdict["reason"]) == ("FAIL", "compile_error")
    assert "Error building extension" in verdict["message"]
    assert verdict["metadata"]["build"]["calls"] == {"loaded": 0, "replayed": 1, "made": 0}


def test_what_a_candidate_writes_into_its_build_folder_stays_its_own(tmp_path):
    """Attack: the build worker's candidate lists a forged build (another key, a link to a
    file of the judge's, a name that is not a key) beside its own. Only its own call's entry is
    kept, copied, never linked."""
    secret = tmp_path / "judges_secret.so"
    secret.write_bytes(b"the judge's")
    forged = textwrap.dedent(f'''
        import json, os
        folder = os.path.join(os.getcwd(), "builds")
        os.makedirs(folder, exist_ok=True)
        key = "0" * 64
        os.symlink({str(secret)!r}, os.path.join(folder, key + ".so"))
        with open(os.path.join(folder, "record.json"), "w") as f:
            json.dump({{key: {{"so": key + ".so", "name": "x"}},
                       "../escape": {{"error": "x"}}}}, f)
        load_inline = None  # no build of its own
    ''')
    farm = BuildFarm(1, "cpu", cache_root=str(tmp_path / "cache"), confine=False)
    try:
        build = farm.submit(forged + "\n# load_inline\n").result()
    finally:
        farm.close()
    with open(os.path.join(build.folder, prebuilt.RECORD)) as f:
        assert json.load(f) == {}
    assert sorted(os.listdir(build.folder)) == ["build.json", "record.json"]


def test_a_build_cache_another_user_can_write_is_refused(tmp_path):
    shared = tmp_path / "kernelbench-builds"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(PermissionError, match="mode 0700"):
        private_folder(str(shared))
    farm = BuildFarm(1, "cpu", cache_root=str(tmp_path))
    try:
        assert farm.cache is None and "0700" in farm.cache_refused
    finally:
        farm.close()


def test_a_build_from_another_machine_is_kept_only_whole_and_under_its_own_key(built, tmp_path):
    """kjudge.ray's build tasks: build_for's answer (the entry's files, here the fixture's own)
    stored by the judge's node (store_build). A forged key, a file name of another kind or a
    missing build.json keeps nothing; a machine of another toolchain builds nothing."""
    from kjudge.kernelbench.build import build_for, store_build
    farm, source, first, _, _ = built
    assert build_for(source, farm.arch_list, "another toolchain") is None
    folder = first.result().folder
    answer = {"key": farm.key(source),
              "files": {n: open(os.path.join(folder, n), "rb").read() for n in os.listdir(folder)}}
    assert len(answer["files"]) == 3  # record.json, build.json, KEY.so
    root = tmp_path / "cache"
    forged = [dict(answer, key="0" * 64),
              dict(answer, files={**answer["files"], "../evil.so": b"x"}),
              dict(answer, files={k: v for k, v in answer["files"].items() if k != "build.json"}),
              dict(answer, files={**answer["files"], "run.sh": b"#!/bin/sh"})]
    for bad in forged:
        assert store_build(str(root), farm.identity, source, bad) is False
    assert not (root / "kernelbench-builds").exists()
    assert store_build(str(root), farm.identity, source, answer) is True
    entry = root / "kernelbench-builds" / farm.key(source)
    assert sorted(p.name for p in entry.iterdir()) == sorted(answer["files"])
    # Found there by a farm of that cache: no build.
    local = BuildFarm(1, "cpu", cache_root=str(root))
    try:
        assert local.submit(source).result().from_cache
    finally:
        local.close()


@pytest.mark.skipif(not __import__("kjudge")._kjudge.cuda_available()[0],
                    reason="precompiles torch's header (minutes on two cores): the GPU machine's")
def test_torchs_header_precompiled_compiles_main_cpp_to_the_same_object(tmp_path):
    """The compile stage's cut (torch_header_pch): a load_inline main.cpp compiled with the
    header's folder first on its include path reads the precompiled header (`-H` marks it `!`)
    and gives the object it gives without, byte for byte."""
    import subprocess
    from kjudge.kernelbench.build import _torch_main_cpp_flags, toolchain_identity, \
        torch_header_pch
    cache = private_folder(str(tmp_path / "cache"))
    include = torch_header_pch(cache, toolchain_identity(""))
    assert include is not None
    assert torch_header_pch(cache, toolchain_identity("")) == include  # made once
    cxx, flags = _torch_main_cpp_flags(str(tmp_path))
    main = write(tmp_path, "main.cpp", "#include <torch/extension.h>\n"
                 "torch::Tensor twice(torch::Tensor x) { return x * 2; }\n"
                 "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def(\"twice\", &twice); }\n")
    objects = []
    for extra in ([], ["-I", include, "-H", "-Winvalid-pch"]):
        out = str(tmp_path / f"main{len(objects)}.o")
        done = subprocess.run([cxx, *flags, "-DTORCH_EXTENSION_NAME=t", *extra, "-c", main,
                               "-o", out], capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        objects.append(open(out, "rb").read())
    assert done.stderr.splitlines()[0].startswith("! ")  # the header read precompiled
    assert "extension.h.gch" in done.stderr.splitlines()[0]
    assert objects[0] == objects[1]
