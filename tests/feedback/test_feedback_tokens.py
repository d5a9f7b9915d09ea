"""End users' browsers vote with a short-lived signed token bound to one session and one end user."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from cases.models import BadCase
from feedback.models import EndUserVote, FeedbackEvent
from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db


def token_url(session_id="s-20261129-0001"):
    return f"/api/sessions/{session_id}/feedback-token"


@pytest.fixture
def session(project):
    return make_session(project)


def issue(api, end_user="user-42", session_id="s-20261129-0001"):
    response = post_json(api, token_url(session_id), {"endUserId": end_user})
    assert response.status_code == 200, response.content
    return response.json()["token"]


def browser(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Feedback-Token {token}")
    return client


def vote(client, value="useful", session_id="s-20261129-0001"):
    return post_json(client, "/api/feedback", {"sessionId": session_id, "feedback": value})


def test_token_is_issued_with_expiry(api, session, settings):
    settings.SELFEVAL_FEEDBACK_TOKEN_TTL = 600
    response = post_json(api, token_url(), {"endUserId": "user-42"})

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"token", "expiresAt"}
    expires = parse_datetime(body["expiresAt"])
    assert timedelta(seconds=590) < expires - timezone.now() <= timedelta(seconds=600)


def test_token_vote_is_recorded_for_the_end_user(api, session):
    response = vote(browser(issue(api)))

    assert response.status_code == 200
    assert response.json()["success"] is True and response.json()["caseId"]
    event = FeedbackEvent.objects.get()
    assert (event.client, event.end_user_id, event.api_key) == ("token", "user-42", None)
    assert EndUserVote.objects.get().value == "useful"


def test_new_vote_replaces_the_end_users_previous_one_and_history_keeps_both(api, session):
    client = browser(issue(api))

    vote(client, "useful")
    vote(client, "not_useful")

    vote_row = EndUserVote.objects.get()
    assert (vote_row.end_user_id, vote_row.value) == ("user-42", "not_useful")
    assert list(FeedbackEvent.objects.order_by("id").values_list("value", flat=True)) == ["useful", "not_useful"]
    session.refresh_from_db()
    assert session.feedback == "not_useful"


def test_same_end_user_voting_not_useful_twice_counts_once_on_the_bad_case(api, session):
    client = browser(issue(api))
    vote(client, "not_useful")
    vote(client, "not_useful")
    vote(browser(issue(api, end_user="user-7")), "not_useful")

    assert BadCase.objects.get().feedback_count == 2
    assert EndUserVote.objects.count() == 2
    assert FeedbackEvent.objects.count() == 2


def test_replaying_a_token_with_the_same_vote_writes_nothing(api, session):
    client = browser(issue(api))
    case_id = vote(client).json()["caseId"]

    replies = [vote(client).json() for _ in range(5)]

    assert all(reply == {"success": True, "message": "反馈已记录", "caseId": case_id} for reply in replies)
    assert FeedbackEvent.objects.count() == 1
    assert vote(client, "not_useful").status_code == 200  # a changed vote is recorded
    assert list(FeedbackEvent.objects.order_by("id").values_list("value", flat=True)) == ["useful", "not_useful"]


def test_expired_token_is_401(api, session, settings):
    token = issue(api)
    settings.SELFEVAL_FEEDBACK_TOKEN_TTL = -1  # every token is now older than its lifetime

    response = vote(browser(token))

    assert response.status_code == 401
    assert response.json() == {"success": False, "message": "Feedback token has expired"}
    assert not FeedbackEvent.objects.exists()


def test_tampered_token_is_401(api, session):
    token = issue(api)
    payload, _, signature = token.partition(":")
    forged = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1] + ":" + signature

    for bad in (forged, token + "x", "garbage"):
        response = vote(browser(bad))
        assert response.status_code == 401, bad
        assert response.json()["message"] == "Feedback token is not valid"


def test_token_for_another_session_is_403(api, project, session):
    make_session(project, sessionId="s-other")
    token = issue(api, session_id="s-other")

    response = vote(browser(token))

    assert response.status_code == 403
    assert "another session" in response.json()["message"]
    session.refresh_from_db()
    assert session.feedback == ""


def test_token_of_a_replaced_session_row_is_403(api, project, session):
    token = issue(api)
    session.delete()
    make_session(project)  # same sessionId, new row

    assert vote(browser(token)).status_code == 403


def test_token_cannot_issue_tokens(api, session):
    response = post_json(browser(issue(api)), token_url(), {"endUserId": "x"})

    assert response.status_code in (401, 403)


def test_token_endpoint_needs_an_api_key(anonymous, staff_api, session):
    assert post_json(anonymous, token_url(), {"endUserId": "u"}).status_code == 401
    assert post_json(staff_api, token_url(), {"endUserId": "u"}).status_code == 403


def test_token_endpoint_unknown_or_other_projects_session_is_404(api, other_api, session):
    assert post_json(api, token_url("nope"), {"endUserId": "u"}).status_code == 404
    response = post_json(other_api, token_url(), {"endUserId": "u"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "body", [{}, {"endUserId": ""}, {"endUserId": 5}, {"endUserId": "a b"}, {"endUserId": "x" * 129}]
)
def test_token_endpoint_invalid_end_user_is_400(api, session, body):
    response = post_json(api, token_url(), body)

    assert response.status_code == 400
    assert "endUserId" in response.json()["error"]["fields"]


def test_token_endpoint_get_is_405(api, session):
    assert api.get(token_url()).status_code == 405


def test_token_issue_query_count(api, session, django_assert_num_queries):
    with django_assert_num_queries(2):  # API key, session
        issue(api)


def test_token_vote_query_count_with_existing_case(api, session, django_assert_num_queries):
    token = issue(api)
    vote(browser(token))  # the case exists from now on
    # savepoint, the session locked with its case id (its trace version moved), the end user's vote
    # (unchanged: nothing more), release
    with django_assert_num_queries(4):
        assert vote(browser(token)).status_code == 200
    # a changed vote: + the vote's update, the session's feedback, the event, the bad case (read, then its
    # insert in a savepoint of its own: concurrent reports race on its unique index, and the session's
    # trace version), the day's change mark
    with django_assert_num_queries(13):
        assert vote(browser(token), "not_useful").status_code == 200


def test_token_endpoint_key_cannot_reach_another_project_through_the_project_parameter(other_api, session):
    response = post_json(other_api, token_url() + "?project=acme-chat", {"endUserId": "u", "project": "acme-chat"})
    assert response.status_code == 404


def test_token_votes_on_its_own_projects_session_when_another_project_shares_the_session_id(
    other_api, other_project, session
):
    theirs = make_session(other_project)  # same sessionId as `session`, other project
    token = issue(other_api)

    assert vote(browser(token), "not_useful").status_code == 200

    theirs.refresh_from_db()
    session.refresh_from_db()
    assert (theirs.feedback, session.feedback) == ("not_useful", "")
    assert not BadCase.objects.filter(session=session).exists()
