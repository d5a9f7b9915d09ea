"""CompiledQuery (a SELECT, or an UPDATE ... RETURNING) and CompiledInsert: the ORM's SQL compiled once, the same
rows as the ORM's, on both databases."""

import pytest
from django.db.models import F, OuterRef, Subquery
from django.db.models.signals import post_save, pre_save

from cases.models import Case
from cases.services import case_create_from_session
from core.queries import CompiledInsert, CompiledQuery
from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackClient, FeedbackEvent
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db


def sessions(*, project_id: int | None, session_id: str):
    queryset = DiagnosisSession.objects.only("pk", "session_id", "created_at").annotate(
        case_id=Subquery(Case.objects.filter(session_id=OuterRef("pk")).values("pk")[:1])
    )
    if project_id is not None:
        queryset = queryset.filter(project_id=project_id)
    return queryset.filter(session_id=session_id).order_by()


def test_a_compiled_query_finds_what_the_queryset_finds(project, other_project):
    mine = make_session(project)
    theirs = make_session(other_project)
    case = case_create_from_session(session=mine)
    query = CompiledQuery(sessions)

    (found,) = query.fetch(project_id=project.pk, session_id=mine.session_id)
    both = query.fetch(project_id=None, session_id=mine.session_id)
    none = query.fetch(project_id=project.pk, session_id="nope")

    assert (found.pk, found.created_at, found.case_id) == (mine.pk, mine.created_at, case.pk)
    assert found.get_deferred_fields() >= {"answer", "query"}
    assert sorted(session.pk for session in both) == sorted([mine.pk, theirs.pk])
    assert none == []


def test_a_compiled_update_writes_the_rows_it_matches_and_returns_them(project, other_project):
    mine = make_session(project)
    theirs = make_session(other_project)
    case = case_create_from_session(session=mine)
    before = dict(DiagnosisSession.objects.values_list("pk", "trace_version"))
    query = CompiledQuery(sessions, update={"trace_version": F("trace_version") + 1})

    (found,) = query.fetch(project_id=project.pk, session_id=mine.session_id)
    both = query.fetch(project_id=None, session_id=mine.session_id)
    none = query.fetch(project_id=project.pk, session_id="nope")

    assert (found.pk, found.created_at, found.case_id) == (mine.pk, mine.created_at, case.pk)
    assert found.get_deferred_fields() >= {"answer", "query"}
    assert sorted(session.pk for session in both) == sorted([mine.pk, theirs.pk])
    assert none == []
    after = dict(DiagnosisSession.objects.values_list("pk", "trace_version"))
    assert (after[mine.pk] - before[mine.pk], after[theirs.pk] - before[theirs.pk]) == (2, 1)


def test_a_compiled_update_through_a_join_writes_only_the_rows_it_matches(project, other_project):
    mine = make_session(project)
    theirs = make_session(other_project)  # the same sessionId in another project
    query = CompiledQuery(
        lambda *, slug: DiagnosisSession.objects.only("pk").filter(project__slug=slug, session_id=mine.session_id),
        update={"trace_version": F("trace_version") + 1},
    )

    (found,) = query.fetch(slug=project.slug)

    assert found.pk == mine.pk
    versions = dict(DiagnosisSession.objects.values_list("pk", "trace_version"))
    assert (versions[mine.pk] - mine.trace_version, versions[theirs.pk] - theirs.trace_version) == (1, 0)


def test_a_compiled_update_refuses_a_locking_queryset(project):
    query = CompiledQuery(
        lambda *, session_id: DiagnosisSession.objects.select_for_update().filter(session_id=session_id),
        update={"trace_version": F("trace_version") + 1},
    )

    with pytest.raises(ValueError, match="select_for_update"):
        query.fetch(session_id="s-1")


def test_a_value_that_does_not_reach_the_sql_as_a_parameter_is_refused(project):
    query = CompiledQuery(lambda *, session_id: DiagnosisSession.objects.filter(session_id__contains=session_id))

    with pytest.raises(ValueError, match="session_id"):
        query.fetch(session_id="s-1")


def test_a_compiled_insert_stores_the_row_create_would(project):
    session = make_session(project)

    event = CompiledInsert(FeedbackEvent).create(session_id=session.pk, value="useful", client=FeedbackClient.API_KEY)

    stored = FeedbackEvent.objects.get()
    assert event.pk == stored.pk and not event._state.adding
    assert (stored.session_id, stored.value, stored.comment, stored.api_key_id) == (session.pk, "useful", "", None)
    assert stored.created_at == event.created_at is not None


def test_no_receiver_listens_to_the_saves_of_feedback_events():
    # The vote stores its event with CompiledInsert, which sends no model signal.
    assert not pre_save.has_listeners(FeedbackEvent)
    assert not post_save.has_listeners(FeedbackEvent)
