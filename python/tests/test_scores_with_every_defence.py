"""Every defence is on where scores are made (issue 52): `kjudge run` draws a problem's secret
hidden shapes when given a secret, as `check` does, and says so per sample when it is not. Each
test fails with its defence off."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from kjudge.judge import find_binary

ROOT = Path(__file__).resolve().parents[2]
SECRET = "a-secret-of-at-least-32-bytes-for-the-test"

# Right on every shape the problem names (public 1000 and 2000, hidden 3001), wrong on any other:
# only a shape drawn with the secret tells.
NAMED_SHAPES_ONLY = """/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const bool named = N == 1000 || N == 2000 || N == 3001;
  if (i < N) z[i] = named ? x[i] + y[i] : 0.0f;
}
"""


def small_vector_add_suite(tmp_path: Path) -> Path:
    """problems/vector_add with small shapes, no host set (the host backend then judges the
    public, hidden and drawn ones) and no perturbed shapes, as a suite of its own."""
    suite = tmp_path / "suite"
    shutil.copytree(ROOT / "problems" / "vector_add", suite / "vector_add")
    toml = suite / "vector_add" / "problem.toml"
    text = toml.read_text()
    text = re.sub(r"^public = .*$", "public = [{ N = 1000 }, { N = 2000 }]", text, flags=re.M)
    text = re.sub(r"^hidden = .*$", "hidden = [{ N = 3001 }]", text, flags=re.M)
    text = re.sub(r"^hidden_ranges = .*$", "hidden_ranges = [{ N = [4000, 9000] }]", text,
                  flags=re.M)
    text = re.sub(r"^host = .*\n", "", text, flags=re.M)
    text = re.sub(r"^vary = .*$", "vary = []", text, flags=re.M)  # no perturbed N +- 1
    toml.write_text(text)
    count = len(list((suite / "vector_add" / "solutions").glob("*.cu"))) + \
        len(list((suite / "vector_add" / "traps").glob("*.cu")))
    (suite / "manifest.toml").write_text(
        f'[[problem]]\nname = "vector_add"\npath = "vector_add"\ncandidates = {count}\n')
    samples = tmp_path / "samples" / "vector_add"
    samples.mkdir(parents=True)
    (samples / "named_shapes_only.cu").write_text(NAMED_SHAPES_ONLY)
    return suite


def bare_environment(tmp_path: Path) -> dict:
    """No secret of this process's for the run to find: a path, a temporary folder, and where
    the libraries are found on a machine that keeps them outside the system's folders (the GPU
    machine's unpacked packages)."""
    env = {"PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path)}
    if "LD_LIBRARY_PATH" in os.environ:
        env["LD_LIBRARY_PATH"] = os.environ["LD_LIBRARY_PATH"]
    return env


def run_suite(tmp_path: Path, suite: Path, out: str, *extra: str) -> dict:
    done = subprocess.run([find_binary(), "run", str(suite), "--samples",
                           str(tmp_path / "samples"), "--backend", "host", "--out",
                           str(tmp_path / out), *extra],
                          capture_output=True, text=True, timeout=600,
                          env=bare_environment(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = (tmp_path / out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_run_draws_the_secret_hidden_shapes(tmp_path):
    """A kernel right on the named shapes alone: without a secret it passes and its line says
    the drawn shapes were not judged; with --secret-file the drawn shapes fail it (defence off,
    `run` never drawing them: PASS)."""
    suite = small_vector_add_suite(tmp_path)
    without = run_suite(tmp_path, suite, "without")
    assert without["outcome"] == "PASS"
    assert any(s.startswith("SKIP(no secret") for s in without["skips"]), without["skips"]
    secret = tmp_path / "secret"
    secret.write_text(SECRET + "\n")
    with_secret = run_suite(tmp_path, suite, "with", "--secret-file", str(secret))
    assert (with_secret["outcome"], with_secret["reason"]) == ("FAIL", "mismatch"), with_secret
    assert not any(s.startswith("SKIP(no secret") for s in with_secret["skips"])


def test_run_keeps_the_secret_off_ray(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text(SECRET + "\n")
    done = subprocess.run([find_binary(), "run", str(ROOT / "problems"), "--ray", "local",
                           "--secret-file", str(secret), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "not on Ray" in done.stderr
