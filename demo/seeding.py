"""Bulk insertion of generated demo sessions (the fast path; the API goes through session_upsert).

Each payload becomes the rows `session_upsert` would store, by the same mapping
(`diagnosis.services.rows.session_rows_from_payload`), written a thousand sessions at a time.
"""

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import msgspec
from django.db import connection, transaction
from rest_framework.exceptions import ValidationError

from demo.generator import DemoSession, demo_session_build
from demo.mirrored import plausible_evaluation
from demo.writers import RowWriter, as_aware, row_writer
from diagnosis.models import (
    DiagnosisSession,
    DiagnosisStep,
    EvidenceRef,
    Project,
    ToolInvocation,
)
from diagnosis.serializers import SessionIngest, session_ingest_from_body
from diagnosis.services.rows import session_rows_from_payload
from reporting.services.session_days import session_day_key, session_days_rebuild

DEFAULT_PROJECTS = ("acme-chat", "acme-aiops")
# From this many raw sessions on PostgreSQL, secondary indexes are dropped during the load and
# rebuilt after it: one sorted build is far cheaper than a million random index insertions.
DEFER_INDEXES_FROM = 100_000
_INDEXED_MODELS = (DiagnosisSession, ToolInvocation, EvidenceRef)
PROJECT_NAMES = {"acme-chat": "ACME chat agent", "acme-aiops": "ACME AIOps agent"}


class DemoDataError(ValueError):
    """A generated payload failed `session_ingest_from_body`: a bug in the generator."""


@dataclass
class SeedResult:
    created: int = 0
    skipped: int = 0
    seconds: float = 0.0
    created_pks: list[int] = field(default_factory=list)
    sessions: list[DemoSession] = field(default_factory=list)  # the created ones, when kept


def demo_projects_ensure(*, slugs: Iterable[str]) -> dict[str, Project]:
    projects = {}
    for slug in slugs:
        projects[slug], _ = Project.objects.get_or_create(
            slug=slug, defaults={"name": PROJECT_NAMES.get(slug, slug.replace("-", " ").title())}
        )
    return projects


