import json
from datetime import datetime, timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.tenancy.models import ProjectAPIKey
from diagnosis.models import DiagnosisSession, DiagnosisStep, EvidenceRef, ToolInvocation
from diagnosis.serializers import session_ingest_from_body
from diagnosis.services.evaluation import session_evaluation_record_failure
from diagnosis.services.ingestion import session_upsert
from diagnosis.services.rows import sha256_text
from tests import clock
from tests.concurrency import at_once
from tests.factories import aiops_payload, chat_payload, evaluated_session, session_ingest, with_invocations

pytestmark = pytest.mark.django_db

URL = "/api/sessions"


def post(client, payload, **extra):
    return client.post(URL, data=json.dumps(payload), content_type="application/json", **extra)


def test_chat_session_is_created_with_children(api, project):
    response = post(api, chat_payload())

    assert response.status_code == 201, response.content
    assert response.json()["sessionId"] == "s-20261129-0001"
    session = DiagnosisSession.objects.get(project=project, session_id="s-20261129-0001")
    assert session.mode == "chat"
    assert session.language == "zh"
    assert session.executor_output["claims"][0]["claimId"] == "c1"
    assert list(session.steps.values_list("index", flat=True)) == [0, 1]
    invocation = session.invocations.get()
    assert invocation.match_level == "L0"
    ref = EvidenceRef.objects.get(session=session, ref_id="inv-1#1")
    assert ref.invocation == invocation
    assert ref.content_sha256 == sha256_text(ref.content)


def test_aiops_session_keeps_alert_and_active_alerts(api, project):
    response = post(api, aiops_payload())

    assert response.status_code == 201, response.content
    session = DiagnosisSession.objects.get(session_id="a-20261129-0001")
    assert session.language == "en"
    assert session.alert_name == "HighErrorRate"
    assert session.alert_service == "order-service"
    assert session.active_alerts == [{"name": "DiskFull", "service": "log-agent", "severity": "", "labels": {}}]
    failed = session.invocations.get(invocation_id="inv-2")
    assert failed.status == "FAILED" and failed.error == "prometheus timeout" and failed.match_level == ""


def test_repost_replaces_children_without_duplicates(api, project):
    assert post(api, chat_payload()).status_code == 201
    payload = chat_payload(answer="new answer")
    payload["steps"] = [{"index": 0, "name": "only", "status": "SUCCEEDED"}]
    payload["toolInvocations"][0]["stepIndex"] = 0
    payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = "changed 连接池耗尽"

    response = post(api, payload)

    assert response.status_code == 200
    session = DiagnosisSession.objects.get()
    assert session.answer == "new answer"
    assert DiagnosisStep.objects.filter(session=session).count() == 1
    assert ToolInvocation.objects.count() == 1
    ref = EvidenceRef.objects.get()
    assert ref.content == "changed 连接池耗尽"
    assert ref.content_sha256 == sha256_text("changed 连接池耗尽")


def test_same_session_id_in_two_projects_is_two_sessions(api, other_api):
    assert post(api, chat_payload()).status_code == 201
    assert post(other_api, chat_payload()).status_code == 201
    assert DiagnosisSession.objects.count() == 2


def test_invalid_replacement_leaves_stored_session_untouched(api):
    post(api, chat_payload())
    bad = chat_payload(answer="half written")
    bad["toolInvocations"].append(dict(bad["toolInvocations"][0]))  # duplicate invocationId

    response = post(api, bad)

    assert response.status_code == 400
    session = DiagnosisSession.objects.get()
    assert session.answer.startswith("order-service")
    assert session.invocations.count() == 1


