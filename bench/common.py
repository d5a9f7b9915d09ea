"""Helpers shared by the benchmarks: throwaway PostgreSQL databases, a gunicorn server, payloads.

Every benchmark runs against a database of its own that is dropped afterwards, so a run
never touches development data and leaves nothing behind. PostgreSQL is found through
BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres, trust auth). HTTP load
is wrk's, through bench/wrk.py.
"""

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
MAINTENANCE_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def database_url(name: str) -> str:
    parts = urlsplit(MAINTENANCE_URL)
    return urlunsplit(parts._replace(path=f"/{name}"))


@contextlib.contextmanager
def throwaway_database(prefix: str = "bench") -> Iterator[str]:
    """Create an empty PostgreSQL database, yield its DATABASE_URL, drop it afterwards."""
    name = f"selfeval_{prefix}_{secrets.token_hex(4)}"
    with psycopg.connect(MAINTENANCE_URL, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield database_url(name)
    finally:
        with psycopg.connect(MAINTENANCE_URL, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def django_env(database: str, **extra: str) -> dict[str, str]:
    """Environment for a manage.py or gunicorn child process against `database`."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.base",
        "DATABASE_URL": database,
        "DEBUG": "false",
        "SECRET_KEY": "bench-only-" + secrets.token_hex(16),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "PYTHONPATH": str(ROOT),
    }
    env.update(extra)
    return env


def manage(database: str, *args: str, env: dict[str, str] | None = None) -> str:
    """Run `manage.py <args>` against `database`; return its stdout (raises when it fails)."""
    completed = subprocess.run(
        [PYTHON, str(ROOT / "manage.py"), *args],
        env=env or django_env(database),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{completed.stderr[-3000:]}")
    return completed.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def gunicorn_server(
    database: str, *, workers: int = 2, threads: int = 4, env: dict[str, str] | None = None
) -> Iterator[str]:
    """Serve the project with gunicorn (gthread workers) on a free port; yield the base URL."""
    port = free_port()
    process = subprocess.Popen(
        [
            str(Path(PYTHON).parent / "gunicorn"),
            "config.wsgi:application",
            f"--bind=127.0.0.1:{port}",
            f"--workers={workers}",
            "--worker-class=gthread",
            f"--threads={threads}",
            "--log-level=warning",
        ],
        env=env or django_env(database),
        cwd=ROOT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {process.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not answer /healthz within 30 s")
            time.sleep(0.3)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), nearest-rank; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, round(q / 100 * len(ordered) + 0.5 - 1e-9))
    return ordered[min(len(ordered), rank) - 1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (0 for one that ended)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_pids(base_url: str) -> list[int]:
    """The gunicorn master and workers bound to `base_url`'s port."""
    bind = f"--bind={base_url.removeprefix('http://')}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if bind in (entry / "cmdline").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


@dataclass(frozen=True)
class CpuReading:
    """CPU used so far by the server's gunicorn processes and by each PostgreSQL backend of its
    database. Per request, steadier than requests/s on a shared machine."""

    server: float
    backends: dict[int, float]

    @classmethod
    def take(cls, database: str, base_url: str) -> "CpuReading":
        with psycopg.connect(database) as conn:
            pids = [
                row[0]
                for row in conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            ]
        return cls(sum(cpu_seconds(pid) for pid in server_pids(base_url)), {pid: cpu_seconds(pid) for pid in pids})

    def since(self, before: "CpuReading") -> tuple[float, float]:
        """(gunicorn, PostgreSQL) CPU seconds between `before` and this reading."""
        postgres = sum(cpu - before.backends.get(pid, 0.0) for pid, cpu in self.backends.items())
        return self.server - before.server, postgres


def print_header(title: str, **facts: Any) -> None:
    print(f"\n== {title} ==")
    for key, value in facts.items():
        print(f"   {key}: {value}")


def chat_session_payload(session_id: str, invocations: int) -> dict:
    """A chat session in the ingestion format: `invocations` retrieval calls of one ref each, up
    to 3 claims citing them."""
    calls = [
        {
            "invocationId": f"inv-{i}",
            "stepIndex": 1,
            "toolName": "lookup_knowledge" if i % 2 else "query_logs",
            "status": "SUCCESS",
            "arguments": {"query": "order-service 5xx", "page": i},
            "output": f"{i} chunk",
            "error": None,
            "latencyMs": 100 + i,
            "retrievalDetails": {
                "matchLevel": "L0" if i == 1 else "L1",
                "evidenceRefs": [
                    {
                        "refId": f"inv-{i}#1",
                        "source": f"kb://runbooks/order-5xx-{i}.md",
                        "content": f"第 {i} 段：当 order-service 的数据库连接池耗尽时，请求排队超时并返回 HTTP 503。"
                        "过去 10 分钟 59% 的请求等待连接超过 30 秒。",
                    }
                ],
            },
        }
        for i in range(1, invocations + 1)
    ]
    return {
        "sessionId": session_id,
        "mode": "chat",
        "query": "订单服务 5xx 突增，原因是什么？",
        "answer": "## 根因\norder-service 的数据库连接池耗尽。\n\n## 处理建议\n1. 扩大连接池",
        "status": "SUCCEEDED",
        "createdAt": "2026-11-29T08:00:00Z",
        "finishedAt": "2026-11-29T08:00:09Z",
        "activeAlerts": [],
        "steps": [
            {"index": 0, "name": "plan", "status": "SUCCEEDED", "detail": {}},
            {"index": 1, "name": "retrieve", "status": "SUCCEEDED", "detail": {}},
        ],
        "toolInvocations": calls,
        "executorOutput": {
            "version": "executor_evidence_v2",
            "claims": [
                {
                    "claimId": f"c{n}",
                    "text": "order-service 的数据库连接池耗尽",
                    "critical": True,
                    "evidence": [{"refId": f"inv-{n}#1", "excerpt": "连接池耗尽"}],
                }
                for n in range(1, min(3, invocations) + 1)
            ],
            "finalAnswer": "",
        },
    }
