"""The trace is served from a cached body named by the session's trace version; a stale trace is a bug.

Every service that writes what a trace shows writes here, through the real code, and the trace read
right after shows the write under a new ETag; an unchanged trace answers a matching If-None-Match
with a 304 and no body. So does import_decisions, for each kind of record: the session read, named
by the same version, with it."""

import copy
import json
from io import StringIO

import pytest
from django.core.management import call_command

from backoffice.decisions import decision_export_lines
from cases.models import Case
from cases.services import bad_case_record_miscitation, bad_case_update, case_approve, case_update
from core.tenancy.access import Access
from diagnosis.models import DiagnosisSession
from diagnosis.services.evaluation import (
    session_evaluate,
    session_evaluation_record_failure,
    session_evaluation_request,
)
from diagnosis.services.reviews import claim_correction_record
from diagnosis.services.transfer import session_export_lines, session_import_lines
from feedback.services import FeedbackSubmitter, feedback_submit
from tests import clock
from tests.factories import bad_case_of, chat_payload, feedback_of, review_of, session_ingest
from tests.trace.test_conversation import three_turns

pytestmark = pytest.mark.django_db

SESSION_ID = "s-20261129-0001"
URL = f"/api/trace/{SESSION_ID}"
SESSION_URL = f"/api/sessions/{SESSION_ID}"


class Reader:
    """Reads the trace as a client that keeps the last ETag and asks with it."""

    def __init__(self, api):
        self.api = api
        self.etag: str | None = None

    def changed(self, url: str = URL) -> dict:
        """The trace, which must have changed since the last read (a 200 and a new ETag)."""
        response = self.api.get(url, HTTP_IF_NONE_MATCH=self.etag or "")
        assert response.status_code == 200, "the write did not move the trace's version"
        assert response["ETag"] != self.etag
        self.etag = response["ETag"]
        return response.json()

    def unchanged(self, url: str = URL) -> None:
        response = self.api.get(url, HTTP_IF_NONE_MATCH=self.etag)
        assert response.status_code == 304 and response.content == b""
        assert response["ETag"] == self.etag


def test_every_write_the_trace_shows_moves_its_version(api, project, superuser):
    reader = Reader(api)
    payload = chat_payload()
    session = session_ingest(project, payload)
    body = reader.changed()
    assert (
        body["views"]["execution"]["evaluationState"] == "PENDING" and body["selfEvaluation"]["ruleEvaluation"] is None
    )
    reader.unchanged()

    session_evaluate(session_pk=session.pk)
    body = reader.changed()
    assert body["views"]["execution"]["evaluationState"] == "DONE"
    assert body["selfEvaluation"]["verifierEvaluation"]["claimChecks"][0]["verdict"] == "SUPPORTED"
    reader.unchanged()

    reposted = copy.deepcopy(payload)
    reposted["answer"] = "连接池已扩容，错误率回落。"
    reposted["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = (
        "连接池耗尽告警已触发，原因待查。"
    )
    session_ingest(project, reposted)
    body = reader.changed()
    assert body["session"]["answer"] == "连接池已扩容，错误率回落。"
    assert (
        body["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"]
        == "连接池耗尽告警已触发，原因待查。"
    )

    session_evaluation_request(session_pks=[session.pk])
    assert reader.changed()["views"]["execution"]["evaluationState"] == "PENDING"
    session_evaluation_record_failure(session_pk=session.pk, error="judge unreachable")
    assert "judge unreachable" in reader.changed()["session"]["evaluationError"]
    session_evaluate(session_pk=session.pk)
    assert reader.changed()["selfEvaluation"]["verifierEvaluation"]["round"] == 2

    feedback_of(session, "useful", comment="right pool")
    user = reader.changed()["views"]["user"]
    assert user["feedback"] == "useful" and user["feedbackHistory"][0]["comment"] == "right pool"
    assert user["case"]["status"] == "pending"
    feedback_of(session, "useful", comment="still right")  # the same value: one more event all the same
    assert [event["comment"] for event in reader.changed()["views"]["user"]["feedbackHistory"]] == [
        "still right",
        "right pool",
    ]

    case = session.cases.get()
    case_update(case=case, user=superuser, changes={"title": "连接池耗尽"})
    assert reader.changed()["views"]["user"]["case"]["title"] == "连接池耗尽"
    case_approve(case=case, user=superuser, note="checked")
    case_view = reader.changed()["views"]["user"]["case"]
    assert case_view["status"] == "approved" and case_view["reviewedAt"] is not None

    feedback_of(session, "not_useful")
    user = reader.changed()["views"]["user"]
    assert (user["feedback"], user["badCase"]["status"], user["badCase"]["feedbackCount"]) == ("not_useful", "open", 1)
    feedback_of(session, "not_useful")  # the open bad case counts one more report
    assert reader.changed()["views"]["user"]["badCase"]["feedbackCount"] == 2

    bad_case = session.bad_cases.get()
    bad_case_update(bad_case=bad_case, user=superuser, status="triaged", assignee=superuser)
    bad_view = reader.changed()["views"]["user"]["badCase"]
    assert (bad_view["status"], bad_view["assignee"]) == ("triaged", "alice")
    bad_case_record_miscitation(session=session, user=superuser, claim_id="c1", ref_id="inv-1#1")
    assert reader.changed()["views"]["user"]["badCase"]["category"] == "miscited_evidence"
    bad_case_update(bad_case=bad_case, user=superuser, status="fixed")
    assert reader.changed()["views"]["user"]["badCase"]["closedAt"] is not None

    # A review is not part of the trace: the cached body and its ETag stay.
    review_of(session, superuser, judgement="correct")
    reader.unchanged()