def test_legacy_self_evaluation_is_migrated_into_layers(api):
    payload = chat_payload(selfEvaluation={"evidence_score": 65, "verdict": "PASS", "groundedness_score": 0.8})
    payload["status"] = "RUNNING"

    assert post(api, payload).status_code == 201

    session = DiagnosisSession.objects.get()
    assert session.self_evaluation["rule_evaluation"]["evidence_score"] == 65
    assert "evidence_score" not in session.self_evaluation


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda p: p.pop("sessionId"), "sessionId"),
        (lambda p: p.update(sessionId="has space"), "sessionId"),
        (lambda p: p.update(sessionId="x" * 129), "sessionId"),
        (lambda p: p.update(mode="batch"), "mode"),
        (lambda p: p.update(status="DONE"), "status"),
        (lambda p: p.pop("query"), "query"),
        (lambda p: p.update(query=123), "query"),
        (lambda p: p.update(createdAt="yesterday"), "createdAt"),
        (lambda p: p.update(finishedAt=clock.iso(clock.ago(days=1))), "finishedAt"),  # before createdAt
        (lambda p: p.update(steps="plan"), "steps"),
        (lambda p: p.update(steps=[{"index": -1, "name": "x", "status": "SUCCEEDED"}]), "steps.0.index"),
        (lambda p: p["toolInvocations"][0].update(status="OK"), "toolInvocations.0.status"),
        (lambda p: p["toolInvocations"][0].update(latencyMs="fast"), "toolInvocations.0.latencyMs"),
        (lambda p: p["toolInvocations"][0].update(stepIndex=9), "toolInvocations.0.stepIndex"),
        (
            lambda p: p["toolInvocations"][0]["retrievalDetails"].update(matchLevel="L2"),
            "toolInvocations.0.retrievalDetails.matchLevel",
        ),
        (
            lambda p: p["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0].update(refId="$.no_evidence"),
            "toolInvocations.0.retrievalDetails.evidenceRefs.0.refId",
        ),
        (lambda p: p.update(executorOutput=["claims"]), "executorOutput"),
        (lambda p: p.update(selfEvaluation="PASS"), "selfEvaluation"),
        (lambda p: p.update(alert={"service": "x"}), "alert.name"),
        (lambda p: p.update(activeAlerts={"name": "x"}), "activeAlerts"),
    ],
)
def test_invalid_field_is_named_in_400(api, mutate, field):
    payload = chat_payload()
    mutate(payload)

    response = post(api, payload)

    assert response.status_code == 400, response.content
    body = response.json()["error"]
    assert body["code"] == "invalid"
    assert field in body["fields"], body
    assert DiagnosisSession.objects.count() == 0


def test_text_is_trimmed_and_a_naive_instant_is_in_the_current_time_zone(api, project):
    payload = chat_payload(query="  why is checkout slow?\n", createdAt="2026-11-30T08:00:00", finishedAt=None)
    payload["toolInvocations"][0]["toolName"] = " search_logs "
    ref = payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]
    ref["content"] = "  kept as sent  "

    assert post(api, payload).status_code == 201, payload

    session = DiagnosisSession.objects.get()
    assert session.query == "why is checkout slow?"
    assert session.created_at == datetime(2026, 11, 30, 8, tzinfo=timezone.get_current_timezone())
    assert session.invocations.get(position=0).tool_name == "search_logs"
    assert EvidenceRef.objects.get(ref_id=ref["refId"]).content == "  kept as sent  "


