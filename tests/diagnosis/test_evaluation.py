import copy
import json
import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from cases.models import BadCase, BadCaseStatus
from diagnosis.constants import Layer
from diagnosis.evaluation_layers import self_evaluation_read
from diagnosis.models import ClaimCheck, ClaimCheckRef, DiagnosisSession, EvidenceRef
from diagnosis.serializers import session_ingest_from_body
from diagnosis.services import evaluation
from diagnosis.services.evaluation import MISSING, STALE, session_evaluate, session_evaluation_run
from diagnosis.services.evaluation_data import session_data_from_models, session_data_from_payload
from diagnosis.services.producers import pipeline
from tests.factories import aiops_payload, chat_payload, session_ingest, session_ingest_evaluated, with_invocations

pytestmark = pytest.mark.django_db


def sized_payload(invocations: int, claims: int, session_id: str = "s-sized") -> dict:
    """A chat session with `invocations` retrieval calls and `claims` supported claims."""
    payload = with_invocations(chat_payload(sessionId=session_id), invocations)
    for position, inv in enumerate(payload["toolInvocations"], start=1):
        inv["retrievalDetails"]["evidenceRefs"][0]["content"] = f"日志 {position}：order-service 的数据库连接池耗尽。"
    payload["executorOutput"]["claims"] = [
        {
            "claimId": f"c{k}",
            "text": "order-service 的数据库连接池耗尽",
            "critical": k == 1,
            "evidence": [{"refId": f"inv-{(k - 1) % invocations + 1}#1", "excerpt": "连接池耗尽"}],
        }
        for k in range(1, claims + 1)
    ]
    return payload


def contradicted_payload(session_id: str = "s-reject") -> dict:
    """The evidence says 12.5 %, the critical claim says 25 %: a changed number."""
    payload = chat_payload(sessionId=session_id)
    ref = payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]
    ref["content"] = "08:00 起 order-service 的 5xx 错误率升至 12.5%。"
    payload["executorOutput"]["claims"] = [
        {
            "claimId": "c1",
            "text": "order-service 的 5xx 错误率升至 25%",
            "critical": True,
            "evidence": [{"refId": "inv-1#1", "excerpt": "5xx 错误率升至 12.5%"}],
        }
    ]
    return payload


def test_chat_session_gets_rule_and_verifier_layers_and_mirrors(project):
    session = session_ingest(project, chat_payload())

    state = session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert state == "DONE" == session.evaluation_state
    assert {Layer.RULE, Layer.VERIFIER} <= set(session.self_evaluation)
    assert Layer.AIOPS not in session.self_evaluation
    assert session.self_evaluation[Layer.RULE]["source"] == "rule"
    assert session.self_evaluation[Layer.RULE]["evidence_score"] == 65  # +30 success, +35 L0
    assert session.self_evaluation[Layer.VERIFIER]["verdict"] == "PASS"
    mirrored = self_evaluation_read(session.self_evaluation).mirrored_columns()
    assert {name: getattr(session, name) for name in mirrored} == mirrored
    assert session.evaluated_at is not None and session.evaluation_error == ""
    assert session.failure_attribution == "NONE"


def test_aiops_session_gets_rule_and_aiops_layers(project):
    session = session_ingest(project, aiops_payload())

    session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert {Layer.RULE, Layer.AIOPS} <= set(session.self_evaluation)
    assert session.aiops_verdict == session.self_evaluation[Layer.AIOPS]["verdict"] != ""
    assert session.evaluation_state == "DONE"


