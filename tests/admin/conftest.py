"""Actors and data of the admin tests: a reviewer, an approver, an outsider, evaluated sessions."""

import datetime as dt

import pytest
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from cases.models import BadCase, Case
from diagnosis.models import ClaimCheck, DiagnosisSession, DiagnosisStep, EvidenceRef, ToolInvocation
from diagnosis.services.merge import self_evaluation_merge
from feedback.models import FeedbackEvent
from tests.factories import UserFactory

PASSWORD = "pw-for-tests-only"
REF_CONTENT = "当 order-service 的数据库连接池耗尽时，请求排队超时并返回 5xx。"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The dashboard caches past days; every test starts from its own data."""
    cache.clear()
    yield
    cache.clear()


def _user_in(group_name: str, username: str):
    user = UserFactory(username=username, is_staff=True)
    user.groups.add(Group.objects.get(name=group_name))
    return user


@pytest.fixture
def reviewer(db):
    return _user_in("Reviewer", "bob")


@pytest.fixture
def approver(db):
    return _user_in("Case approver", "dana")


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def reviewer_client(reviewer) -> Client:
    return logged_in(reviewer)


@pytest.fixture
def approver_client(approver) -> Client:
    return logged_in(approver)


def build_session(
    project,
    session_id: str,
    *,
    created_at: dt.datetime | None = None,
    verdict: str = "PASS",
    feedback: str = "",
    mode: str = "chat",
    query: str = "订单服务 5xx 突增，原因是什么？",
    answer: str = "order-service 的数据库连接池耗尽，导致 5xx 突增。",
    claim_text: str = "order-service 的数据库连接池耗尽",
    excerpt: str = "连接池耗尽",
    ref_content: str = REF_CONTENT,
    aiops_checks: list | None = None,
    evidence_score: int = 65,
) -> DiagnosisSession:
    """An evaluated session with one step, one retrieval call, one ref and one checked claim."""
    created_at = created_at or timezone.now() - dt.timedelta(hours=1)
    session = DiagnosisSession.objects.create(
        project=project,
        session_id=session_id,
        mode=mode,
        language="zh",
        query=query,
        answer=answer,
        status="SUCCEEDED",
        created_at=created_at,
        finished_at=created_at + dt.timedelta(seconds=9),
        feedback=feedback,
        alert_name="HighErrorRate" if mode == "aiops" else "",
        alert_service="order-service" if mode == "aiops" else "",
        executor_output={
            "version": "executor_evidence_v2",
            "claims": [
                {
                    "claimId": "c1",
                    "text": claim_text,
                    "critical": True,
                    "evidence": [{"refId": "inv-1#1", "excerpt": excerpt}],
                }
            ],
        },
    )
    DiagnosisStep.objects.create(session=session, index=0, name="retrieve", status="SUCCEEDED")
    invocation = ToolInvocation.objects.create(
        session=session,
        position=0,
        invocation_id="inv-1",
        step_index=0,
        tool_name="lookup_knowledge",
        status="SUCCESS",
        arguments={"q": "order-service 5xx"},
        output="1 chunk",
        latency_ms=120,
        match_level="L0",
    )
    ref = EvidenceRef.objects.create(
        session=session,
        invocation=invocation,
        position=0,
        ref_id="inv-1#1",
        source="kb://runbooks/order-5xx.md",
        content=ref_content,
        content_sha256="0" * 64,
    )
    binding = {"claimId": "c1", "refId": "inv-1#1", "excerpt": excerpt, "status": "VERIFIED", "reason": ""}
    facts = [
        {"kind": "identifier", "value": "order-service", "text": "order-service", "status": "STATED", "stated": True}
    ]
    layers = {
        "rule_evaluation": {
            "evidence_score": evidence_score,
            "source": "rule",
            "factors": [
                {"rule": "has_successful_tool_call", "delta": 30, "detail": "1/1 calls succeeded"},
                {"rule": "l0_exact_match", "delta": 35, "detail": "L0 exact hit"},
            ],
        },
        "verifier_evaluation": {
            "verdict": verdict,
            "groundedness_score": 1.0 if verdict == "PASS" else 0.4,
            "critical_fact_count": 1,
            "claim_checks": [{"claimId": "c1", "verdict": "SUPPORTED"}],
            "facts_checked": facts,
            "rationale": "every critical claim is supported",
            "round": 1,
            "traceability_version": "v1",
            "gatekeeper_result": {"bindings": [binding]},
            "composer_output": {"status": "COMPOSED", "answer": answer},
            "tool_trace_summary": [],
        },
    }
    if mode == "aiops":
        checks = aiops_checks or [{"check": "final_report_exists", "passed": True, "reason": "report present"}]
        layers["aiops_rule_evaluation"] = {
            "verdict": "PASS" if all(c["passed"] for c in checks) else "FAIL",
            "checks": checks,
        }
    self_evaluation_merge(session_pk=session.pk, layers=layers, extra_fields={"evaluation_state": "DONE"})
    claim = ClaimCheck.objects.create(
        session=session,
        round=1,
        claim_id="c1",
        text=claim_text,
        critical=True,
        verdict="SUPPORTED" if verdict == "PASS" else "UNSUPPORTED",
        judge="rule",
        rationale="the excerpt states it",
        facts=facts,
        bindings=[binding],
    )
    claim.checked_refs.add(ref)
    session.refresh_from_db()
    return session


@pytest.fixture
def session(project):
    return build_session(project, "s-admin-0001")


@pytest.fixture
def rejected_session(project):
    session = build_session(project, "s-admin-0002", verdict="REJECT", feedback="not_useful")
    FeedbackEvent.objects.create(session=session, value="not_useful", comment="wrong root cause", client="api_key")
    return session


@pytest.fixture
def pending_case(session):
    return Case.objects.create(
        project=session.project,
        session=session,
        diagnosis_id=session.session_id,
        title=session.query[:100],
        query=session.query,
        root_cause="数据库连接池耗尽",
        solution="扩大连接池",
        service="order-service",
    )


@pytest.fixture
def bad_case(rejected_session):
    return BadCase.objects.create(session=rejected_session, project=rejected_session.project, source="feedback")
