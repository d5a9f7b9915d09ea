"""The feedback app's decision records: every feedback event, and each end user's current vote.

Writers and readers as in `diagnosis.services.decision_records` (composed by `backoffice.decisions`).
Events are stored as they are, not voted again: importing a `useful` event opens no case and a
`not_useful` one no bad case (those travel as records of their own).
"""

from collections.abc import Iterator
from typing import Any

from core.tenancy.models import Project, ProjectAPIKey
from diagnosis.models import Feedback
from diagnosis.services.export import instant_text
from diagnosis.services.records import Record, References, username_of
from feedback.models import EndUserVote, FeedbackClient, FeedbackEvent


def feedback_event_records(*, project: Project | None = None) -> Iterator[dict[str, Any]]:
    events = FeedbackEvent.objects.select_related("session__project", "api_key", "user")
    if project is not None:
        events = events.filter(session__project=project)
    for event in events.order_by("created_at", "pk").iterator(chunk_size=500):
        yield {
            "project": event.session.project.slug,
            "sessionId": event.session.session_id,
            "value": event.value,
            "comment": event.comment,
            "reviewer": event.reviewer,
            "client": event.client,
            # A key is a secret of its database: the record names it, the import links a key of that name.
            "apiKey": event.api_key.name if event.api_key is not None else None,
            "user": username_of(event.user),
            "endUserId": event.end_user_id,
            "createdAt": instant_text(event.created_at),
        }


def feedback_event_store(*, record: Record, references: References) -> bool:
    """An event is found by (session, createdAt, value, client, endUserId), else added.

    `apiKey` links the session's project key of that name, or none when the project has no such key.
    """
    session = references.session(record)
    created_at = record.instant("createdAt")
    key_name = record.optional_text("apiKey", max_length=50)
    values = {
        "value": record.choice("value", Feedback),
        "comment": record.text("comment"),
        "reviewer": record.text("reviewer", max_length=150),
        "client": record.choice("client", FeedbackClient),
        "api_key_id": None
        if key_name is None
        else ProjectAPIKey.objects.filter(project_id=session.project_id, name=key_name)
        .order_by("created")
        .values_list("pk", flat=True)
        .first(),
        "user_id": None if (user := references.user(record, "user")) is None else user.pk,
        "end_user_id": record.text("endUserId", max_length=128),
    }
    rows = FeedbackEvent.objects.filter(
        session_id=session.pk,
        created_at=created_at,
        value=values["value"],
        client=values["client"],
        end_user_id=values["end_user_id"],
    )
    current = rows.values(*values).first()
    if current == values:
        return False
    references.trace_changed(session.pk)  # the trace lists the session's events
    if current is None:
        rows = FeedbackEvent.objects.filter(pk=FeedbackEvent.objects.create(session_id=session.pk, **values).pk)
    rows.update(created_at=created_at, **values)  # created_at is auto_now_add: set it after the insert
    return True


def end_user_vote_records(*, project: Project | None = None) -> Iterator[dict[str, Any]]:
    votes = EndUserVote.objects.select_related("session__project")
    if project is not None:
        votes = votes.filter(session__project=project)
    order = ("session__created_at", "session__project__slug", "session__session_id", "end_user_id")
    for vote in votes.order_by(*order).iterator(chunk_size=500):
        yield {
            "project": vote.session.project.slug,
            "sessionId": vote.session.session_id,
            "endUserId": vote.end_user_id,
            "value": vote.value,
            "updatedAt": instant_text(vote.updated_at),
        }


def end_user_vote_store(*, record: Record, references: References) -> bool:
    """The end user's vote on the session (one per end user), created or set to the record's."""
    session = references.session(record)
    end_user_id = record.text("endUserId", max_length=128)
    values = {"value": record.choice("value", Feedback), "updated_at": record.instant("updatedAt")}
    rows = EndUserVote.objects.filter(session_id=session.pk, end_user_id=end_user_id)
    current = rows.values(*values).first()
    if current == values:
        return False
    # The trace does not show the vote, but a vote writes it under the session's row lock: taken first
    # here too, so an import and a vote never wait on each other's rows in opposite orders.
    references.trace_changed(session.pk)
    if current is None:
        EndUserVote.objects.create(session_id=session.pk, end_user_id=end_user_id, **values)
    rows.update(**values)  # updated_at is auto_now: set it after the write
    return True