def test_layers_that_no_longer_apply_are_removed_with_their_mirrors(project):
    # An AIOps report with structured claims gets the verifier layer too ...
    with_claims = aiops_payload(executorOutput=chat_payload()["executorOutput"])
    session = session_ingest(project, with_claims)
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    assert {Layer.RULE, Layer.VERIFIER, Layer.AIOPS} <= set(session.self_evaluation)
    assert session.verifier_verdict != "" and session.groundedness_score is not None
    first_rows = list(ClaimCheck.objects.filter(session=session).values_list("round", "claim_id", "verdict"))
    assert first_rows and {row[0] for row in first_rows} == {1}

    # ... re-posted without executor output it no longer qualifies: the stale layer goes.
    without = copy.deepcopy(with_claims)
    del without["executorOutput"]
    session_ingest(project, without)
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    assert set(session.self_evaluation) == {Layer.RULE, Layer.AIOPS}
    assert (session.verifier_verdict, session.groundedness_score) == ("", None)
    mirrored = self_evaluation_read(session.self_evaluation).mirrored_columns()
    assert {name: getattr(session, name) for name in mirrored} == mirrored
    # The claim checks of round 1 are history and stay.
    assert list(ClaimCheck.objects.filter(session=session).values_list("round", "claim_id", "verdict")) == first_rows

    # Claims posted again later start a new round after the stored ones, never over them.
    session_ingest(project, with_claims)
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    assert session.self_evaluation[Layer.VERIFIER]["round"] == 2
    assert sorted({row[0] for row in ClaimCheck.objects.filter(session=session).values_list("round")}) == [1, 2]


def test_mode_change_swaps_the_mode_layers(project):
    session = session_ingest(project, aiops_payload(sessionId="s-mode"))
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    assert Layer.AIOPS in session.self_evaluation and session.aiops_verdict != ""

    session_ingest(project, chat_payload(sessionId="s-mode"))
    session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert set(session.self_evaluation) == {Layer.RULE, Layer.VERIFIER}
    assert session.aiops_verdict == ""


def test_failed_producer_keeps_an_applicable_layer_but_inapplicable_ones_go(project, monkeypatch):
    session = session_ingest(
        project, aiops_payload(sessionId="s-mixed", executorOutput=chat_payload()["executorOutput"])
    )
    session_evaluate(session_pk=session.pk)
    before = DiagnosisSession.objects.get(pk=session.pk).self_evaluation[Layer.AIOPS]

    def broken(**kwargs):
        raise RuntimeError("aiops producer down")

    monkeypatch.setattr("diagnosis.services.producers.pipeline.aiops_rule_evaluation", broken)
    without = aiops_payload(sessionId="s-mixed")
    session_ingest(project, without)
    assert session_evaluate(session_pk=session.pk) == "PARTIAL"

    session.refresh_from_db()
    assert session.self_evaluation[Layer.AIOPS] == before  # applicable, producer failed: kept
    assert Layer.VERIFIER not in session.self_evaluation  # no longer applicable: removed


def test_claim_checks_are_stored_with_their_checked_refs(project):
    session = session_ingest(project, sized_payload(invocations=3, claims=3))

    session_evaluate(session_pk=session.pk)

    checks = list(ClaimCheck.objects.filter(session=session).order_by("claim_id"))
    assert [(c.claim_id, c.round, c.verdict) for c in checks] == [
        ("c1", 1, "SUPPORTED"),
        ("c2", 1, "SUPPORTED"),
        ("c3", 1, "SUPPORTED"),
    ]
    assert checks[0].critical and not checks[1].critical
    assert checks[0].judge and checks[0].bindings[0]["status"] == "VERIFIED"
    # The judge's decision: its band, who decided and its strongest reasons, as in the layer.
    assert (checks[0].band, checks[0].decided_by) == ("supported", "deterministic")
    entry = session.__class__.objects.get(pk=session.pk).self_evaluation["verifier_evaluation"]["claim_checks"][0]
    assert checks[0].reasons == entry["reasons"] and 1 <= len(checks[0].reasons) <= 3
    assert (checks[0].p_supported, checks[0].p_contradicted) == (entry["p_supported"], entry["p_contradicted"])
    assert [list(c.checked_refs.values_list("ref_id", flat=True)) for c in checks] == [
        ["inv-1#1"],
        ["inv-2#1"],
        ["inv-3#1"],
    ]
    # "every SUPPORTED claim of this session" is a plain indexed query, no JSON.
    assert ClaimCheck.objects.filter(session=session, verdict="SUPPORTED").count() == 3