def import_decisions(lines: list[str], tmp_path) -> None:
    source = tmp_path / "decisions.jsonl"
    source.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    call_command("import_decisions", "--input", str(source), stdout=StringIO(), stderr=StringIO())


def decided_then_sessions_only(project, superuser) -> dict[str, list[str]]:
    """Every kind of decision on the session, made through the services and exported by kind; then the
    database holds only the session again, imported from its export, as before import_decisions."""
    session = session_ingest(project, chat_payload())
    session_evaluate(session_pk=session.pk)
    feedback_of(session, "useful", comment="right pool")
    case_approve(case=session.cases.get(), user=superuser, note="checked", changes={"title": "连接池耗尽"})
    feedback_of(session, "not_useful", comment="wrong pool")
    bad_case_update(bad_case=session.bad_cases.get(), user=superuser, status="triaged", assignee=superuser)
    end_user = FeedbackSubmitter(
        access=Access.to_project(project.pk),
        client="token",
        end_user_id="eu-7",
        session_pk=session.pk,
        session_id=SESSION_ID,
    )
    feedback_submit(submitter=end_user, session_id=SESSION_ID, value="not_useful")
    review_of(session, superuser, judgement="wrong")
    claim_correction_record(session=session, reviewer=superuser, claim_id="c1", verdict="UNSUPPORTED")
    by_kind: dict[str, list[str]] = {}
    for line in decision_export_lines():
        by_kind.setdefault(json.loads(line)["kind"], []).append(line)
    sessions = [line.encode() for line in session_export_lines(sessions=DiagnosisSession.objects.all())]
    Case.objects.all().delete()
    DiagnosisSession.objects.all().delete()
    assert all(outcome.created for outcome in session_import_lines(project=project, lines=sessions))
    return by_kind


