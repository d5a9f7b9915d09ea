"""Run every bench/bench_*.py in turn (each prints its own figures); exit non-zero if one fails.

Usage: python bench/run_all.py [name-substring ...]   e.g. `python bench/run_all.py ingestion`
The benchmarks need PostgreSQL (BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres);
each creates a throwaway database and drops it afterwards.
"""

import subprocess
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(BENCH_DIR.glob("bench_*.py"))
    if argv:
        scripts = [s for s in scripts if any(word in s.stem for word in argv)]
    if not scripts:
        print("no benchmark matched", file=sys.stderr)
        return 2
    failed = []
    for script in scripts:
        print(f"\n######## {script.name} ########", flush=True)
        started = time.perf_counter()
        code = subprocess.call([sys.executable, str(script)], cwd=BENCH_DIR.parent)
        print(
            f"######## {script.name}: {'ok' if code == 0 else f'FAILED ({code})'} in {time.perf_counter() - started:.0f}s"
        )
        if code:
            failed.append(script.name)
    print(
        f"\n{len(scripts) - len(failed)}/{len(scripts)} benchmarks ran"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
