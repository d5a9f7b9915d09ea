"""Letting old sessions go: `sessions_purge` deletes the sessions created before a cutoff with every
row that belongs to them, in batches, and keeps the sessions a person curated something from.

What belongs to a session is read from the model graph (`session_rows`): every model that reaches
the session through foreign keys that cascade, in whatever app (steps, invocations, refs, claim
checks and their ref links, AIOps checks, reviews, claim corrections, feedback events, end-user votes, triage
assignments, review locks), so a new child table is purged without a change here. This app may not
import the apps built on it, so it asks them which sessions must stay
(`diagnosis.signals.sessions_purging`; the cases app keeps every session a case or a bad case
points to). The day rollups stay exact the way every write keeps them: the purge sends
`figures_changed` with the days it empties, and the next read of those days recounts them.
"""

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from functools import cache

from django.db import models, transaction
from django.utils import timezone

from core.tenancy.models import Project
from diagnosis.models import DiagnosisSession, SessionReview
from diagnosis.signals import figures_changed, sessions_purging

PURGE_BATCH_SESSIONS = 1000


@dataclass(frozen=True)
class SessionRows:
    """A model whose rows belong to a session, and the lookup from it to the session's pk."""

    model: type[models.Model]
    lookup: str  # "session", "invocation__session", ...; "pk" for the sessions themselves


@dataclass
class PurgeReport:
    cutoff: dt.datetime  # sessions created before it were purged
    dry_run: bool
    # Model label -> rows deleted (with dry_run: that would be), one entry per `session_rows()`.
    removed: Counter[str]
    kept: int = 0  # sessions older than the cutoff that a receiver of `sessions_purging` kept


@cache
def session_rows() -> tuple[SessionRows, ...]:
    """The sessions and every model whose rows go with them (foreign keys that cascade, followed
    through the models they reach; each model once, by its shortest path)."""
    found = [SessionRows(DiagnosisSession, "pk")]
    seen: set[type[models.Model]] = {DiagnosisSession}
    queue: list[tuple[type[models.Model], str]] = [(DiagnosisSession, "")]
    while queue:
        parent, path = queue.pop(0)
        for relation in parent._meta.related_objects:
            # A many-to-many's through model is reached by its own foreign keys; a SET_NULL or
            # PROTECT row outlives the session and is not the session's to delete.
            if relation.many_to_many or relation.on_delete not in (models.CASCADE, models.DB_CASCADE):
                continue
            child = relation.related_model
            if child in seen:
                continue
            seen.add(child)
            lookup = f"{relation.field.name}__{path}" if path else relation.field.name
            found.append(SessionRows(child, lookup))
            queue.append((child, lookup))
    return tuple(found)


def sessions_purge(
    *,
    older_than_days: int,
    project: Project | None = None,
    dry_run: bool = False,
    batch_size: int = PURGE_BATCH_SESSIONS,
) -> PurgeReport:
    """Delete the sessions created more than `older_than_days` days ago (of `project`, else of every
    project) with every row of `session_rows()`, `batch_size` sessions per transaction. A session a
    receiver of `sessions_purging` keeps stays whole. With `dry_run`, count what would go and
    delete nothing.

    Each batch locks its sessions first (a vote or a review of one of them waits, then finds it
    gone), marks the days it changes and deletes: a constant number of statements per batch,
    whatever its size. Raises ValueError unless `older_than_days` and `batch_size` are positive.
    """
    if older_than_days < 1 or batch_size < 1:
        raise ValueError("older_than_days and batch_size must be at least 1")
    report = PurgeReport(
        cutoff=timezone.now() - dt.timedelta(days=older_than_days),
        dry_run=dry_run,
        removed=Counter(dict.fromkeys((belonging.model._meta.label for belonging in session_rows()), 0)),
    )
    old = DiagnosisSession.objects.filter(created_at__lt=report.cutoff).order_by("pk")
    if project is not None:
        old = old.filter(project=project)
    after = 0  # batches walk the primary key: kept sessions are not selected again
    while True:
        with transaction.atomic():
            batch = old.filter(pk__gt=after)
            if not dry_run:
                batch = batch.select_for_update()
            rows = batch.values_list("pk", "project_id", "created_at")[:batch_size]
            dated = {pk: (project_id, created_at) for pk, project_id, created_at in rows}
            if not dated:
                return report
            after = max(dated)
            answers = sessions_purging.send(sender=DiagnosisSession, session_pks=list(dated))
            kept = {pk for _receiver, pks in answers for pk in pks if pk in dated}
            report.kept += len(kept)
            doomed = [pk for pk in dated if pk not in kept]
            if not doomed:
                continue
            for belonging in session_rows():
                count = belonging.model._base_manager.filter(**{f"{belonging.lookup}__in": doomed}).count()
                report.removed[belonging.model._meta.label] += count
            if dry_run:
                continue
            # A session counts on its own day; a review of it also counts on the review's day.
            reviewed = SessionReview.objects.filter(session_id__in=doomed).values_list("session_id", "created_at")
            moments = [dated[pk] for pk in doomed] + [(dated[pk][0], at) for pk, at in reviewed]
            figures_changed.send(sender=DiagnosisSession, moments=moments)
            # The children cascade (in the database, or collected by Django); only the keys are read.
            DiagnosisSession.objects.filter(pk__in=doomed).only("pk").delete()