def test_every_imported_decision_the_trace_shows_moves_its_version(api, project, superuser, tmp_path):
    by_kind = decided_then_sessions_only(project, superuser)
    trace, read = Reader(api), Reader(api)
    user = trace.changed()["views"]["user"]
    assert (user["feedback"], user["feedbackHistory"], user["case"], user["badCase"]) == (None, [], None, None)
    assert read.changed(SESSION_URL)["feedback"] is None

    # The trace and the session read are named by one version: every import below moves both or neither.
    import_decisions(by_kind["session_state"], tmp_path)
    assert trace.changed()["views"]["user"]["feedback"] == "not_useful"
    assert read.changed(SESSION_URL)["feedback"] == "not_useful"

    import_decisions(by_kind["feedback"], tmp_path)
    history = trace.changed()["views"]["user"]["feedbackHistory"]
    assert [(event["comment"], event["endUserId"]) for event in history] == [
        ("", "eu-7"),
        ("wrong pool", ""),
        ("right pool", ""),
    ]
    read.changed(SESSION_URL)

    # Not in the trace, but a vote writes it under the session's row lock and moves the version: so does this.
    import_decisions(by_kind["end_user_vote"], tmp_path)
    trace.changed()
    read.changed(SESSION_URL)

    import_decisions(by_kind["case"], tmp_path)
    case = trace.changed()["views"]["user"]["case"]
    assert (case["title"], case["status"]) == ("连接池耗尽", "approved")
    read.changed(SESSION_URL)

    import_decisions(by_kind["bad_case"], tmp_path)
    bad_case = trace.changed()["views"]["user"]["badCase"]
    assert (bad_case["status"], bad_case["assignee"], bad_case["feedbackCount"]) == ("triaged", "alice", 2)
    read.changed(SESSION_URL)

    # Reviews and claim corrections are in neither answer (as when a reviewer records them): both stay.
    import_decisions(by_kind["review"] + by_kind["claim_correction"], tmp_path)
    trace.unchanged()
    read.unchanged(SESSION_URL)


def test_an_imported_open_bad_case_in_place_of_the_verifiers_moves_the_version(api, project, tmp_path):
    """The untouched bad case the verifier opened is deleted for the record's open one: the trace shows it."""
    session = session_ingest(project, chat_payload())
    bad_case_of(session, source="verifier")
    trace = Reader(api)
    assert trace.changed()["views"]["user"]["badCase"]["source"] == "verifier"
    opened = clock.iso(clock.ago(hours=1))
    record = {
        "kind": "bad_case",
        "project": project.slug,
        "sessionId": SESSION_ID,
        "source": "feedback",
        "status": "open",
        "category": None,
        "assignee": None,
        "notes": "",
        "verifierVerdict": None,
        "feedbackCount": 1,
        "createdAt": opened,
        "updatedAt": opened,
        "closedAt": None,
    }

    import_decisions([json.dumps(record)], tmp_path)

    bad_case = trace.changed()["views"]["user"]["badCase"]
    assert (bad_case["source"], bad_case["feedbackCount"]) == ("feedback", 1)
    assert session.bad_cases.count() == 1


def test_a_turn_shows_what_changes_in_the_other_turns_of_its_conversation(api, project):
    turns = three_turns(project)
    reader = Reader(api)
    assert [turn["feedback"] for turn in reader.changed("/api/trace/turn-1")["conversation"]["turns"]] == [None] * 3

    feedback_of(turns[2], "useful")
    assert [t["feedback"] for t in reader.changed("/api/trace/turn-1")["conversation"]["turns"]] == [
        None,
        None,
        "useful",
    ]
    session_ingest(project, chat_payload(sessionId="turn-4", conversationId="conv-1"))
    assert len(reader.changed("/api/trace/turn-1")["conversation"]["turns"]) == 4
    reader.unchanged("/api/trace/turn-1")


def test_a_renamed_project_shows_in_the_trace(api, project):
    session_ingest(project, chat_payload())
    reader = Reader(api)
    reader.changed()

    project.slug = "acme-support"
    project.save()

    assert reader.changed()["session"]["project"] == "acme-support"


def test_another_etag_or_none_gets_the_whole_trace(api, project):
    session_ingest(project, chat_payload())
    etag = api.get(URL)["ETag"]

    assert api.get(URL, HTTP_IF_NONE_MATCH='"1.1.0000000000000000"').status_code == 200
    assert api.get(URL, HTTP_IF_NONE_MATCH=f"W/{etag}").status_code == 304  # weak comparison, as RFC 9110 asks
    assert etag.startswith('"') and etag.endswith('"')
    other_page = api.get(URL, {"invocationLimit": 1})
    assert other_page.status_code == 200 and other_page["ETag"] != etag


def test_a_cached_trace_costs_one_query_and_a_304_no_more(api, project, django_assert_num_queries):
    session_ingest(project, chat_payload())
    etag = api.get(URL)["ETag"]  # rendered, and the key verified and cached

    with django_assert_num_queries(1):  # the session's pk, version and project, among the caller's
        assert api.get(URL).status_code == 200
    with django_assert_num_queries(1):
        assert api.get(URL, HTTP_IF_NONE_MATCH=etag).status_code == 304
