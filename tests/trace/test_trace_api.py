"""GET /api/trace/<sessionId>: the seed's trace, structured layers, three views, fixed query count."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cases.services import bad_case_open_for_session, case_create_from_session
from diagnosis.models import ClaimCheck
from diagnosis.services.merge import self_evaluation_merge
from feedback.services import feedback_submit
from tests.factories import aiops_payload, chat_payload, with_invocations
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db

URL = "/api/trace/s-20261129-0001"

RULE = {
    "evidence_score": 65,
    "source": "rule",
    "factors": [{"rule": "has_successful_tool_call", "delta": 30}, {"rule": "l0_exact_match", "delta": 35}],
}
BINDING = {"claimId": "c1", "refId": "inv-1#1", "excerpt": "连接池耗尽", "status": "VERIFIED", "reason": "found"}
VERIFIER = {
    "verdict": "PASS",
    "groundedness_score": 1.0,
    "critical_fact_count": 1,
    "claim_checks": [{"claim_id": "c1", "verdict": "SUPPORTED"}],
    "facts_checked": [{"claim_id": "c1", "fact": "连接池耗尽", "found": True}],
    "rationale": "all critical claims supported",
    "round": 1,
    "traceability_version": "v1",
    "executor_output_parse_status": {"status": "VALID"},
    "executor_structured_output": {},
    "gatekeeper_result": {"bindings": [BINDING], "summary": {"total": 1, "VERIFIED": 1, "passed": True}},
    "composer_output": {"status": "COMPOSED"},
    "tool_trace_summary": [{"invocationId": "inv-1"}],
}


def evaluated(session):
    self_evaluation_merge(session_pk=session.pk, layers={"rule_evaluation": RULE, "verifier_evaluation": VERIFIER})
    for round_number, verdict in ((1, "UNSUPPORTED"), (2, "SUPPORTED")):
        ClaimCheck.objects.create(
            session=session,
            round=round_number,
            claim_id="c1",
            text="order-service 的数据库连接池耗尽",
            critical=True,
            verdict=verdict,
            judge="deterministic",
            facts=[{"fact": "连接池耗尽", "found": True}],
            bindings=[BINDING],
            service="order-service",
        )
    session.refresh_from_db()
    return session


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
    session = evaluated(make_session(project))
    feedback_submit(session=session, value="not_useful", client="api_key", comment="wrong pool")
    feedback_submit(session=session, value="useful", client="api_key")

    body = api.get(URL).json()

    layers = body["selfEvaluation"]
    assert layers["ruleEvaluation"]["factors"][1] == {"rule": "l0_exact_match", "delta": 35}
    verifier = layers["verifierEvaluation"]
    assert (verifier["verdict"], verifier["round"], verifier["groundednessScore"]) == ("PASS", 1, 1.0)
    # Claim checks come from the latest round's rows, with facts and bindings.
    assert [(c["claimId"], c["verdict"]) for c in verifier["claimChecks"]] == [("c1", "SUPPORTED")]
    assert verifier["claimChecks"][0]["facts"] == [{"fact": "连接池耗尽", "found": True}]
    assert verifier["gatekeeperBindings"] == [BINDING]
    assert verifier["factsChecked"][0]["fact"] == "连接池耗尽"
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
    session = make_session(project, payload=aiops_payload())
    checks = [{"name": "has_final_report", "passed": True}, {"name": "evidence_tools_called", "passed": False}]
    self_evaluation_merge(
        session_pk=session.pk, layers={"aiops_rule_evaluation": {"verdict": "WARN", "checks": checks}}
    )

    body = api.get("/api/trace/a-20261129-0001").json()

    assert body["hasAiOpsRuleEvaluation"] is True and body["hasVerifierEvaluation"] is False
    assert body["selfEvaluation"]["aiopsRuleEvaluation"] == {"verdict": "WARN", "checks": checks}
    assert body["views"]["evidence"]["aiops"] == {"verdict": "WARN", "failedChecks": ["evidence_tools_called"]}
    assert body["views"]["execution"]["failedInvocationCount"] == 1


def test_legacy_root_keys_show_in_their_layers(api, project):
    make_session(project, payload=chat_payload(selfEvaluation={"evidence_score": 40, "verdict": "REJECT"}))

    layers = api.get(URL).json()["selfEvaluation"]

    assert layers["ruleEvaluation"]["evidenceScore"] == 40
    assert layers["verifierEvaluation"]["verdict"] == "REJECT"


def test_feedback_history_is_capped(api, project, settings):
    settings.SELFEVAL_TRACE_FEEDBACK_HISTORY = 3
    session = make_session(project)
    for _ in range(5):
        feedback_submit(session=session, value="useful", client="api_key")

    assert len(api.get(URL).json()["views"]["user"]["feedbackHistory"]) == 3


def _count_queries(api) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert api.get(URL).status_code == 200
    return len(queries)


def test_query_count_is_fixed_and_independent_of_invocations(api, project, django_assert_num_queries):
    session = evaluated(make_session(project, payload=with_invocations(chat_payload(), 2)))
    case_create_from_session(session=session)
    bad_case_open_for_session(session=session, source="verifier")
    feedback_submit(session=session, value="useful", client="api_key")

    # key, session, invocations, refs, claim checks, feedback events, bad case, steps, case
    with django_assert_num_queries(9):
        api.get(URL)
    small = _count_queries(api)
    make_session(project, payload=with_invocations(chat_payload(), 120))
    assert _count_queries(api) == small


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
