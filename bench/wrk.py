"""The one HTTP load driver of the benchmarks: wrk, a C load generator (Debian's package `wrk`).

A Python load generator on this 2-core machine takes a core from the server it measures, which
halves the ceiling it is compared with; wrk with one thread costs a fraction of that. Every HTTP
benchmark sends its requests through `run` (one wrk process, one thread, N keep-alive connections)
and compares endpoints with the bare ceiling view through `against_ceiling`, in one server run.

A request source is any object with `lua() -> str`, the Lua that defines `init(args)` and
`request()`. That Lua may read two globals the runner sets: `thread_number` (0 for the first wrk
thread) and `run_tag` (a random 31-bit number per wrk invocation, so ids written into bodies are
new on every run, warm-ups included). `Requests` sends a fixed list in turn; `Numbered` writes a
new id into one body per request. wrk.headers holds the `headers` given to `run`.
"""

import json
import secrets
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

WRK_THREADS = 1  # the load generator's share of the 2 cores: one
CONNECTIONS = (16, 64)
INSTALL_HINT = (
    "wrk (the benchmarks' HTTP load generator) is not installed: `apt-get install wrk` (make bench does it as root)"
)


class RequestSource(Protocol):
    def lua(self) -> str: ...


def lua_string(data: bytes) -> str:
    """A Lua string literal holding exactly `data` (any bytes)."""
    return '"' + "".join(chr(b) if 32 <= b < 127 and b not in (34, 92) else f"\\{b:03d}" for b in data) + '"'


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes | None = None


@dataclass(frozen=True)
class Requests:
    """These requests in turn, each formatted once; each wrk thread starts at its own offset."""

    requests: Sequence[Request]

    def lua(self) -> str:
        specs = ",\n".join(
            f"{{{lua_string(r.method.encode())}, {lua_string(r.path.encode())}, "
            f"{lua_string(r.body) if r.body is not None else 'nil'}}}"
            for r in self.requests
        )
        return f"""
local specs = {{
{specs}
}}
local formatted, n = {{}}, 0
init = function(args)
  for i, s in ipairs(specs) do formatted[i] = wrk.format(s[1], s[2], nil, s[3]) end
  n = (thread_number * 31) % #formatted
end
request = function()
  n = n % #formatted + 1
  return formatted[n]
end
"""


ID_MARKER = b"@@REQUEST-ID@@"


@dataclass(frozen=True)
class Numbered:
    """`method path` with `body`, where every ID_MARKER becomes "<run_tag>-<thread>-<n>", n counting
    this thread's requests: e.g. a new sessionId per request."""

    method: str
    path: str
    body: bytes

    def lua(self) -> str:
        if ID_MARKER not in self.body:
            raise ValueError("the body does not hold ID_MARKER")
        parts = ", ".join(lua_string(part) for part in self.body.split(ID_MARKER))
        return f"""
local parts = {{{parts}}}
local n = 0
init = function(args) end
request = function()
  n = n + 1
  local id = string.format("%d-%d-%d", run_tag, thread_number, n)
  return wrk.format({lua_string(self.method.encode())}, {lua_string(self.path.encode())}, nil, table.concat(parts, id))
end
"""


_SETUP_LUA = """
local threads = 0
setup = function(thread)
  thread:set("thread_number", threads)
  threads = threads + 1
end
"""
# wrk's own summary, as one JSON line (instead of scraping its human-readable report).
_DONE_LUA = """
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nWRK_JSON {"requests": %d, "duration_us": %d, "socket_errors": %d, "bad_status": %d, '
    .. '"p50_us": %.1f, "p90_us": %.1f, "p99_us": %.1f, "max_us": %.1f, "mean_us": %.1f}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
"""


