"""Fixtures: a mock upstream process and `corvid serve` in front of it, both on loopback.

The binaries come from the cargo target directory (CORVID_TARGET_DIR, default ./target/debug);
the README's test command builds them first.
"""

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CORVID_TARGET_DIR")
              or Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _clean_env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.upper().endswith("_PROXY") and not k.startswith(("CORVID_", "SUPERGROK_ZED_", "XAI_"))}
    env.update(extra)
    return env


class Mock:
    """The `corvid-mock-upstream` process, scripted over HTTP."""

    def __init__(self, base_url: str):
        self.base_url = base_url
        self.root = base_url.rsplit("/v1", 1)[0]

    def _call(self, method: str, path: str, payload=None):
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.root + path, data=data, method=method,
                                         headers={"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def enqueue(self, path: str, status: int, body, headers=None):
        self._call("POST", "/__mock/enqueue",
                   {"path": path, "status": status, "body": body, "headers": headers or {}})

    def requests(self):
        return self._call("GET", "/__mock/requests")


@pytest.fixture
def mock_upstream():
    process = subprocess.Popen([str(TARGET / "corvid-mock-upstream")], stdout=subprocess.PIPE,
                               env=_clean_env(), text=True)
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        yield Mock(base_url)
    finally:
        process.kill()
        process.wait()


def _wait_healthy(url: str, process: subprocess.Popen, log_path: Path):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"corvid exited early:\n{log_path.read_text()}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"corvid never became healthy:\n{log_path.read_text()}")


@pytest.fixture
def mock_zed():
    """The `corvid-mock-zed` process: a mock Zed cloud (account, LLM tokens, models, completions)."""
    process = subprocess.Popen([str(TARGET / "corvid-mock-zed")], stdout=subprocess.PIPE,
                               env=_clean_env(), text=True)
    try:
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:"), base_url
        yield base_url
    finally:
        process.kill()
        process.wait()


# The mock Zed cloud's signed-in user (corvid_test_support::zed_cloud::{USER_ID, ACCOUNT_TOKEN}).
ZED_USER_ID = "42"
ZED_ACCOUNT_TOKEN = '{"version":1,"id":7,"token":"Zk3vQpL8xN2mRt6yWc1aHs9dJf4gBn7eUi0oKl5zXq3wEr8tYu2iOp6aSd1fGh4j"}'


@pytest.fixture
def corvid_with_zed(mock_upstream, mock_zed):
    """`corvid serve` signed in to the mock Zed cloud."""
    yield from _serve(mock_upstream, extra_env=f"ZED_USER_ID={ZED_USER_ID}\nZED_ACCESS_TOKEN='{ZED_ACCOUNT_TOKEN}'\n",
                      extra_config=f'[providers.zed]\nbase_url = "{mock_zed}"\n')


@pytest.fixture
def corvid(mock_upstream):
    """`corvid serve` on a free port, upstream = the mock, an API key in its env file."""
    yield from _serve(mock_upstream)


def _serve(mock_upstream, extra_env="", extra_config=""):
    with tempfile.TemporaryDirectory() as home:
        Path(home, "env").write_text(
            "XAI_API_KEY='sk-upstream-test'\nANTHROPIC_API_KEY=ant-test\n"
            "GEMINI_API_KEY=gem-test\nOPENAI_API_KEY=oai-test\n" + extra_env)
        base = mock_upstream.base_url
        Path(home, "config.toml").write_text(
            f'[providers.anthropic]\nbase_url = "{base}"\n'
            f'[providers.gemini]\nbase_url = "{base}"\n'
            f'[providers.openai]\nbase_url = "{base}"\n'
            f'[providers.resp]\nkind = "openai-responses"\nbase_url = "{base}"\napi_key_env = "OPENAI_API_KEY"\n'
            f'models = ["resp-model"]\n' + extra_config)
        os.chmod(Path(home, "env"), 0o600)
        port = _free_port()
        log_path = Path(home, "corvid.log")
        env = _clean_env(CORVID_HOME=home, CORVID_UPSTREAM=mock_upstream.base_url,
                         CORVID_LOG_LEVEL="debug", NO_COLOR="1")
        with open(log_path, "w") as log:
            process = subprocess.Popen([str(TARGET / "corvid"), "serve", "--port", str(port)],
                                       env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_healthy(url, process, log_path)
            yield {"url": url, "mock": mock_upstream, "log": log_path, "process": process}
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