def test_malformed_json_is_400(api):
    response = api.post(URL, data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_body_over_limit_is_413(api, settings):
    settings.SELFEVAL_MAX_BODY_BYTES = 1000
    payload = chat_payload(answer="x" * 2000)

    response = post(api, payload)

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "payload_too_large"


def test_anonymous_gets_401(anonymous):
    assert post(anonymous, chat_payload()).status_code == 401
    assert anonymous.get(URL).status_code == 401
    assert anonymous.get(f"{URL}/s-20261129-0001").status_code == 401


def test_bad_key_gets_401(client_for, project):
    response = post(client_for("nope.nope"), chat_payload())
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Api-Key"


def test_revoked_key_stops_working_at_once(api, api_key):
    assert api.get(URL).status_code == 200
    ProjectAPIKey.objects.update(revoked=True)
    assert api.get(URL).status_code == 401


def test_staff_cannot_ingest_without_a_project_key(staff_api):
    assert post(staff_api, chat_payload()).status_code == 403


def test_non_staff_session_user_is_refused(outsider):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(outsider)
    assert client.get(URL).status_code == 403


def test_other_projects_session_is_404_not_403(api, other_api):
    post(api, chat_payload())

    assert other_api.get(f"{URL}/s-20261129-0001").status_code == 404
    assert other_api.get(URL).json()["results"] == []


def test_unknown_session_is_404(api):
    response = api.get(f"{URL}/missing")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_detail_returns_children_in_order(api):
    post(api, aiops_payload())

    body = api.get(f"{URL}/a-20261129-0001").json()

    assert [inv["invocationId"] for inv in body["toolInvocations"]] == ["inv-1", "inv-2"]
    assert body["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["refId"] == "inv-1#1"
    assert body["toolInvocations"][1]["retrievalDetails"] is None
    assert body["alert"]["name"] == "HighErrorRate"


def test_staff_sees_every_project(api, other_api, staff_api):
    post(api, chat_payload(sessionId="one"))
    post(other_api, chat_payload(sessionId="two"))

    ids = {row["sessionId"] for row in staff_api.get(URL).json()["results"]}

    assert ids == {"one", "two"}


def test_list_filters(api):
    post(api, chat_payload(sessionId="chat-ok"))
    post(api, aiops_payload(sessionId="aiops-ok"))
    post(api, chat_payload(sessionId="chat-failed", status="FAILED"))

    def ids(query):
        response = api.get(URL + query)
        assert response.status_code == 200, response.content
        return {row["sessionId"] for row in response.json()["results"]}

    assert ids("?mode=aiops") == {"aiops-ok"}
    assert ids("?status=FAILED") == {"chat-failed"}
    assert ids("?feedback=null") == {"chat-ok", "aiops-ok", "chat-failed"}
    # chat payloads start 4 h before now, AIOps payloads 3 h before.
    assert ids(f"?createdAfter={clock.iso(clock.ago(hours=3, minutes=30))}") == {"aiops-ok"}
    assert api.get(URL + "?mode=batch").status_code == 400
    assert api.get(URL + "?evidenceScoreMin=abc").status_code == 400


def test_list_is_cursor_paginated(api):
    for i in range(5):
        post(api, chat_payload(sessionId=f"s-{i}", createdAt=clock.iso(clock.ago(minutes=10 - i)), finishedAt=None))

    first = api.get(URL + "?pageSize=2").json()
    second = api.get(first["next"]).json()

    assert [r["sessionId"] for r in first["results"]] == ["s-4", "s-3"]
    assert [r["sessionId"] for r in second["results"]] == ["s-2", "s-1"]


@pytest.mark.parametrize("count", [1, 25])
def test_ingestion_query_count_is_independent_of_invocations(api, settings, count):
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    post(api, with_invocations(chat_payload(), count))  # first create, then measure a replace

    with CaptureQueriesContext(connection) as replace:
        assert post(api, with_invocations(chat_payload(), count)).status_code == 200
    with CaptureQueriesContext(connection) as create:
        assert post(api, with_invocations(chat_payload(sessionId="fresh"), count)).status_code == 201

    # savepoints, lock/create, deletes, bulk inserts: the same for 1 or 25 calls (the key is cached)
    assert len(replace) == EXPECTED_REPLACE_QUERIES, [q["sql"][:80] for q in replace.captured_queries]
    assert len(create) == EXPECTED_CREATE_QUERIES, [q["sql"][:80] for q in create.captured_queries]


# ... + the day's change mark (one insert)
EXPECTED_REPLACE_QUERIES = 10
EXPECTED_CREATE_QUERIES = 8


@pytest.mark.parametrize("rows", [1, 30])
def test_list_query_count_is_independent_of_rows(api, django_assert_num_queries, rows):
    for i in range(rows):
        post(api, chat_payload(sessionId=f"s-{i}"))
    with django_assert_num_queries(1):  # the page (the key is cached)
        assert api.get(URL).status_code == 200


def test_detail_query_count_is_independent_of_invocations(api, django_assert_num_queries):
    post(api, with_invocations(chat_payload(), 20))
    with django_assert_num_queries(4):  # session, steps, invocations, refs (the key is cached)
        assert api.get(f"{URL}/s-20261129-0001").status_code == 200


def test_other_projects_post_with_the_same_session_id_leaves_this_one_untouched(api, other_api, project):
    post(api, chat_payload(answer="mine"))
    assert post(other_api, chat_payload(answer="theirs")).status_code == 201

    mine = DiagnosisSession.objects.get(project=project)
    assert mine.answer == "mine"
    assert api.get(f"{URL}/s-20261129-0001").json()["answer"] == "mine"


def test_key_cannot_reach_another_project_through_the_project_parameter(api, other_api):
    post(other_api, chat_payload(sessionId="theirs"))

    assert api.get(f"{URL}/theirs?project=acme-aiops").status_code == 404
    assert api.get(URL + "?project=acme-aiops").json()["results"] == []


@pytest.mark.parametrize(
    "method, path",
    [
        ("put", f"{URL}/s-20261129-0001"),
        ("patch", f"{URL}/s-20261129-0001"),
        ("delete", f"{URL}/s-20261129-0001"),
        ("delete", URL),
        ("put", URL),
    ],
)
def test_unsupported_methods_are_405_and_change_nothing(api, method, path):
    post(api, chat_payload())

    response = getattr(api, method)(path, data=json.dumps(chat_payload(answer="x")), content_type="application/json")

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert DiagnosisSession.objects.get().answer == chat_payload()["answer"]


def day(n: int) -> datetime:
    """Noon of day n of a 30-day window that ends with the test clock's today."""
    return clock.ago(days=30 - n)


def test_list_filters_on_the_evaluation_columns(api, project, staff_api, other_api):
    # Evidence scores by the rule table: L0 hit 65, L1 hit 50, no hit 20.
    evaluated_session(project, "pass", created_at=day(14))
    evaluated_session(
        project, "reject", verdict="REJECT", excerpt="错误率升至 99%", match_level="NONE", created_at=day(16)
    )
    evaluated_session(
        project,
        "aiops-fail",
        mode="aiops",
        aiops_failure="unrelated_alerts_not_main_object",
        match_level="L1",
        created_at=day(20),
    )
    post(api, chat_payload(sessionId="pending", createdAt=clock.iso(day(17))))
    failed = session_ingest(project, chat_payload(sessionId="failed", createdAt=clock.iso(day(21))))
    for _attempt in range(settings.SELFEVAL_EVALUATION_MAX_ATTEMPTS):
        session_evaluation_record_failure(session_pk=failed.pk, error="RuntimeError: judge unavailable")
    post(other_api, chat_payload(sessionId="elsewhere"))

    def ids(client, query):
        response = client.get(URL + query)
        assert response.status_code == 200, response.content
        return {row["sessionId"] for row in response.json()["results"]}

    assert ids(api, "?verifierVerdict=REJECT") == {"reject"}
    assert ids(api, "?aiopsVerdict=FAIL") == {"aiops-fail"}
    assert ids(api, "?evidenceScoreMin=50") == {"pass", "aiops-fail"}
    assert ids(api, "?evidenceScoreMax=50") == {"reject", "aiops-fail"}
    assert ids(api, "?evidenceScoreMin=10&evidenceScoreMax=30") == {"reject"}
    assert ids(api, "?evaluationState=FAILED") == {"failed"}
    assert ids(api, "?evaluationState=PENDING") == {"pending"}
    assert ids(api, "?failureAttribution=RETRIEVAL_MISS") == {"reject"}
    assert ids(api, "?failureAttribution=UNSUPPORTED_REASONING") == {"aiops-fail"}
    # createdAt days (counted back from now, at noon): pass 14, reject 16, aiops-fail 20, pending 17
    assert ids(api, f"?createdBefore={clock.iso(day(17) - timedelta(hours=12))}") == {"pass", "reject"}
    between = f"?createdAfter={clock.iso(day(16) - timedelta(hours=12))}&createdBefore={clock.iso(day(18) - timedelta(hours=12))}"
    assert ids(api, between) == {"reject", "pending"}
    assert ids(staff_api, "?project=acme-aiops") == {"elsewhere"}
    for bad in ("?verifierVerdict=MAYBE", "?aiopsVerdict=OK", "?evaluationState=x", "?createdBefore=yesterday"):
        response = api.get(URL + bad)
        assert response.status_code == 400, bad
        assert response.json()["error"]["fields"], bad


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_posts_of_one_new_session_id_create_it_once_and_replace_it(project, settings):
    """Concurrent posts of one new sessionId: the INSERTs wait on its unique key, each but the first
    is refused and its retry replaces the stored session, under its row lock; every request
    answers, one 201, the others 200, and one payload's children are stored, never a mix."""
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    payloads = [with_invocations(chat_payload(sessionId="s-race", answer=f"answer {n}"), 3 + n) for n in range(4)]
    parsed = [session_ingest_from_body(payload) for payload in payloads]

    created, errors = at_once(lambda data: session_upsert(project=project, data=data).created, parsed)

    assert not errors, errors
    assert sorted(created) == [False, False, False, True]
    session = DiagnosisSession.objects.get(session_id="s-race")
    assert session.trace_version == len(payloads)  # created once, replaced by each of the others
    stored = next(p for p in payloads if p["answer"] == session.answer)
    assert session.invocations.count() == len(stored["toolInvocations"])
