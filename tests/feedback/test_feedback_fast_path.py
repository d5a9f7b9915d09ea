"""The one-statement path of `useful` feedback (API key, case already there) on PostgreSQL.

It must leave exactly what feedback_submit leaves: one event, the session's latest feedback,
the same case, nothing else of the session changed, and nothing at all when it does not apply.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from cases.models import Case
from diagnosis.models import DiagnosisSession, ProjectAPIKey
from feedback.models import FeedbackEvent
from feedback.services import feedback_submit_useful_known_case
from tests.factories import make_api_key
from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db

URL = "/api/feedback"


def vote(client, session_id="s-20261129-0001", value="useful", **extra_body):
    return post_json(client, URL, {"sessionId": session_id, "feedback": value, **extra_body})


@pytest.mark.postgres
@pytest.mark.parametrize("prepared", [True, False])
def test_repeated_useful_is_one_statement_with_the_same_outcome(
    api, project, settings, django_assert_num_queries, prepared
):
    settings.SELFEVAL_PREPARED_STATEMENTS = prepared
    session = make_session(project)
    case_id = vote(api).json()["caseId"]
    vote(api)  # a second run of the prepared statement on this connection
    vote(api, value="not_useful")

    with django_assert_num_queries(2):  # the API key, then the one statement
        response = vote(api, comment="准", reviewer="ops-li")

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "反馈已记录", "caseId": case_id}
    session.refresh_from_db()
    assert (session.feedback, session.status) == ("useful", "SUCCEEDED")
    # The newest row (ids follow the row lock); created_at is the database's clock here, not the test's.
    latest = FeedbackEvent.objects.filter(session=session).order_by("-id").first()
    assert (latest.value, latest.comment, latest.reviewer, latest.client) == ("useful", "准", "ops-li", "api_key")
    assert latest.api_key.project_id == project.pk and latest.user_id is None and latest.end_user_id == ""
    assert FeedbackEvent.objects.filter(session=session).count() == 4
    assert Case.objects.filter(session=session).count() == 1


@pytest.mark.postgres
def test_repeated_useful_leaves_the_session_row_unwritten(api, project):
    session = make_session(project)
    vote(api)  # first vote: creates the case and sets feedback

    def row_version() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT xmin::text FROM diagnosis_diagnosissession WHERE id = %s", [session.pk])
            return cursor.fetchone()[0]

    before = row_version()
    assert vote(api).status_code == 200
    assert row_version() == before  # no new row version, so no index entries rewritten
    assert FeedbackEvent.objects.filter(session=session).count() == 2

    vote(api, value="not_useful")
    assert vote(api).status_code == 200  # a changed value is written
    session.refresh_from_db()
    assert session.feedback == "useful"


@pytest.mark.postgres
def test_fast_path_writes_nothing_when_it_does_not_apply(project, other_project, api_key):
    key = ProjectAPIKey.objects.get(project=project)
    no_case = make_session(project)
    foreign = make_session(other_project)
    Case.objects.create(project=other_project, session=foreign, diagnosis_id=foreign.session_id, title="t", query="q")

    # no case yet; no such session; another project's session (with a case) through this key
    for session_id in (no_case.session_id, "unknown", foreign.session_id):
        assert feedback_submit_useful_known_case(project_id=project.pk, session_id=session_id, api_key=key) is None

    assert not FeedbackEvent.objects.exists()
    assert set(DiagnosisSession.objects.values_list("feedback", flat=True)) == {""}


@pytest.mark.postgres
def test_revoked_key_is_refused_on_the_fast_path(client_for, project):
    raw = make_api_key(project)
    client = client_for(raw)
    make_session(project)
    assert vote(client).status_code == 200
    ProjectAPIKey.objects.filter(project=project).update(revoked=True)

    response = vote(client)

    assert response.status_code == 401
    assert response.json()["success"] is False
    assert FeedbackEvent.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_fast_path_votes_each_leave_an_event_and_one_case(client_for, project):
    raw = make_api_key(project)
    session = make_session(project)
    case_id = vote(client_for(raw)).json()["caseId"]

    def submit(index):
        try:  # the last one of each kind decides nothing here: the row lock orders them all
            return vote(client_for(raw), value="useful" if index % 3 else "not_useful").status_code
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(submit, range(24)))

    assert statuses == [200] * 24
    assert FeedbackEvent.objects.count() == 25
    assert [str(pk) for pk in Case.objects.values_list("pk", flat=True)] == [case_id]
    # the session's feedback is the value of its latest event, in the order the row lock let them in
    latest = FeedbackEvent.objects.filter(session=session).order_by("-id").first()
    session.refresh_from_db()
    assert session.feedback == latest.value
