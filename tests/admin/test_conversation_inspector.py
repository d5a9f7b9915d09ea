"""The inspector shows the session's conversation: every turn in order, links to the other turns,
this one marked; the agent's error of a failed run; no query for a session outside a conversation."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.factories import chat_payload, session_ingest
from tests.trace.test_conversation import QUESTIONS, three_turns, turn

pytestmark = pytest.mark.django_db


def inspector(client, session):
    return client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk]))


def test_the_inspector_lists_the_turns_and_links_to_the_others(reviewer_client, project, other_project):
    first, second, third = three_turns(project)
    session_ingest(other_project, chat_payload(sessionId="theirs", conversationId="conv-1", query="别的项目"))

    response = inspector(reviewer_client, second)

    assert response.status_code == 200
    page = response.content.decode()
    assert "Conversation conv-1: 3 turns" in page
    assert [session.session_id for session in response.context["inspection"].conversation] == [
        "turn-1",
        "turn-2",
        "turn-3",
    ]
    for other in (first, third):
        assert reverse("admin:diagnosis_diagnosissession_change", args=[other.pk]) in page
    assert (
        reverse("admin:diagnosis_diagnosissession_change", args=[second.pk])
        not in page.split("se-turns")[1].split("</ol>")[0]
    )
    assert 'aria-current="page"' in page and QUESTIONS[1] in page
    assert "别的项目" not in page


def test_turn_queries_are_escaped(reviewer_client, project):
    turn(project, 1)
    hostile = session_ingest(
        project, chat_payload(sessionId="turn-x", conversationId="conv-1", query="<script>alert(1)</script>")
    )

    page = inspector(reviewer_client, hostile).content.decode()

    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_conversation_is_translated(reviewer_client, project):
    first, *_ = three_turns(project)

    page = reviewer_client.get(
        reverse("admin:diagnosis_diagnosissession_change", args=[first.pk]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()

    assert "对话 conv-1：3 轮" in page and "(当前轮次)" in page


def test_a_failed_run_shows_the_agents_error(reviewer_client, project):
    failed = session_ingest(
        project, chat_payload(sessionId="s-failed", status="FAILED", error="TimeoutError: prometheus timeout")
    )

    page = inspector(reviewer_client, failed).content.decode()

    assert "The agent's run ended with an error: TimeoutError: prometheus timeout" in page


def test_a_turn_costs_one_query_more_than_a_session_outside_a_conversation(reviewer_client, project):
    alone = session_ingest(project, chat_payload(sessionId="alone"))
    first, *_ = three_turns(project)
    inspector(reviewer_client, alone)  # permissions and content types cached

    counts = []
    for session in (alone, first):
        with CaptureQueriesContext(connection) as captured:
            assert inspector(reviewer_client, session).status_code == 200
        counts.append(len(captured))

    assert counts[1] == counts[0] + 1