def test_evaluating_twice_stores_the_same_result(project):
    session = session_ingest(project, sized_payload(invocations=2, claims=2))
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    first_container = copy.deepcopy(session.self_evaluation)
    first_rows = list(ClaimCheck.objects.filter(session=session).values("pk", "round", "claim_id", "verdict", "facts"))
    first_links = sorted(ClaimCheckRef.objects.values_list("claim_check_id", "evidence_ref_id"))

    session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert session.self_evaluation == first_container
    assert list(ClaimCheck.objects.filter(session=session).values("pk", "round", "claim_id", "verdict", "facts")) == (
        first_rows
    )
    assert sorted(ClaimCheckRef.objects.values_list("claim_check_id", "evidence_ref_id")) == first_links


def test_new_evidence_starts_a_new_round_and_keeps_the_old_rows(project):
    payload = sized_payload(invocations=1, claims=1)
    session = session_ingest(project, payload)
    session_evaluate(session_pk=session.pk)
    payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = "新日志：order-service 连接池耗尽"
    session_ingest(project, payload)

    session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert session.self_evaluation[Layer.VERIFIER]["round"] == 2
    assert list(ClaimCheck.objects.filter(session=session).values_list("round", "claim_id")) == [(1, "c1"), (2, "c1")]
    # Round 1's link went with the replaced ref; round 2 links the new one.
    assert list(ClaimCheckRef.objects.values_list("evidence_ref__content", flat=True)) == [
        "新日志：order-service 连接池耗尽"
    ]


def test_claim_check_history_keeps_the_latest_rounds_only(project, settings, django_assert_num_queries):
    settings.SELFEVAL_CLAIM_CHECK_ROUNDS = 3
    payload = sized_payload(invocations=1, claims=2)
    session = session_ingest(project, payload)
    for number in range(1, 8):  # seven rounds: each re-post brings new evidence
        payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = (
            f"日志 {number}：order-service 的数据库连接池耗尽。"
        )
        session_ingest(project, payload)
        with django_assert_num_queries(STATEMENTS_PER_EVALUATION):
            session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert session.self_evaluation[Layer.VERIFIER]["round"] == 7
    rounds = ClaimCheck.objects.filter(session=session).values_list("round", flat=True)
    assert sorted(set(rounds)) == [5, 6, 7] and len(rounds) == 6


def test_claim_check_history_is_bounded_by_default(settings):
    assert settings.SELFEVAL_CLAIM_CHECK_ROUNDS == 10


def test_claim_dropped_by_the_agent_disappears_from_the_round(project):
    payload = sized_payload(invocations=2, claims=2)
    session = session_ingest(project, payload)
    session_evaluate(session_pk=session.pk)
    payload["executorOutput"]["claims"] = payload["executorOutput"]["claims"][:1]
    session_ingest(project, payload)  # same evidence: same round

    session_evaluate(session_pk=session.pk)

    assert list(ClaimCheck.objects.filter(session=session).values_list("round", "claim_id")) == [(1, "c1")]


def test_verifier_reject_opens_one_bad_case_once_per_session(project):
    session = session_ingest(project, contradicted_payload())

    session_evaluate(session_pk=session.pk)
    session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert session.verifier_verdict == "REJECT"
    assert ClaimCheck.objects.get(session=session).verdict == "CONTRADICTED"
    bad_case = BadCase.objects.get(session=session)
    assert (bad_case.source, bad_case.status, bad_case.verifier_verdict) == ("verifier", "open", "REJECT")
    # Once triaged and closed, a re-evaluation does not reopen it.
    BadCase.objects.filter(pk=bad_case.pk).update(status=BadCaseStatus.WONT_FIX)
    session_evaluate(session_pk=session.pk)
    assert BadCase.objects.filter(session=session).count() == 1


def test_pass_opens_no_bad_case(project):
    session = session_ingest(project, chat_payload())

    session_evaluate(session_pk=session.pk)

    assert not BadCase.objects.exists()


