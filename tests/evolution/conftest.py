"""Fixtures of the evolution tests: a clean cache, and local fake competitor servers."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.cache import cache

from tests.evolution.samples import COMPETITOR_ANSWER

# Far beyond the timeouts the tests set, so a loaded CI machine (2 cores) cannot blur the outcome.
SLOW_SECONDS = 4.0
TRICKLE_SECONDS = 0.05


@pytest.fixture(autouse=True)
def _clean_cache():
    cache.clear()
    yield
    cache.clear()


class _FakeProvider(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat-completions endpoint whose behaviour is the URL's first segment:
    /good answers, /slow answers after SLOW_SECONDS, /fail answers 500, /garbage answers non-JSON,
    /empty answers with no choices, /trickle sends a good answer one byte every TRICKLE_SECONDS."""

    def do_POST(self):  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        mode = self.path.strip("/").split("/")[0]
        if mode == "slow":
            time.sleep(SLOW_SECONDS)
        if mode == "trickle":
            self._trickle(json.dumps({"choices": [{"message": {"content": self.server.answer}}]}).encode())
        elif mode == "fail":
            self._send(500, b'{"error": "boom"}')
        elif mode == "garbage":
            self._send(200, b"<html>not json</html>")
        elif mode == "empty":
            self._send(200, b'{"choices": []}')
        else:
            payload = {"choices": [{"message": {"role": "assistant", "content": self.server.answer}}]}
            self._send(200, json.dumps(payload, ensure_ascii=False).encode())

    def _trickle(self, data: bytes) -> None:
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for index in range(len(data)):
                self.wfile.write(data[index : index + 1])
                self.wfile.flush()
                time.sleep(TRICKLE_SECONDS)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _send(self, status: int, data: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout): exactly what the slow endpoint tests

    def log_message(self, format, *args):  # noqa: A002
        pass


@pytest.fixture
def fake_provider_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FakeProvider)
    server.daemon_threads = True
    server.block_on_close = False
    server.requests = []
    server.answer = COMPETITOR_ANSWER
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.base = f"http://127.0.0.1:{server.server_address[1]}"
    yield server
    server.shutdown()
    server.server_close()


def provider(server, mode: str, name: str | None = None, api_key: str = "") -> dict[str, str]:
    return {"name": name or mode, "base_url": f"{server.base}/{mode}/v1", "model": "fake-model", "api_key": api_key}
