"""export_sessions / import_sessions speed and memory on PostgreSQL (a throwaway database).

BENCH_TRANSFER_SIZES: comma-separated session counts (default 2000,10000). For each size the
sessions are made by `seed_demo --bulk-only` (children and evaluation columns included), exported,
imported into an empty second project (TASKS_BACKEND=dummy: ingestion only, no evaluation) and
exported again; the two files must be byte-identical. Peak RSS is the child process's own
(getrusage of the waited-for child), so export memory can be compared across sizes.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import PYTHON, ROOT, django_env, manage, print_header, throwaway_database  # noqa: E402

SIZES = [int(s) for s in os.environ.get("BENCH_TRANSFER_SIZES", "2000,10000").split(",") if s.strip()]


def timed(database: str, *args: str) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of one `manage.py` run in a child process of its own."""
    env = django_env(database, TASKS_BACKEND="dummy")
    with tempfile.TemporaryFile() as errors:
        started = time.perf_counter()
        process = subprocess.Popen(
            [PYTHON, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=errors
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            errors.seek(0)
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{errors.read().decode()[-3000:]}")
    return wall, usage.ru_maxrss // 1024


def main() -> None:
    print_header("export_sessions / import_sessions (PostgreSQL, --bulk-only demo sessions, no evaluation)")
    for size in SIZES:
        with throwaway_database("transfer") as database, tempfile.TemporaryDirectory() as directory:
            manage(database, "migrate", "--noinput")
            manage(database, "seed_demo", "--sessions", str(size), "--seed", "1", "--bulk-only", "--project", "source")
            manage(database, "create_api_key", "--project", "copy", "bench")  # creates the empty target project
            first, second = Path(directory) / "first.jsonl", Path(directory) / "second.jsonl"
            wall, rss = timed(database, "export_sessions", "--project", "source", "--output", str(first))
            megabytes = first.stat().st_size / 1e6
            print(
                f"   {size:>7} export: {wall:6.1f}s  {size / wall:6.0f} sessions/s  {megabytes:6.1f} MB  peak RSS {rss} MB"
            )
            wall, rss = timed(database, "import_sessions", "--project", "copy", "--input", str(first))
            print(f"   {size:>7} import: {wall:6.1f}s  {size / wall:6.0f} sessions/s  peak RSS {rss} MB")
            timed(database, "export_sessions", "--project", "copy", "--output", str(second))
            identical = first.read_bytes() == second.read_bytes()
            print(f"   {size:>7} export -> import -> export byte-identical: {identical}", flush=True)
            if not identical:
                raise SystemExit(1)


if __name__ == "__main__":
    main()
