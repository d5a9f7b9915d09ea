"""POST /api/feedback: seed document 000's contract (section 7), every error, clients and the throttle."""

import pytest
from django.core.cache import cache
from django.utils.crypto import get_random_string
from rest_framework.test import APIClient

from cases.models import BadCase, Case
from core.api.throttling import ClientScopedRateThrottle
from diagnosis.models import DiagnosisSession
from feedback.models import FeedbackEvent
from tests.factories import UserFactory, chat_payload
from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db

URL = "/api/feedback"


@pytest.fixture
def session(project):
    return make_session(project)


def vote(client, session_id="s-20261129-0001", value="useful", **extra_body):
    return post_json(client, URL, {"sessionId": session_id, "feedback": value, **extra_body})


def test_useful_feedback_records_and_creates_case(api, session):
    response = vote(api, comment="精准", reviewer="ops-li")

    assert response.status_code == 200
    body = response.json()
    case = Case.objects.get()
    assert body == {"success": True, "message": "反馈已记录", "caseId": str(case.pk)}
    session.refresh_from_db()
    assert session.feedback == "useful"
    assert session.status == "SUCCEEDED"
    event = FeedbackEvent.objects.get()
    assert (event.value, event.comment, event.reviewer, event.client) == ("useful", "精准", "ops-li", "api_key")
    assert event.api_key is not None and event.api_key.project == session.project


def test_useful_feedback_reuses_case(api, session):
    first = vote(api).json()["caseId"]
    second = vote(api).json()["caseId"]

    assert first == second
    assert Case.objects.count() == 1
    assert FeedbackEvent.objects.count() == 2


def test_not_useful_opens_bad_case_and_keeps_status(api, session):
    response = vote(api, value="not_useful")

    assert response.status_code == 200
    assert response.json() == {"success": True, "message": "反馈已记录", "caseId": None}
    session.refresh_from_db()
    assert (session.feedback, session.status) == ("not_useful", "SUCCEEDED")
    bad_case = BadCase.objects.get()
    assert (bad_case.source, bad_case.status, bad_case.feedback_count) == ("feedback", "open", 1)
    assert not Case.objects.exists()


def test_repeated_not_useful_adds_to_the_open_bad_case(api, session):
    vote(api, value="not_useful")
    vote(api, value="not_useful")

    bad_case = BadCase.objects.get()
    assert bad_case.feedback_count == 2


def test_failed_session_status_is_not_changed_by_feedback(api, project):
    make_session(project, status="FAILED")

    vote(api, value="useful")

    assert DiagnosisSession.objects.get().status == "FAILED"


def test_session_feedback_holds_the_latest_value(api, session):
    vote(api, value="useful")
    vote(api, value="not_useful")

    session.refresh_from_db()
    assert session.feedback == "not_useful"
    assert list(FeedbackEvent.objects.order_by("id").values_list("value", flat=True)) == ["useful", "not_useful"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"sessionId": "s-20261129-0001", "feedback": "meh"}, "feedback: 'meh' is not one of"),
        ({"sessionId": "s-20261129-0001", "feedback": "USEFUL"}, "feedback"),
        ({"sessionId": "s-20261129-0001", "feedback": True}, "feedback"),
        ({"sessionId": "s-20261129-0001"}, "feedback: This field is required"),
        ({"feedback": "useful"}, "sessionId: This field is required"),
        ({"sessionId": 42, "feedback": "useful"}, "sessionId"),
        ({"sessionId": "s-20261129-0001", "feedback": "useful", "comment": ["x"]}, "comment"),
        ({"sessionId": "s-20261129-0001", "feedback": "useful", "reviewer": 7}, "reviewer"),
        (["useful"], "Expected a dictionary"),
    ],
)
def test_invalid_body_is_400_naming_the_problem(api, session, body, named):
    response = post_json(api, URL, body)

    assert response.status_code == 400
    assert response.json()["success"] is False
    assert named in response.json()["message"]
    assert not FeedbackEvent.objects.exists()
    session.refresh_from_db()
    assert session.feedback == ""


def test_malformed_json_is_400(api, session):
    response = api.post(URL, data='{"sessionId": ', content_type="application/json")

    assert response.status_code == 400
    assert response.json()["success"] is False
    assert "JSON parse error" in response.json()["message"]


def test_unknown_session_is_404(api, session):
    response = vote(api, session_id="nope")

    assert response.status_code == 404
    assert response.json() == {"success": False, "message": "Session 'nope' not found"}


