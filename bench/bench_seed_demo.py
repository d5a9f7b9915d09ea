"""Demo data generation speed: `seed_demo` on SQLite and on PostgreSQL (throwaway databases).

BENCH_SEED_SIZES: comma-separated session counts (default 10000; try 10000,100000).
BENCH_SEED_BULK_ONLY_SIZE: also time `--bulk-only` (PostgreSQL, mirrored evaluation columns)
for this many sessions (default 0: skipped; the 1M admin benchmark uses 1000000).
Sessions are inserted without evaluation (`--no-evaluate`); evaluation speed is its own benchmark.
"""

import os
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import django_env, manage, print_header, throwaway_database  # noqa: E402

SIZES = [int(s) for s in os.environ.get("BENCH_SEED_SIZES", "10000").split(",") if s.strip()]
BULK_ONLY_SIZE = int(os.environ.get("BENCH_SEED_BULK_ONLY_SIZE", "0"))


def timed_seed(database: str, *args: str) -> str:
    manage(database, "migrate", "--noinput")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = manage(database, "seed_demo", "--seed", "1", *args, env=django_env(database, DEBUG="true"))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    created = re.search(r"(\d+) created", out)
    # The database server's own CPU is not included: on a shared machine wall time can exceed both.
    return (
        f"{created.group(1) if created else '?'} sessions in {wall:.1f}s wall, {cpu:.0f}s CPU in seed_demo "
        f"({out.splitlines()[0]})"
    )


def main() -> None:
    print_header("seed_demo speed (no evaluation; children: 2-4 steps, 0-3 invocations, 0-2 refs per session)")
    for size in SIZES:
        with tempfile.TemporaryDirectory() as directory:
            line = timed_seed(f"sqlite:///{directory}/seed.sqlite3", "--sessions", str(size), "--no-evaluate")
            print(f"   SQLite     {size:>8}: {line}", flush=True)
        with throwaway_database("seed") as database:
            line = timed_seed(database, "--sessions", str(size), "--no-evaluate")
            print(f"   PostgreSQL {size:>8}: {line}", flush=True)
    if BULK_ONLY_SIZE:
        with throwaway_database("seed_bulk") as database:
            line = timed_seed(database, "--sessions", str(BULK_ONLY_SIZE), "--bulk-only")
            print(f"   PostgreSQL --bulk-only {BULK_ONLY_SIZE:>8}: {line}", flush=True)


if __name__ == "__main__":
    main()
