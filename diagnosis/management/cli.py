"""What the management commands share: a project by slug, instants on the command line, the progress bar,
reading lines from and writing them to a file or stdin / stdout."""

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from datetime import time as dt_time
from pathlib import Path
from typing import BinaryIO, TextIO

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from tqdm import tqdm

from core.tenancy.models import Project


def instant(value: str) -> datetime:
    """An argparse `type`: an ISO datetime, or a date meaning its midnight; naive means TIME_ZONE.

    A bad value is refused while the arguments are parsed (a CommandError under call_command).
    """
    try:
        parsed = parse_datetime(value)
        day = None if parsed else parse_date(value)
    except ValueError:  # well formed but impossible, e.g. 2026-02-30
        parsed = day = None
    if parsed is None:
        if day is None:
            raise argparse.ArgumentTypeError(f"{value!r} is neither a date (2026-11-29) nor an ISO datetime")
        parsed = datetime.combine(day, dt_time.min)
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)


def project_from_slug(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"unknown project {slug!r}")
    return project


def export_arguments(parser: argparse.ArgumentParser, *, by_time: bool = False) -> None:
    """The options every export shares: --project, --since / --until (with `by_time`), --output, --no-progress."""
    parser.add_argument("--project", help="project slug (default: every project)")
    if by_time:
        parser.add_argument("--since", type=instant, help="created at or after this date or ISO datetime")
        parser.add_argument("--until", type=instant, help="created before this date or ISO datetime")
    parser.add_argument(
        "--output", default="-", help="file to write (replaced when the export is complete); '-' for stdout"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (none without a terminal)")


def check_range(since: datetime | None, until: datetime | None) -> None:
    """Refuse an empty interval [since, until) rather than silently doing nothing."""
    if since is not None and until is not None and until <= since:
        raise CommandError(f"--until ({until.isoformat()}) must be later than --since ({since.isoformat()})")


class Progress:
    """A tqdm bar on the command's stderr, drawn only when stderr is a terminal and `enabled`.

    `write` prints a line to stderr above the bar, without tearing it (also when no bar is drawn).
    """

    def __init__(self, command: BaseCommand, *, unit: str, desc: str, enabled: bool = True, total: int | None = None):
        # The raw stream: Django's OutputWrapper would end every redraw of the bar with a newline.
        self._stream = command.stderr._out
        self.active = enabled and self._stream.isatty()
        self._bar = tqdm(
            total=total,
            unit=unit,
            unit_scale=unit == "B",
            desc=desc,
            file=self._stream,
            disable=not self.active,
            dynamic_ncols=True,
            mininterval=0.2,
        )

    def set_total(self, total: int) -> None:
        """The number of units to expect, for a total known only once the bar is shown (a COUNT)."""
        self._bar.total = total
        self._bar.refresh()

    def update(self, count: int = 1) -> None:
        self._bar.update(count)

    def write(self, message: str) -> None:
        tqdm.write(message, file=self._stream)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._bar.close()


@contextmanager
def read_lines(name: str) -> Iterator[tuple[BinaryIO, int | None]]:
    """The byte stream of the file `name` (stdin for '-') and its size (None for stdin)."""
    if name == "-":
        yield sys.stdin.buffer, None
        return
    path = Path(name)
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise CommandError(f"--input: cannot read {path}: {exc}") from exc
    with stream:
        yield stream, path.stat().st_size


def write_lines(lines: Iterable[str], *, output: str, stdout: TextIO, progress: Progress) -> int:
    """Write `lines` (each without its newline) to the file `output`, or to `stdout` for '-'; returns their number."""
    if output == "-":
        return _write(lines, stdout, progress)
    return _write_file(lines, Path(output), progress)


def _write(lines: Iterable[str], out: TextIO, progress: Progress) -> int:
    written = 0
    for line in lines:
        out.write(line + "\n")
        written += 1
        progress.update()
    return written


def _write_file(lines: Iterable[str], path: Path, progress: Progress) -> int:
    """Write a regular file through `<name>.partial` renamed at the end, so a failed export never leaves
    half a file; anything else that exists there (a device, a pipe) is written to directly."""
    target = path.resolve()  # a symlink keeps pointing at the file it names
    direct = target.exists() and not target.is_file()
    partial = target if direct else target.with_name(f"{target.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="\n") as out:
            written = _write(lines, out, progress)
        if not direct:
            os.replace(partial, target)
    except OSError as exc:
        raise CommandError(f"--output: cannot write {path}: {exc}") from exc
    finally:
        if not direct:
            partial.unlink(missing_ok=True)  # gone already once renamed
    return written
