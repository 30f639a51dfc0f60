"""kjudge on a machine other users log into (issue 52): what it keeps under the temporary folder
is this user's alone. Each test plants what another local user could and fails with its defence
off."""
import os
import subprocess

import pytest

from kjudge.judge import find_binary

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def host_check(tmp: str) -> subprocess.CompletedProcess:
    """A host check with no HOME (so no ~/.cache): its build cache is the temporary folder's."""
    problem = os.path.join(ROOT, "problems", "relu")
    env = {k: v for k, v in os.environ.items() if k not in ("HOME", "XDG_CACHE_HOME")}
    return subprocess.run([find_binary(), "check", problem, "--candidate",
                           os.path.join(problem, "solutions", "basic.cu"), "--backend", "host"],
                          capture_output=True, text=True, timeout=600, env={**env, "TMPDIR": tmp})


def test_a_host_cache_another_user_made_first_is_never_used(tmp_path):
    """The host backend's modules are loaded and run as the judge's user: a cache folder another
    user made first (and could fill) is refused, naming it (defence off: a shared
    /tmp/kjudge-host-cache, used whoever made it)."""
    if os.geteuid() != 0:
        pytest.skip("giving a folder to another user takes root")
    planted = tmp_path / f"kjudge-host-cache-{os.geteuid()}"
    planted.mkdir(mode=0o700)
    os.chown(planted, 65534, 65534)
    done = host_check(str(tmp_path))
    assert done.returncode == 2, done.stderr[-2000:]
    # The check's verdict line: ERROR(spec_error), the folder and why.
    assert f"ERROR(spec_error) relu: {planted}: host build cache: is owned by uid 65534" in \
        done.stdout


def test_the_host_cache_is_made_for_this_user_alone(tmp_path):
    done = host_check(str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]
    made = tmp_path / f"kjudge-host-cache-{os.geteuid()}"
    assert made.is_dir() and (made.stat().st_mode & 0o777) == 0o700