def test_other_projects_session_is_404_and_untouched(other_api, session):
    response = vote(other_api)

    assert response.status_code == 404
    assert response.json()["success"] is False
    session.refresh_from_db()
    assert session.feedback == ""


def test_anonymous_is_401(anonymous, session):
    response = vote(anonymous)

    assert response.status_code == 401
    assert response.json()["success"] is False
    assert response.headers["WWW-Authenticate"] == "Api-Key"


def test_invalid_api_key_is_401(client_for, session):
    response = vote(client_for("not-a-key"))

    assert response.status_code == 401
    assert "API key" in response.json()["message"]


def test_logged_in_non_staff_is_403(outsider, session):
    client = APIClient()
    client.force_authenticate(outsider)

    response = vote(client)

    assert response.status_code == 403
    assert response.json()["success"] is False


def test_get_is_405(api):
    response = api.get(URL)

    assert response.status_code == 405
    assert response.json()["success"] is False


def test_staff_session_needs_csrf_token(superuser, session):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(superuser)

    refused = vote(client)
    secret = get_random_string(32)
    client.cookies["csrftoken"] = secret  # what the admin's pages set; a browser echoes it in the header
    accepted = post_json(client, URL, {"sessionId": "s-20261129-0001", "feedback": "useful"}, HTTP_X_CSRFTOKEN=secret)

    assert refused.status_code == 403 and "CSRF" in refused.json()["message"]
    assert accepted.status_code == 200, accepted.json()
    event = FeedbackEvent.objects.get()
    assert (event.client, event.user) == ("admin", superuser)


def test_staff_must_name_the_project_when_session_id_is_ambiguous(staff_api, project, other_project):
    make_session(project)
    make_session(other_project)

    ambiguous = vote(staff_api)
    chosen = vote(staff_api, project="acme-aiops")

    assert ambiguous.status_code == 404 and "pass project" in ambiguous.json()["message"]
    assert chosen.status_code == 200
    assert DiagnosisSession.objects.get(project=other_project).feedback == "useful"
    assert DiagnosisSession.objects.get(project=project).feedback == ""


def test_api_key_cannot_reach_another_project_through_project_field(other_api, session):
    response = vote(other_api, project="acme-chat")

    assert response.status_code == 404


def test_throttle_answers_429_per_client(api, other_api, project, other_project, monkeypatch):
    make_session(project)
    make_session(other_project)
    monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, "feedback", "2/min")
    cache.clear()

    statuses = [vote(api).status_code for _ in range(3)]
    other = vote(other_api)

    assert statuses == [200, 200, 429]
    assert other.status_code == 200
    cache.clear()


def test_throttled_response_keeps_envelope(api, session, monkeypatch):
    monkeypatch.setitem(ClientScopedRateThrottle.THROTTLE_RATES, "feedback", "1/min")
    cache.clear()
    vote(api)

    response = vote(api)

    assert response.status_code == 429
    assert response.json()["success"] is False
    assert "throttled" in response.json()["message"].lower()
    cache.clear()


def test_useful_feedback_query_count_with_existing_case(api, session, django_assert_num_queries):
    vote(api)  # the case exists from now on, and the key is in the cache
    # The session's trace version moved (the event shows in the trace), which locks its row and returns
    # it with its case id, in one UPDATE ... RETURNING; the event (the value is unchanged: no more);
    # SAVEPOINT / RELEASE because the test runs inside a transaction (outside one they are BEGIN / COMMIT).
    with django_assert_num_queries(4):
        response = vote(api)
    assert response.status_code == 200


def test_feedback_for_aiops_session_extracts_case_from_sections(api, project):
    make_session(
        project,
        payload={
            **chat_payload(),
            "sessionId": "a-1",
            "mode": "aiops",
            "query": "Diagnose alert HighErrorRate on order-service",
            "answer": "## Root cause\nThe order-service database connection pool is exhausted.\n## Fix\nRaise the pool size.",
            "alert": {"name": "HighErrorRate", "service": "order-service"},
        },
    )

    case_id = vote(api, session_id="a-1").json()["caseId"]

    case = Case.objects.get(pk=case_id)
    assert case.root_cause == "The order-service database connection pool is exhausted."
    assert case.solution == "Raise the pool size."
    assert (case.fault_category, case.service, case.diagnosis_id) == ("DATABASE", "order-service", "a-1")


def test_reviewer_role_user_is_staff_and_may_vote(session, django_user_model):
    from django.contrib.auth.models import Group

    reviewer = UserFactory(username="bob")
    reviewer.groups.add(Group.objects.get(name="Reviewer"))
    client = APIClient()
    client.force_authenticate(reviewer)

    assert vote(client).status_code == 200