def test_failed_producer_gives_partial_and_keeps_the_previous_layer(project, monkeypatch):
    session = session_ingest(project, chat_payload())
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    previous_verifier = session.self_evaluation[Layer.VERIFIER]

    def verifier_crashes(data, **kwargs):
        result = pipeline.evaluate(data, **kwargs)
        del result.layers[Layer.VERIFIER]
        result.errors["verifier"] = "judge endpoint timed out"
        return result

    monkeypatch.setattr(evaluation, "evaluate", verifier_crashes)
    state = session_evaluate(session_pk=session.pk)

    session.refresh_from_db()
    assert state == "PARTIAL" == session.evaluation_state
    assert session.evaluation_error == "verifier: judge endpoint timed out"
    assert session.self_evaluation[Layer.VERIFIER] == previous_verifier
    assert session.self_evaluation[Layer.RULE]["evidence_score"] == 65
    assert session.needs_review


def test_running_session_is_evaluated_on_what_it_holds(project):
    session = session_ingest(project, chat_payload(status="RUNNING", finishedAt=None))

    assert session_evaluate(session_pk=session.pk) == "DONE"

    session.refresh_from_db()
    assert session.self_evaluation[Layer.RULE]["evidence_score"] == 65


def test_session_changed_during_evaluation_is_not_overwritten(project, monkeypatch):
    session = session_ingest(project, chat_payload())

    def reingested_meanwhile(data, **kwargs):
        DiagnosisSession.objects.filter(pk=session.pk).update(updated_at=timezone.now() + timedelta(seconds=1))
        return pipeline.evaluate(data, **kwargs)

    monkeypatch.setattr(evaluation, "evaluate", reingested_meanwhile)

    assert session_evaluate(session_pk=session.pk) == STALE
    session.refresh_from_db()
    assert session.evaluation_state == "PENDING" and session.self_evaluation == {}
    assert not ClaimCheck.objects.exists()


def test_unknown_session(project):
    with pytest.raises(DiagnosisSession.DoesNotExist):
        session_evaluate(session_pk=999_999)
    assert session_evaluation_run(session_pk=999_999) == MISSING


