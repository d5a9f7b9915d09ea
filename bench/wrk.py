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
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bench.common import CpuReading

WRK_THREADS = 1  # the load generator's share of the 2 cores: one
CONNECTIONS = (16, 64)
SETTLE_SECONDS = 1.0  # the pause after a run, without a CpuReading to tell when the server is idle
SETTLE_MAX_SECONDS = 30.0
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
    this thread's requests: e.g. a new sessionId per request. Every marker of a body gets the same
    id: a batch of several new sessions writes "<marker>-0", "<marker>-1", ..."""

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
    ceiling: float  # req/s of the ceiling view over the same rounds
    server_cpu_ms: float | None = None  # per request, of the gunicorn processes
    postgres_cpu_ms: float | None = None  # per request, of the database's PostgreSQL backends

    @property
    def ratio(self) -> float:
        return self.result.per_second / self.ceiling if self.ceiling else 0.0


def combined(results: Sequence[Result]) -> Result:
    """Several runs as one: requests and seconds summed, the median p50 / p90, the worst p99 / max."""
    return Result(
        connections=results[0].connections,
        requests=sum(r.requests for r in results),
        seconds=sum(r.seconds for r in results),
        socket_errors=sum(r.socket_errors for r in results),
        bad_status=sum(r.bad_status for r in results),
        p50_ms=statistics.median(r.p50_ms for r in results),
        p90_ms=statistics.median(r.p90_ms for r in results),
        p99_ms=max(r.p99_ms for r in results),
        max_ms=max(r.max_ms for r in results),
        mean_ms=sum(r.mean_ms * r.requests for r in results) / max(1, sum(r.requests for r in results)),
    )


def against_ceiling(
    base_url: str,
    ceiling: Endpoint,
    endpoints: Sequence[Endpoint],
    *,
    duration: float,
    connections: Sequence[int] = CONNECTIONS,
    rounds: int = 3,
    warmup: float = 3,
    cpu: Callable[[], CpuReading] | None = None,
) -> list[Row]:
    """The ceiling and each endpoint at each connection count, in one server run, as ratios.

    The machine is shared, so the load moves under a benchmark: each connection count runs
    `rounds` rounds of (ceiling, endpoint, endpoint, ...), each run `duration / rounds` seconds
    and followed by a pause, and an endpoint's ratio is its requests/s over all its rounds to the
    ceiling's over the same rounds. Every endpoint is warmed up first (both gunicorn workers
    connected, code paths and plans warm). With `cpu` (a CpuReading of the server and its
    database), each row also gives the CPU time per request. Raises SystemExit when a run has
    socket errors or a response >= 400, or an endpoint got no answer in all its rounds.
    """
    for endpoint in (ceiling, *endpoints):
        warm = run(base_url, endpoint.source, connections=min(connections), duration=warmup, headers=endpoint.headers)
        if warm.bad_status:  # a wrong request fails now; a slow start (no request done yet) is no error
            raise SystemExit(f"{endpoint.name} (warm-up): {warm.summary()}")
    slice_seconds = max(1.0, duration / rounds)
    rows = []
    for count in connections:
        runs: dict[str, list[Result]] = {endpoint.name: [] for endpoint in (ceiling, *endpoints)}
        used = dict.fromkeys(runs, (0.0, 0.0))
        for _ in range(rounds):
            for endpoint in (ceiling, *endpoints):
                before = cpu() if cpu else None
                result = run(
                    base_url, endpoint.source, connections=count, duration=slice_seconds, headers=endpoint.headers
                )
                settle(cpu)  # this run's backlog is counted here, not in the next run
                if before is not None:
                    server, postgres = cpu().since(before)
                    used[endpoint.name] = (used[endpoint.name][0] + server, used[endpoint.name][1] + postgres)
                if result.socket_errors or result.bad_status:
                    raise SystemExit(f"{endpoint.name}: {result.summary()}")
                runs[endpoint.name].append(result)
        results = {name: _checked(name, combined(results)) for name, results in runs.items()}
        rate = results[ceiling.name].per_second
        for name, result in results.items():
            server, postgres = (seconds * 1000 / result.requests for seconds in used[name])
            rows.append(Row(name, result, rate, server if cpu else None, postgres if cpu else None))
    return rows


def settle(cpu: Callable[[], CpuReading] | None = None) -> None:
    """Wait until the server has answered what it received before wrk stopped (wrk stops sending,
    the server does not stop working): until the server and its database use less than 5 % of a
    core for 0.2 s (at most SETTLE_MAX_SECONDS), or SETTLE_SECONDS without `cpu`."""
    if cpu is None:
        time.sleep(SETTLE_SECONDS)
        return
    deadline = time.monotonic() + SETTLE_MAX_SECONDS
    last = cpu()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = cpu()
        if sum(now.since(last)) < 0.01:
            return
        last = now


def _checked(name: str, result: Result) -> Result:
    if not result.ok:
        raise SystemExit(f"{name}: {result.summary()}")
    return result


def print_rows(rows: Sequence[Row]) -> None:
    print(
        f"   {'endpoint':<44} {'conns':>5} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'ratio':>6}"
        f" {'CPU ms/req':>10} {'PgSQL':>6}"
    )
    for row in rows:
        r = row.result
        cpu = f" {row.server_cpu_ms:>10.2f} {row.postgres_cpu_ms:>6.2f}" if row.server_cpu_ms is not None else ""
        print(
            f"   {row.endpoint:<44} {r.connections:>5} {r.per_second:>7.0f} {r.p50_ms:>7.1f} {r.p99_ms:>7.1f}"
            f" {row.ratio:>6.2f}{cpu}"
        )
    print(
        "   ratio: requests/s to the ceiling's over the same rounds; p50: median of the rounds, p99: the worst;"
        " CPU ms/req: of the gunicorn processes, and of the database's PostgreSQL backends"
    )


def verdict(label: str, value: float, target: float) -> bool:
    """Print one target's PASS/FAIL line; True when it is met (value >= target)."""
    met = value >= target
    print(f"   {'PASS' if met else 'FAIL'}: {label}: {value:.2f} (target >= {target:g})")
    return met
