"""Idempotency-Key on POST /api/sessions and /api/sessions/batch, as on feedback: a replay answers
the first answer and re-runs nothing; the same key with another body is a 422."""

import json

import pytest

from core.api.models import IdempotencyRecord
from diagnosis.models import DiagnosisSession
from tests.factories import chat_payload

pytestmark = pytest.mark.django_db


def post(client, url, body, key, **extra):
    return client.post(url, data=json.dumps(body), content_type="application/json", HTTP_IDEMPOTENCY_KEY=key, **extra)


def test_a_replayed_session_post_answers_the_first_answer_and_stores_and_evaluates_nothing(
    api, django_capture_on_commit_callbacks
):
    payload = chat_payload(sessionId="s-1")
    with django_capture_on_commit_callbacks() as first_callbacks:
        first = post(api, "/api/sessions", payload, "k-1")
    stored = DiagnosisSession.objects.get(session_id="s-1")
    # The same meaning, another key order: still the same request.
    reordered = dict(reversed(list(payload.items())))

    with django_capture_on_commit_callbacks() as replay_callbacks:
        replay = post(api, "/api/sessions", reordered, '"k-1"')

    assert first.status_code == replay.status_code == 201
    assert replay.content == first.content
    assert len(first_callbacks) == 1 and replay_callbacks == []  # no second evaluation enqueued
    assert DiagnosisSession.objects.get(session_id="s-1").updated_at == stored.updated_at


def test_the_same_key_with_another_session_body_is_a_422_and_replaces_nothing(api):
    post(api, "/api/sessions", chat_payload(sessionId="s-1"), "k-1")

    response = post(api, "/api/sessions", chat_payload(sessionId="s-1", answer="another answer"), "k-1")

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "idempotency_key_reused"
    assert DiagnosisSession.objects.get(session_id="s-1").answer == chat_payload()["answer"]


def test_keys_are_per_api_key_and_a_refused_request_keeps_its_key_free(api, other_api):
    invalid = chat_payload(sessionId="s-1", status="DONE")

    assert post(api, "/api/sessions", invalid, "k-1").status_code == 400
    assert post(api, "/api/sessions", chat_payload(sessionId="s-1"), "k-1").status_code == 201
    assert post(other_api, "/api/sessions", chat_payload(sessionId="s-2"), "k-1").status_code == 201
    assert IdempotencyRecord.objects.count() == 2


def test_a_replayed_batch_answers_the_first_results_and_stores_nothing_again(api, django_capture_on_commit_callbacks):
    items = [chat_payload(sessionId="b-1"), chat_payload(sessionId="b-2", status="DONE")]
    with django_capture_on_commit_callbacks() as first_callbacks:
        first = post(api, "/api/sessions/batch", items, "batch-1")

    with django_capture_on_commit_callbacks() as replay_callbacks:
        replay = post(api, "/api/sessions/batch", items, "batch-1")
    other = post(api, "/api/sessions/batch", items[:1], "batch-1")

    assert first.status_code == replay.status_code == 200
    assert [r["status"] for r in first.json()["results"]] == ["created", "error"]
    assert replay.content == first.content
    assert len(first_callbacks) == 1 and replay_callbacks == []
    assert other.status_code == 422


def test_a_malformed_key_is_a_400_naming_the_header(api):
    response = post(api, "/api/sessions", chat_payload(), '"unterminated')

    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["error"]["fields"]
