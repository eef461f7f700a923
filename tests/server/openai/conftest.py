"""Fixtures for the server suites: a real `lathe serve` on a free loopback port.

The binary comes from $LATHE_BINARY (ctest sets it), else build/lathe. Servers are started with
--port 0; the bound port is read from the "listening on http://HOST:PORT" log line, so there is no
race for a port. Each fixture waits for /health to answer 200 before handing the server out.
"""

import json
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
FIXTURES = Path(os.environ.get("LATHE_FIXTURES_DIR", REPO / "tests" / "fixtures"))
MODEL_DIR = FIXTURES / "models" / "qwen3-tiny-chat"
SERVED_NAME = "tiny-chat"
# The fixture's max_position_embeddings is 256; the Qwen3 tool prompt alone is ~400 tokens of
# the tiny 384-token vocabulary, so the servers allow longer contexts (RoPE has no hard limit).
MAX_MODEL_LEN = 1024


def lathe_binary() -> Path:
    path = Path(os.environ.get("LATHE_BINARY", REPO / "build" / "lathe"))
    if not path.exists():
        pytest.exit(f"lathe binary not found at {path} (set LATHE_BINARY)", returncode=2)
    return path


class LatheServer:
    """One `lathe serve` process and helpers to talk to it."""

    def __init__(self, *extra_args: str, served_name: str = SERVED_NAME, max_model_len: int = MAX_MODEL_LEN,
                 model_dir: Path | None = None):
        self.served_name = served_name
        self.max_model_len = max_model_len
        args = [str(lathe_binary()), "serve", str(model_dir or MODEL_DIR), "--host", "127.0.0.1", "--port", "0",
                "--served-model-name", served_name, "--max-model-len", str(max_model_len), *extra_args]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.log: list[str] = []
        port_seen = threading.Event()
        self.port = 0

        def read_log():
            for line in self.process.stderr:
                self.log.append(line)
                match = re.search(r"listening on http://[^:]+:(\d+)", line)
                if match and not port_seen.is_set():
                    self.port = int(match.group(1))
                    port_seen.set()

        self._reader = threading.Thread(target=read_log, daemon=True)
        self._reader.start()
        if not port_seen.wait(30):
            self.stop()
            raise RuntimeError("lathe serve did not report its port:\n" + "".join(self.log))
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError("lathe serve exited:\n" + "".join(self.log))
            try:
                with urllib.request.urlopen(self.url("/health"), timeout=5) as response:
                    if response.status == 200:
                        return
            except urllib.error.HTTPError as error:
                assert error.code == 503, error.code  # loading
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("lathe serve did not become healthy:\n" + "".join(self.log))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def post_json(self, path: str, body: dict, headers: dict | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(self.url(path), data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def tokenize(self, **body) -> list[int]:
        status, reply = self.post_json("/tokenize", body)
        assert status == 200, reply
        return reply["tokens"]

    def metrics(self) -> dict[str, float]:
        """Unlabelled samples and labelled ones keyed by their full name."""
        with urllib.request.urlopen(self.url("/metrics"), timeout=10) as response:
            text = response.read().decode()
        samples = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name, value = line.rsplit(" ", 1)
            samples[name] = float(value)
        return samples

    def wait_idle(self, timeout: float = 10.0) -> dict[str, float]:
        """Waits until nothing runs or waits and no KV block is in use; returns the metrics."""
        deadline = time.time() + timeout
        while True:
            samples = self.metrics()
            idle = (samples["lathe_kv_blocks_used"] == 0 and samples["lathe_num_requests_running"] == 0
                    and samples["lathe_num_requests_waiting"] == 0)
            if idle or time.time() > deadline:
                return samples
            time.sleep(0.05)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _server(request, *args, **kwargs):
    server = LatheServer(*args, **kwargs)
    request.addfinalizer(server.stop)
    return server


@pytest.fixture(scope="session")
def server(request):
    """The main server: defaults except a 1 MiB body limit and room for long generations (so a
    request cut off by a disconnect could not have finished by itself first)."""
    return _server(request, "--max-body-bytes", str(1 << 20), max_model_len=4096)


@pytest.fixture(scope="session")
def auth_server(request):
    return _server(request, "--api-key", "sekrit-key")


@pytest.fixture(scope="session")
def client(server):
    from openai import OpenAI
    return OpenAI(base_url=server.url("/v1"), api_key="unused", max_retries=0, timeout=60)