def demo_sessions_seed(
    *,
    sessions: int,
    seed: int,
    now: datetime,
    days: int = 30,
    project_slugs: tuple[str, ...] = DEFAULT_PROJECTS,
    validate_below: int | None = None,
    mirrored: bool = False,
    batch_size: int = 1000,
    keep_sessions: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> SeedResult:
    """Insert demo sessions 0..sessions-1 of `seed`; sessions already stored are skipped.

    Payloads with an index below `validate_below` (all when None) go through
    `session_ingest_from_body` (every rule of the API) first; the first ones cycle through every scenario, so a sample
    of a thousand checks every shape the generator makes. `mirrored` fills the
    evaluation columns with plausible values instead of leaving them for the evaluation (the
    raw mode for large benchmarks). Each batch is one transaction: never a session without its
    children. `progress(done, total)` is called after each batch.
    """
    started = time.perf_counter()
    projects = demo_projects_ensure(slugs=project_slugs)
    writer = row_writer()
    result = SeedResult()
    defer = mirrored and connection.vendor == "postgresql" and sessions >= DEFER_INDEXES_FROM
    with _deferred_indexes(defer):
        _seed_batches(
            result=result,
            sessions=sessions,
            seed=seed,
            now=now,
            days=days,
            project_slugs=project_slugs,
            projects=projects,
            writer=writer,
            validate_below=validate_below,
            mirrored=mirrored,
            batch_size=batch_size,
            keep_sessions=keep_sessions,
            progress=progress,
        )
    if result.created:
        # The rows were written in bulk, past the services that keep the day rollups.
        session_days_rebuild(
            first=session_day_key(project_id=0, created_at=now - timedelta(days=days + 1))[1],
            last=session_day_key(project_id=0, created_at=now)[1],
        )
    if connection.vendor == "postgresql" and result.created >= 10_000:
        # Fresh statistics, so the admin's first queries on a big seed get sensible plans.
        with connection.cursor() as cursor:
            for model in _INDEXED_MODELS:
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
    result.seconds = time.perf_counter() - started
    return result


def _seed_batches(
    *,
    result: SeedResult,
    sessions: int,
    seed: int,
    now: datetime,
    days: int,
    project_slugs: tuple[str, ...],
    projects: dict[str, Project],
    writer: RowWriter,
    validate_below: int | None,
    mirrored: bool,
    batch_size: int,
    keep_sessions: bool,
    progress: Callable[[int, int], None] | None,
) -> None:
    for start in range(0, sessions, batch_size):
        batch = [
            demo_session_build(seed=seed, index=index, now=now, days=days, projects=project_slugs)
            for index in range(start, min(sessions, start + batch_size))
        ]
        fresh = _without_existing(batch, projects)
        result.skipped += len(batch) - len(fresh)
        for demo in fresh:
            if validate_below is None or demo.index < validate_below:
                _validate(demo)
        with transaction.atomic():
            pks = _insert(writer, fresh, projects, mirrored=mirrored, now=now)
        result.created += len(pks)
        result.created_pks.extend(pks)
        if keep_sessions:
            result.sessions.extend(fresh)
        if progress:
            progress(min(sessions, start + batch_size), sessions)


@contextmanager
def _deferred_indexes(enabled: bool) -> Iterator[None]:
    """Drop the models' Meta.indexes (not constraints) for a bulk load and rebuild them after.

    Rebuilt also when the load fails. Meant for the raw benchmark mode on a dedicated database:
    while the load runs, other readers of these tables go without those indexes.
    """
    if not enabled:
        yield
        return
    with connection.schema_editor() as editor:
        for model in _INDEXED_MODELS:
            for index in model._meta.indexes:
                editor.remove_index(model, index)
    try:
        with connection.cursor() as cursor:
            # Commits need not wait for the WAL flush during the load (a crash loses the last
            # batches, never consistency); faster index builds.
            cursor.execute("SET synchronous_commit TO off")
            cursor.execute("SET maintenance_work_mem TO '256MB'")
        yield
    finally:
        with connection.cursor() as cursor:
            # Inside an outer transaction (tests) deferred foreign-key checks must run first:
            # PostgreSQL refuses CREATE INDEX on a table with pending trigger events.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        with connection.schema_editor() as editor:
            for model in _INDEXED_MODELS:
                for index in model._meta.indexes:
                    editor.add_index(model, index)
        with connection.cursor() as cursor:
            cursor.execute("RESET synchronous_commit")
            cursor.execute("RESET maintenance_work_mem")


def _without_existing(batch: list[DemoSession], projects: dict[str, Project]) -> list[DemoSession]:
    existing = set(
        DiagnosisSession.objects.filter(
            project_id__in=[p.pk for p in projects.values()], session_id__in=[d.session_id for d in batch]
        ).values_list("project_id", "session_id")
    )
    return [d for d in batch if (projects[d.project_slug].pk, d.session_id) not in existing]


def _validate(demo: DemoSession) -> None:
    try:
        session_ingest_from_body(demo.payload)
    except ValidationError as error:
        raise DemoDataError(f"generated session {demo.session_id} is invalid: {error.detail}") from None


def _insert(
    writer: RowWriter, batch: list[DemoSession], projects: dict[str, Project], *, mirrored: bool, now: datetime
) -> list[int]:
    batch_rows, session_rows = [], []
    for demo in batch:
        payload = demo.payload
        # The generated payload as the Struct, without the API's checks across fields (only a
        # sample is validated): dates are text, taken to be in the current time zone when naive.
        rows = session_rows_from_payload(
            data=msgspec.convert(
                {**payload, "createdAt": as_aware(payload["createdAt"]), "finishedAt": as_aware(payload["finishedAt"])},
                SessionIngest,
            )
        )
        row = {"project_id": projects[demo.project_slug].pk, "session_id": rows.session_id, **rows.session}
        if mirrored:
            row.update(plausible_evaluation(demo, rows, now=now))
        batch_rows.append(rows)
        session_rows.append(row)
    session_pks = writer.insert(DiagnosisSession, session_rows)

    step_rows, invocation_rows, pending_refs = [], [], []
    for rows, session_pk in zip(batch_rows, session_pks, strict=True):
        step_rows.extend({"session_id": session_pk, **step} for step in rows.steps)
        invocation_rows.extend({"session_id": session_pk, **invocation} for invocation in rows.invocations)
        pending_refs.extend([{"session_id": session_pk, **ref} for ref in refs] for refs in rows.refs)
    writer.insert(DiagnosisStep, step_rows)
    invocation_pks = writer.insert(ToolInvocation, invocation_rows)
    writer.insert(
        EvidenceRef,
        [
            {"invocation_id": invocation_pk, **ref}
            for invocation_pk, refs in zip(invocation_pks, pending_refs, strict=True)
            for ref in refs
        ],
    )
    return session_pks