@dataclass(frozen=True)
class Result:
    connections: int
    requests: int
    seconds: float
    socket_errors: int
    bad_status: int  # responses with a status >= 400
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    mean_ms: float

    @property
    def per_second(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    @property
    def ok(self) -> bool:
        return self.requests > 0 and not self.socket_errors and not self.bad_status

    def summary(self, unit: str = "requests") -> str:
        return (
            f"{self.requests} {unit} in {self.seconds:.1f}s = {self.per_second:.1f} {unit}/s; latency p50 "
            f"{self.p50_ms:.1f} ms, p90 {self.p90_ms:.1f} ms, p99 {self.p99_ms:.1f} ms, max {self.max_ms:.1f} ms"
            + (f"; {self.socket_errors} socket errors" if self.socket_errors else "")
            + (f"; {self.bad_status} responses >= 400" if self.bad_status else "")
        )


def wrk_path() -> str:
    path = shutil.which("wrk")
    if path is None:
        raise SystemExit(INSTALL_HINT)
    return path


def run(
    base_url: str,
    source: RequestSource,
    *,
    connections: int,
    duration: float,
    headers: dict[str, str] | None = None,
    timeout: float = 10,
) -> Result:
    """Run wrk (WRK_THREADS thread, `connections` keep-alive connections) for `duration` seconds."""
    header_lua = "".join(
        f"wrk.headers[{lua_string(k.encode())}] = {lua_string(v.encode())}\n" for k, v in (headers or {}).items()
    )
    script_text = f"run_tag = {secrets.randbelow(2**31)}\n" + header_lua + _SETUP_LUA + source.lua() + _DONE_LUA
    with tempfile.TemporaryDirectory(prefix="bench-wrk-") as directory:
        script = Path(directory) / "load.lua"
        script.write_text(script_text)
        completed = subprocess.run(
            [
                wrk_path(),
                f"--threads={WRK_THREADS}",
                f"--connections={connections}",
                f"--duration={max(1, round(duration))}s",
                f"--timeout={max(1, round(timeout))}s",
                f"--script={script}",
                base_url,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    lines = [line for line in completed.stdout.splitlines() if line.startswith("WRK_JSON ")]
    if completed.returncode or not lines:
        raise SystemExit(f"wrk failed ({completed.returncode}): {completed.stdout[-1500:]}{completed.stderr[-1500:]}")
    data = json.loads(lines[-1].removeprefix("WRK_JSON "))
    return Result(
        connections=connections,
        requests=data["requests"],
        seconds=data["duration_us"] / 1e6,
        socket_errors=data["socket_errors"],
        bad_status=data["bad_status"],
        p50_ms=data["p50_us"] / 1000,
        p90_ms=data["p90_us"] / 1000,
        p99_ms=data["p99_us"] / 1000,
        max_ms=data["max_us"] / 1000,
        mean_ms=data["mean_us"] / 1000,
    )


@dataclass(frozen=True)
class Endpoint:
    name: str
    source: RequestSource
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class Row:
    endpoint: str
    result: Result
    ceiling: float  # req/s of the ceiling view around this row (the mean of the runs before and after)

    @property
    def ratio(self) -> float:
        return self.result.per_second / self.ceiling if self.ceiling else 0.0


def against_ceiling(
    base_url: str,
    ceiling: Endpoint,
    endpoints: Sequence[Endpoint],
    *,
    duration: float,
    connections: Sequence[int] = CONNECTIONS,
    warmup: float = 2,
) -> list[Row]:
    """Each endpoint, then the ceiling, at each connection count, in one server run.

    Order per connection count: ceiling, the endpoints, ceiling again; an endpoint's ratio is to
    the mean of the two ceiling runs (the machine is shared: the two show how much it moved).
    Every endpoint is warmed up first (both gunicorn workers connected, code paths and plans
    warm). Raises SystemExit when a run has socket errors or a response >= 400.
    """
    for endpoint in (ceiling, *endpoints):
        _checked(
            endpoint,
            run(base_url, endpoint.source, connections=max(connections), duration=warmup, headers=endpoint.headers),
        )
    rows = []
    for count in connections:
        before = _checked(
            ceiling, run(base_url, ceiling.source, connections=count, duration=duration, headers=ceiling.headers)
        )
        results = [
            (
                endpoint,
                _checked(
                    endpoint,
                    run(base_url, endpoint.source, connections=count, duration=duration, headers=endpoint.headers),
                ),
            )
            for endpoint in endpoints
        ]
        after = _checked(
            ceiling, run(base_url, ceiling.source, connections=count, duration=duration, headers=ceiling.headers)
        )
        mean = (before.per_second + after.per_second) / 2
        rows.append(Row(f"{ceiling.name} (before)", before, mean))
        rows.extend(Row(endpoint.name, result, mean) for endpoint, result in results)
        rows.append(Row(f"{ceiling.name} (after)", after, mean))
    return rows


def _checked(endpoint: Endpoint, result: Result) -> Result:
    if not result.ok:
        raise SystemExit(f"{endpoint.name}: {result.summary()}")
    return result


def print_rows(rows: Sequence[Row]) -> None:
    print(f"   {'endpoint':<44} {'conns':>5} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'ratio':>6}")
    for row in rows:
        r = row.result
        print(
            f"   {row.endpoint:<44} {r.connections:>5} {r.per_second:>7.0f} {r.p50_ms:>7.1f} {r.p99_ms:>7.1f}"
            f" {row.ratio:>6.2f}"
        )


def verdict(label: str, value: float, target: float) -> bool:
    """Print one target's PASS/FAIL line; True when it is met (value >= target)."""
    met = value >= target
    print(f"   {'PASS' if met else 'FAIL'}: {label}: {value:.2f} (target >= {target:g})")
    return met
