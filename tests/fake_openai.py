"""A local OpenAI-compatible chat-completions server (never the network), for the LLM judge and for
clients instrumented as OpenLLMetry instruments the OpenAI SDK.

It plays its `script` in order, the last step repeating, and records every request. Steps:
- "ok": a chat completion whose message content is `reply` (with usage counts), or, where `replies`
  is set, the next of them (a client in another process, which cannot set `reply` between calls);
- "malformed": content that is not JSON; "bad_verdict": JSON without a judge's verdict;
- "slow": "ok" after 0.6 s;
- "held": "ok" once the test calls `release()` (at most 30 s later): a caller caught mid-request;
- "http<status>" an error status, "http<status>:<retry after>" with that `Retry-After` value.
"""

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERDICT = json.dumps({"verdict": "CONTRADICTED", "rationale": "the model says so"})


class FakeOpenAI:
    def __init__(self) -> None:
        self.script: list[str] = ["ok"]
        self.reply = VERDICT
        self.replies: list[str] = []
        self.requests: list[dict] = []
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"fake": self}))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        """The base URL, as OpenAI clients take it (`.../v1`)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._server.shutdown()
        self._server.server_close()

    def release(self) -> None:
        """Let the requests a "held" step keeps waiting have their answer."""
        self._released.set()

    def step(self) -> str:
        return self.script[min(len(self.requests) - 1, len(self.script) - 1)]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeOpenAI

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        step = self.fake.step()
        if step == "slow":
            time.sleep(0.6)
            step = "ok"
        if step == "held":
            self.fake._released.wait(timeout=30)
            step = "ok"
        if step.startswith("http"):
            status, _, retry_after = step[4:].partition(":")
            self._send(int(status), {"error": {"message": "nope"}}, {"Retry-After": retry_after} if retry_after else {})
            return
        ok = self.fake.replies.pop(0) if self.fake.replies else self.fake.reply
        content = {"ok": ok, "malformed": "this is {not json", "bad_verdict": json.dumps({"verdict": "?"})}
        self._send(
            200,
            {
                "id": f"chatcmpl-{len(self.fake.requests)}",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": body.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content[step]},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 21, "completion_tokens": 8, "total_tokens": 29},
            },
        )

    def _send(self, status: int, payload: dict, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        with contextlib.suppress(BrokenPipeError):  # the client gave up (a timeout)
            self.wfile.write(data)

    def log_message(self, *args):
        pass
