"""`kjudge serve --http` on loopback with the host backend: one request and a batch answered as
the JSON Lines protocol answers them, requests from several connections at once, health and
metrics, a body that is not JSON, the bearer token (required, on loopback too), and the bounds on
bodies and batches. Every server is bound to 127.0.0.1 and stops by itself (--max-idle)."""
import concurrent.futures
import json
import re
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kjudge.judge import find_binary

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = str(ROOT / "problems" / "vector_add")
BASIC = str(ROOT / "problems" / "vector_add" / "solutions" / "basic.cu")
OFF_BY_ONE = str(ROOT / "problems" / "vector_add" / "traps" / "off_by_one.cu")


TOKEN = "a-token-of-32-characters-or-so.."


class Server:
    def __init__(self, token_file, *extra: str, max_idle: float = 60):
        self.process = subprocess.Popen(
            [find_binary(), "serve", "--backend", "host", "--http", "127.0.0.1:0", "--max-idle",
             str(max_idle), "--jobs", "2", "--token-file", str(token_file), *extra],
            stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        match = re.search(r"listening on (http://\S+)", line)
        assert match, line
        self.url = match[1]

    def call(self, path: str, body=None, token=TOKEN):
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        # JSON's own type: cpp-httplib refuses a form-encoded body past 8 KiB.
        request = urllib.request.Request(self.url + path, data=data,
                                         headers={"Content-Type": "application/json"})
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=300) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


@pytest.fixture
def token_file(tmp_path):
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture
def server(token_file):
    s = Server(token_file)
    yield s
    s.stop()


def check(candidate, rid):
    return {"id": rid, "op": "check", "problem": PROBLEM, "candidate": candidate}


def test_requests_batches_and_metrics(server):
    status, text = server.call("/v1/judge", check(BASIC, "a"))
    assert status == 200
    answer = json.loads(text)
    assert answer["id"] == "a" and answer["verdict"]["outcome"] == "PASS"
    status, text = server.call("/v1/judge", [check(OFF_BY_ONE, 1), check(BASIC, 2)])
    assert [(a["id"], a["verdict"]["outcome"]) for a in json.loads(text)] == [(1, "FAIL"), (2, "PASS")]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:  # four connections at once
        outcomes = list(pool.map(lambda i: json.loads(server.call("/v1/judge", check(BASIC, i))[1]),
                                 range(4)))
    assert sorted(a["id"] for a in outcomes) == [0, 1, 2, 3]
    status, text = server.call("/v1/judge", b"{not json")
    assert status == 400 and json.loads(text)["error"]["kind"] == "bad_request"
    status, text = server.call("/v1/judge", b"{\xff\xfe")  # quoted back, not UTF-8
    assert status == 400 and json.loads(text)["error"]["kind"] == "bad_request"
    status, text = server.call("/v1/judge", {"op": "check"})
    assert status == 200 and json.loads(text)["error"]["kind"] == "bad_request"  # as a line's answer
    assert json.loads(server.call("/v1/health")[1]) == {"status": "ok", "in_flight": 0, "answered": 8}
    metrics = server.call("/v1/metrics")[1]
    assert 'kjudge_answers_total{outcome="PASS"} 6' in metrics
    assert 'kjudge_answers_total{outcome="FAIL"} 1' in metrics
    assert 'kjudge_answers_total{outcome="error:bad_request"} 1' in metrics


def test_a_token_is_required(server):
    assert server.call("/v1/judge", check(BASIC, 1), token=None)[0] == 401
    assert server.call("/v1/judge", check(BASIC, 1), token="a-wrong-token-of-32-characters..")[0] \
        == 401
    assert server.call("/v1/metrics", token=None)[0] == 401
    assert server.call("/v1/health", token=None)[0] == 200
    status, text = server.call("/v1/judge", check(BASIC, 1))
    assert status == 200 and json.loads(text)["verdict"]["outcome"] == "PASS"


@pytest.mark.parametrize("address", ["127.0.0.1:0", "0.0.0.0:0"])
def test_no_server_starts_without_a_token(address):
    """On loopback too: any local user could otherwise have the judge build and run their
    problem's reference (defence off: it listens, and answers anyone)."""
    done = subprocess.run([find_binary(), "serve", "--http", address, "--max-idle", "1"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "give --token-file" in done.stderr


def test_a_batch_or_body_past_the_bounds_is_refused(server):
    """60,000 requests in one batch once started a thread each, and nothing else on the machine
    could fork (defence off: the batch is judged); a body past 64 MiB is not read."""
    status, text = server.call("/v1/judge", [{"op": "check"}] * 1025)
    assert status == 413
    assert json.loads(text)["error"]["message"] == "a batch of 1025 requests: at most 1024"
    status, _ = server.call("/v1/judge", b" " * ((64 << 20) + 1))
    assert status == 413
    assert json.loads(server.call("/v1/health")[1])["answered"] == 0


def test_the_server_stops_by_itself_when_idle(token_file):
    s = Server(token_file, max_idle=1)
    assert s.process.wait(timeout=30) == 0
