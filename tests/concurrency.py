"""Real threads released together: what the concurrency tests race (each on its own connection)."""

import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.db import connection


def at_once(target: Callable[[Any], Any], items: Iterable[Any], *, timeout: float = 60) -> tuple[list, list]:
    """`target(item)` for every item, each in a thread of its own, all started past one barrier;
    every thread closes its database connection. Returns what the calls returned (in the order
    they finished) and what they raised."""
    items = list(items)
    barrier = threading.Barrier(len(items))
    results: list[Any] = []
    errors: list[BaseException] = []

    def run(item: Any) -> None:
        try:
            barrier.wait(timeout=10)
            results.append(target(item))
        except BaseException as exc:  # surfaced to the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(item,)) for item in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    return results, errors
