"""GET /api/trace/<sessionId>: seed document 000's trace, structured layers, three views, fixed query count."""

import copy

import pytest

from cases.services import bad_case_open_for_session, case_create_from_session
from diagnosis.models import ClaimCheck
from diagnosis.services.trace_version import session_trace_changed
from tests.factories import (
    aiops_payload,
    chat_payload,
    diagnosis_payload,
    feedback_of,
    session_ingest_evaluated,
    with_invocations,
)
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db

URL = "/api/trace/s-20261129-0001"


def evaluated(project, payload=None):
    """A session judged in two rounds: UNSUPPORTED on its first evidence, SUPPORTED on the re-posted one."""
    payload = payload or chat_payload()
    first = copy.deepcopy(payload)
    first["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = "连接池耗尽告警已触发，原因待查。"
    session_ingest_evaluated(project, first)
    return session_ingest_evaluated(project, payload)


def test_trace_of_a_fresh_session(api, project):
    make_session(project)

    body = api.get(URL).json()

    assert body["session"]["sessionId"] == "s-20261129-0001"
    assert [step["name"] for step in body["steps"]] == ["plan", "retrieve"]
    invocation = body["toolInvocations"][0]
    assert invocation["retrievalDetails"]["evidenceRefs"][0]["refId"] == "inv-1#1"
    assert (body["feedback"], body["hasFeedback"]) == (None, False)
    assert (body["hasVerifierEvaluation"], body["hasAiOpsRuleEvaluation"]) == (False, False)
    assert body["selfEvaluation"]["ruleEvaluation"] is None
    assert body["views"]["execution"]["status"] == "SUCCEEDED"
    assert body["views"]["user"] == {"feedback": None, "feedbackHistory": [], "case": None, "badCase": None}


def test_trace_structures_layers_and_views(api, project):
    session = evaluated(project)
    feedback_of(session, "not_useful", comment="wrong pool")
    feedback_of(session, "useful")
    stored = session.self_evaluation["verifier_evaluation"]

    body = api.get(URL).json()

    layers = body["selfEvaluation"]
    assert [f["rule"] for f in layers["ruleEvaluation"]["factors"]] == ["has_successful_tool_call", "l0_exact_match"]
    assert layers["ruleEvaluation"]["factors"][1]["delta"] == 35
    verifier = layers["verifierEvaluation"]
    assert (verifier["verdict"], verifier["round"], verifier["groundednessScore"]) == ("PASS", 2, 1.0)
    # Claim checks come from the latest round's rows, with facts and bindings.
    assert ClaimCheck.objects.filter(session=session).count() == 2
    assert [(c["claimId"], c["verdict"]) for c in verifier["claimChecks"]] == [("c1", "SUPPORTED")]
    assert verifier["claimChecks"][0]["facts"] == stored["facts_checked"]
    assert [fact["text"] for fact in verifier["factsChecked"]] == ["order-service"]
    assert verifier["gatekeeperBindings"] == stored["gatekeeper_result"]["bindings"]
    assert [b["status"] for b in verifier["gatekeeperBindings"]] == ["VERIFIED"]
    assert layers["raw"]["rule_evaluation"]["evidence_score"] == 65
    assert body["hasVerifierEvaluation"] is True and body["hasFeedback"] is True
    views = body["views"]
    assert views["evidence"]["rule"] == {
        "evidenceScore": 65,
        "appliedRules": ["has_successful_tool_call", "l0_exact_match"],
    }
    assert views["evidence"]["verifier"]["claimVerdicts"] == {"SUPPORTED": 1}
    user = views["user"]
    assert user["feedback"] == "useful"
    assert [e["value"] for e in user["feedbackHistory"]] == ["useful", "not_useful"]
    assert user["feedbackHistory"][1]["comment"] == "wrong pool"
    assert user["case"]["caseId"] and user["case"]["faultCategory"] == "DATABASE"
    assert (user["badCase"]["status"], user["badCase"]["feedbackCount"]) == ("open", 1)


def test_trace_of_aiops_session_shows_checks(api, project):
    session = session_ingest_evaluated(
        project, diagnosis_payload("a-1", mode="aiops", aiops_failure="evidence_tools_succeeded")
    )
    stored = session.self_evaluation["aiops_rule_evaluation"]

    body = api.get("/api/trace/a-1").json()

    assert body["hasAiOpsRuleEvaluation"] is True
    assert body["selfEvaluation"]["aiopsRuleEvaluation"] == {"verdict": "FAIL", "checks": stored["checks"]}
    assert body["views"]["evidence"]["aiops"] == {"verdict": "FAIL", "failedChecks": stored["failed_checks"]}
    assert "evidence_tools_succeeded" in body["views"]["evidence"]["aiops"]["failedChecks"]


def test_trace_of_aiops_session_counts_failed_calls(api, project):
    session_ingest_evaluated(project, aiops_payload())  # its metrics call failed

    body = api.get("/api/trace/a-20261129-0001").json()

    assert body["hasVerifierEvaluation"] is False  # no executor output
    assert body["views"]["execution"]["failedInvocationCount"] == 1
    assert body["views"]["evidence"]["aiops"]["verdict"] == "WARN"


def test_legacy_root_keys_show_in_their_layers(api, project):
    make_session(project, payload=chat_payload(selfEvaluation={"evidence_score": 40, "verdict": "REJECT"}))

    layers = api.get(URL).json()["selfEvaluation"]

    assert layers["ruleEvaluation"]["evidenceScore"] == 40
    assert layers["verifierEvaluation"]["verdict"] == "REJECT"


def test_feedback_history_is_capped(api, project, settings):
    settings.SELFEVAL_TRACE_FEEDBACK_HISTORY = 3
    session = make_session(project)
    for _ in range(5):
        feedback_of(session, "useful")

    assert len(api.get(URL).json()["views"]["user"]["feedbackHistory"]) == 3


def test_query_count_is_fixed_and_independent_of_invocations(api, project, django_assert_num_queries):
    session = evaluated(project, with_invocations(chat_payload(), 2))
    case_create_from_session(session=session)
    bad_case_open_for_session(session=session, source="verifier")
    feedback_of(session, "useful")

    # key, the trace's version; nothing cached yet: session, steps, invocations, refs, claim checks,
    # feedback events, case, bad case
    with django_assert_num_queries(10):
        api.get(URL)
    with django_assert_num_queries(1):  # cached: the trace's version (the key is cached too)
        api.get(URL)
    make_session(project, payload=with_invocations(chat_payload(), 120))  # a new version, 60 times the rows
    with django_assert_num_queries(9):
        api.get(URL)


def test_unknown_and_other_projects_session_is_404(api, other_api, project):
    make_session(project)

    assert api.get("/api/trace/nope").status_code == 404
    response = other_api.get(URL)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_anonymous_is_401_and_post_is_405(anonymous, api, project):
    make_session(project)

    assert anonymous.get(URL).status_code == 401
    assert api.post(URL, {}).status_code == 405


def test_staff_chooses_project_when_ambiguous(staff_api, project, other_project):
    make_session(project)
    make_session(other_project, answer="other answer")

    assert staff_api.get(URL).status_code == 404
    body = staff_api.get(URL, {"project": "acme-aiops"}).json()
    assert (body["session"]["project"], body["session"]["answer"]) == ("acme-aiops", "other answer")


def test_key_cannot_reach_another_project_through_the_project_parameter(api, other_project):
    make_session(other_project)

    assert api.get(URL, {"project": "acme-aiops"}).status_code == 404


def test_trace_allows_only_get(api, project):
    make_session(project)

    for method in ("put", "patch", "delete"):
        assert getattr(api, method)(URL).status_code == 405, method


def test_legacy_verifier_layer_survives_evaluation_and_is_shown_as_legacy(api, project):
    from diagnosis.services.evaluation import session_evaluate

    legacy = {"evidence_score": 40, "verdict": "PASS", "groundedness_score": 0.9}
    session = make_session(project, payload=aiops_payload(selfEvaluation=legacy))
    session_evaluate(session_pk=session.pk)

    body = api.get("/api/trace/a-20261129-0001").json()

    assert body["hasVerifierEvaluation"] is True
    verifier = body["selfEvaluation"]["verifierEvaluation"]
    assert (verifier["verdict"], verifier["groundednessScore"], verifier["source"]) == ("PASS", 0.9, "legacy")
    assert body["selfEvaluation"]["ruleEvaluation"]["source"] == "rule"


def test_structured_verifier_view_shows_the_executor_output_the_verifier_read(api, project):
    from diagnosis.services.evaluation import session_evaluate

    payload = chat_payload()
    session_evaluate(session_pk=make_session(project, payload=payload).pk)

    verifier = api.get(URL).json()["selfEvaluation"]["verifierEvaluation"]

    claim = payload["executorOutput"]["claims"][0]
    # As the verifier read it: the claims, without the finalAnswer (debug context only).
    assert verifier["executorStructuredOutput"] == {"version": "executor_evidence_v2", "claims": [claim]}


def test_an_unreadable_layer_is_null_named_and_kept_in_raw(api, project):
    session = session_ingest_evaluated(project, chat_payload())
    broken = {**session.self_evaluation, "rule_evaluation": {"evidence_score": "high"}}
    type(session).objects.filter(pk=session.pk).update(self_evaluation=broken)

    body = api.get(URL).json()

    layers = body["selfEvaluation"]
    assert layers["ruleEvaluation"] is None and body["hasRuleEvaluation"] is False
    assert [layer["layer"] for layer in layers["invalidLayers"]] == ["rule_evaluation"]
    assert "$.evidence_score" in layers["invalidLayers"][0]["error"]
    assert layers["raw"]["rule_evaluation"] == {"evidence_score": "high"}
    assert layers["verifierEvaluation"]["verdict"] == "PASS"


def test_without_claim_check_rows_the_claims_come_from_the_layer_with_their_bindings(api, project):
    session = session_ingest_evaluated(project, chat_payload())
    with_rows = api.get(URL).json()["selfEvaluation"]["verifierEvaluation"]["claimChecks"]
    # As for a session evaluated before the rows existed; no service writes this, so the test moves
    # the trace version as one would.
    ClaimCheck.objects.filter(session=session).delete()
    session_trace_changed(session_pk=session.pk)

    from_layer = api.get(URL).json()["selfEvaluation"]["verifierEvaluation"]["claimChecks"]

    assert [{**check, "service": ""} for check in with_rows] == from_layer


def test_machine_text_keeps_its_english_and_adds_its_code_and_parameters(api, project):
    session_ingest_evaluated(project, diagnosis_payload("s-low", verdict="LOW_CONFID"))

    verifier = api.get("/api/trace/s-low").json()["selfEvaluation"]["verifierEvaluation"]

    assert verifier["rationale"] == "1/2 claims supported, groundedness 0.67; below the pass threshold 0.8"
    assert verifier["rationaleCode"] == "verifier.below_pass"
    assert verifier["rationaleParams"] == {"supported": 1, "total": 2, "groundedness": 0.667, "threshold": 0.8}
    unsupported = verifier["claimChecks"][1]
    assert unsupported["rationale"] == "no cited evidence passed the gatekeeper (EXCERPT_MISMATCH)"
    assert (unsupported["rationaleCode"], unsupported["rationaleParams"]) == (
        "claim.gatekeeper_failed",
        {"statuses": ["EXCERPT_MISMATCH"]},
    )
    # Decided by the verifier's rule, before any judge: no scores, the rule's reason.
    assert (unsupported["band"], unsupported["decidedBy"], unsupported["pSupported"]) == ("unsupported", "rule", None)
    assert unsupported["reasons"] == [
        {
            "code": "claim.gatekeeper_failed",
            "params": {"statuses": ["EXCERPT_MISMATCH"]},
            "text": unsupported["rationale"],
        }
    ]
    supported = verifier["claimChecks"][0]
    assert (supported["verdict"], supported["band"], supported["decidedBy"]) == (
        "SUPPORTED",
        "supported",
        "deterministic",
    )
    binding = unsupported["bindings"][0]
    assert (binding["reason"], binding["reason_code"]) == (
        "excerpt does not occur in the ref content",
        "gatekeeper.excerpt_mismatch",
    )