def test_ingestion_evaluates_after_commit(api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/sessions", data=json.dumps(chat_payload()), content_type="application/json")

    assert response.status_code == 201, response.content
    session = DiagnosisSession.objects.get()
    assert session.evaluation_state == "DONE"
    assert session.verifier_verdict == "PASS" and session.evidence_score == 65


def test_a_payload_is_judged_on_the_same_data_as_its_stored_rows(project):
    # The harness converts the rows a payload maps to, the evaluation the same rows as the
    # database gives them back (in any order, refs matched to their invocation by key).
    payload = with_invocations(aiops_payload(executorOutput=chat_payload()["executorOutput"]), 3)
    payload["toolInvocations"][1].update(retrievalDetails=None, status="FAILED", error=None)
    payload["toolInvocations"][2]["retrievalDetails"]["evidenceRefs"].append(
        {"refId": "inv-3#2", "content": "chunk 3b 连接池耗尽"}
    )
    session = session_ingest(project, payload)
    validated = session_ingest_from_body(payload)

    from_db = session_data_from_models(
        session=DiagnosisSession.objects.get(pk=session.pk),
        invocations=list(session.invocations.order_by("-position")),
        refs=EvidenceRef.objects.filter(session=session).order_by("-id"),
    )

    assert [[ref.ref_id for ref in inv.refs] for inv in from_db.invocations] == [
        ["inv-1#1"],
        [],
        ["inv-3#1", "inv-3#2"],
    ]
    assert from_db == session_data_from_payload(data=validated)


# --- SQL statements per evaluated session: independent of invocations and claims -------------

# 3 reads (session, invocations, refs), then one transaction: SAVEPOINT, lock + staleness check,
# merge (SAVEPOINT, SELECT FOR UPDATE, UPDATE, RELEASE), DELETE of dropped claims and expired rounds, claim-check
# upsert, ref-link DELETE, ref-link INSERT, the day's change mark, RELEASE.
STATEMENTS_PER_EVALUATION = 15


@pytest.mark.parametrize(("invocations", "claims"), [(1, 1), (20, 1), (1, 10), (20, 10)])
def test_statements_per_evaluation_are_constant(project, django_assert_num_queries, invocations, claims):
    session = session_ingest(project, sized_payload(invocations=invocations, claims=claims))

    with django_assert_num_queries(STATEMENTS_PER_EVALUATION):
        session_evaluate(session_pk=session.pk)

    assert ClaimCheck.objects.filter(session=session).count() == claims


def test_statements_of_a_rejected_session_are_constant(project):
    counts = []
    for claims in (1, 10):
        payload = contradicted_payload(session_id=f"s-reject-{claims}")
        payload["executorOutput"]["claims"] = payload["executorOutput"]["claims"] * 1 + [
            {**payload["executorOutput"]["claims"][0], "claimId": f"x{k}", "critical": False} for k in range(claims - 1)
        ]
        session = session_ingest(project, payload)
        with CaptureQueriesContext(connection) as queries:
            session_evaluate(session_pk=session.pk)
        counts.append(len(queries))

    assert counts[0] == counts[1]
    assert BadCase.objects.count() == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_evaluations_of_one_session_store_one_result(project):
    session = session_ingest(project, sized_payload(invocations=3, claims=3))  # evaluated once at commit
    barrier = threading.Barrier(3)
    outcomes: list[str] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait(timeout=10)
            outcomes.append(session_evaluate(session_pk=session.pk))
        except BaseException as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert not errors, errors
    assert outcomes == ["DONE"] * 3
    assert list(ClaimCheck.objects.filter(session=session).values_list("round", "claim_id")) == [
        (1, "c1"),
        (1, "c2"),
        (1, "c3"),
    ]
    assert ClaimCheckRef.objects.count() == 3


# --- legacy layers (issue 9, section 3.1) -------------------------------------------------------

LEGACY_SELF_EVALUATION = {"evidence_score": 40, "verdict": "PASS", "groundedness_score": 0.9}


def test_legacy_verifier_layer_no_producer_replaces_survives_marked_legacy(project):
    # An AIOps report without executor output gets no verifier producer: its legacy layer stays.
    session = session_ingest_evaluated(project, aiops_payload(selfEvaluation=LEGACY_SELF_EVALUATION))

    assert session.self_evaluation[Layer.VERIFIER] == {"verdict": "PASS", "groundedness_score": 0.9, "source": "legacy"}
    assert session.self_evaluation[Layer.RULE]["source"] == "rule"  # replaced by its producer
    # The agent's own verdict is history, not the verifier's: it fills no verdict column and
    # opens no verifier bad case.
    assert (session.verifier_verdict, session.groundedness_score) == ("", None)
    assert not BadCase.objects.filter(session=session).exists()


def test_legacy_verifier_layer_is_replaced_once_the_verifier_applies(project):
    session = session_ingest_evaluated(
        project, chat_payload(selfEvaluation={"verdict": "REJECT", "groundedness_score": 0.1})
    )

    layer = session.self_evaluation[Layer.VERIFIER]
    assert (layer["verdict"], layer["round"]) == ("PASS", 1) and "source" not in layer
    assert session.verifier_verdict == "PASS"


def test_a_failed_call_reporting_an_l0_hit_earns_no_hit_bonus(project):
    # Issue 9, 3.3: the only call FAILED, yet reports matchLevel L0; the gatekeeper refuses its refs.
    payload = chat_payload(sessionId="s-failed-l0")
    payload["toolInvocations"][0].update(status="FAILED", error="knowledge base timeout")
    session = session_ingest_evaluated(project, payload)

    rule = session.self_evaluation[Layer.RULE]
    assert [f["rule"] for f in rule["factors"]] == ["retrieval_no_hit", "all_tool_calls_failed"]
    assert session.evidence_score == rule["evidence_score"] == 0
    assert session.self_evaluation[Layer.VERIFIER]["claim_checks"][0]["bindings"] == ["REF_FROM_FAILED_CALL"]
