"""factory_boy factories, payload builders and service-backed data builders shared by every test.

Stored data is always made the way production makes it: payloads go through the ingestion
payload (`session_ingest_from_body`) and `session_upsert`, evaluations through `session_evaluate`, feedback, cases, bad cases
and reviews through their services. So a change of what a producer writes reaches every test that
reads it. Times are relative to the pinned test clock (`tests.clock`).
"""

import copy
import datetime as dt
from typing import Any

import factory
from django.contrib.auth import get_user_model

from cases.models import BadCase, Case
from cases.services import bad_case_open_for_session, case_create_from_session
from core.tenancy.access import Access
from core.tenancy.models import Project, ProjectAPIKey
from diagnosis.models import DiagnosisSession, SessionReview
from diagnosis.serializers import session_ingest_from_body
from diagnosis.services.evaluation import session_evaluate
from diagnosis.services.ingestion import session_upsert
from diagnosis.services.reviews import session_mark_reviewed
from feedback.services import FeedbackResult, FeedbackSubmitter, feedback_submit
from tests import clock


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project
        django_get_or_create = ("slug",)

    slug = factory.Sequence(lambda n: f"project-{n}")
    name = factory.LazyAttribute(lambda o: o.slug.replace("-", " ").title())


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda o: f"{o.username}@example.com")
    is_staff = True
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests-only")

    @factory.post_generation
    def persist(obj, create, extracted, **kwargs):  # noqa: N805
        if create:
            obj.save()


def make_api_key(project: Project, name: str = "agent") -> str:
    """Create a key for the project and return the plain key (the header value's second part)."""
    _, key = ProjectAPIKey.objects.create_key(name=name, project=project)
    return key


CHAT_PAYLOAD: dict[str, Any] = {
    "sessionId": "s-20261129-0001",
    "mode": "chat",
    "query": "订单服务 5xx 突增，原因是什么？",
    "answer": "order-service 的数据库连接池耗尽，导致 5xx 突增。",
    "status": "SUCCEEDED",
    "activeAlerts": [],
    "steps": [
        {"index": 0, "name": "plan", "status": "SUCCEEDED", "detail": {}},
        {"index": 1, "name": "retrieve", "status": "SUCCEEDED", "detail": {}},
    ],
    "toolInvocations": [
        {
            "invocationId": "inv-1",
            "stepIndex": 1,
            "toolName": "lookup_knowledge",
            "status": "SUCCESS",
            "arguments": {"q": "order-service 5xx"},
            "output": "1 chunk",
            "error": None,
            "latencyMs": 120,
            "retrievalDetails": {
                "matchLevel": "L0",
                "evidenceRefs": [
                    {
                        "refId": "inv-1#1",
                        "source": "kb://runbooks/order-5xx.md",
                        "content": "order-service 的数据库连接池耗尽，请求排队超时并返回 5xx。",
                    }
                ],
            },
        }
    ],
    "executorOutput": {
        "version": "executor_evidence_v2",
        "claims": [
            {
                "claimId": "c1",
                "text": "order-service 的数据库连接池耗尽",
                "critical": True,
                "evidence": [{"refId": "inv-1#1", "excerpt": "连接池耗尽"}],
            }
        ],
        "finalAnswer": "executor_final_answer: debug/fallback context only",
    },
}

AIOPS_PAYLOAD: dict[str, Any] = {
    "sessionId": "a-20261129-0001",
    "mode": "aiops",
    "query": "Diagnose alert HighErrorRate on order-service",
    "answer": "## Root cause\nThe order-service database connection pool is exhausted.\n## Fix\nRaise the pool size.",
    "status": "SUCCEEDED",
    "alert": {"name": "HighErrorRate", "service": "order-service", "severity": "critical", "labels": {}},
    "activeAlerts": [{"name": "DiskFull", "service": "log-agent"}],
    "steps": [{"index": 0, "name": "collect", "status": "SUCCEEDED", "detail": {}}],
    "toolInvocations": [
        {
            "invocationId": "inv-1",
            "stepIndex": 0,
            "toolName": "query_logs",
            "status": "SUCCESS",
            "arguments": {"service": "order-service"},
            "output": {"lines": 3},
            "latencyMs": 300,
            "retrievalDetails": {
                "matchLevel": "L1",
                "evidenceRefs": [
                    {
                        "refId": "inv-1#1",
                        "source": "loki://order-service",
                        "content": "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
                    }
                ],
            },
        },
        {
            "invocationId": "inv-2",
            "stepIndex": 0,
            "toolName": "query_metrics",
            "status": "FAILED",
            "arguments": {},
            "output": None,
            "error": "prometheus timeout",
            "latencyMs": 15000,
        },
    ],
}


def _timed(template: dict[str, Any], *, started_ago: dt.timedelta, duration: dt.timedelta) -> dict[str, Any]:
    payload = copy.deepcopy(template)
    started = clock.now() - started_ago
    payload["createdAt"] = clock.iso(started)
    payload["finishedAt"] = clock.iso(started + duration)
    return payload


def chat_payload(**overrides: Any) -> dict[str, Any]:
    """A chat session that evaluates to PASS, created four hours before the test clock's now."""
    payload = _timed(CHAT_PAYLOAD, started_ago=dt.timedelta(hours=4), duration=dt.timedelta(seconds=9))
    payload.update(overrides)
    return payload


def aiops_payload(**overrides: Any) -> dict[str, Any]:
    """An AIOps session (no executor output) created three hours before the test clock's now."""
    payload = _timed(AIOPS_PAYLOAD, started_ago=dt.timedelta(hours=3), duration=dt.timedelta(seconds=20))
    payload.update(overrides)
    return payload


def with_invocations(payload: dict[str, Any], count: int) -> dict[str, Any]:
    """A copy of the payload with `count` retrieval invocations of one ref each."""
    payload = copy.deepcopy(payload)
    payload["toolInvocations"] = [
        {
            "invocationId": f"inv-{i}",
            "toolName": "lookup_knowledge",
            "status": "SUCCESS",
            "latencyMs": 10 + i,
            "retrievalDetails": {
                "matchLevel": "L0",
                "evidenceRefs": [{"refId": f"inv-{i}#1", "source": "kb://x", "content": f"chunk {i} 连接池耗尽"}],
            },
        }
        for i in range(1, count + 1)
    ]
    payload["executorOutput"]["claims"][0]["evidence"] = [{"refId": "inv-1#1", "excerpt": "连接池耗尽"}]
    for step_inv in payload["toolInvocations"]:
        step_inv["stepIndex"] = None
    return payload


def session_ingest(project: Project, payload: dict[str, Any]) -> DiagnosisSession:
    """Store a payload as `POST /api/sessions` does; no evaluation (on_commit does not run in tests)."""
    return session_upsert(project=project, data=session_ingest_from_body(payload)).session


def session_ingest_evaluated(project: Project, payload: dict[str, Any]) -> DiagnosisSession:
    """Store a payload and evaluate it through the real pipeline; the session as stored afterwards."""
    session = session_ingest(project, payload)
    session_evaluate(session_pk=session.pk)
    session.refresh_from_db()
    return session


REF_CONTENT = CHAT_PAYLOAD["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"]
# What each requested verdict is built from (claim text, excerpt, ref content), unless given.
_VERDICT_CONTENT = {
    "PASS": ("order-service 的数据库连接池耗尽", "连接池耗尽", REF_CONTENT),
    # Another number than the evidence's: the critical claim is contradicted.
    "REJECT": (
        "order-service 的 5xx 错误率升至 25%",
        "5xx 错误率升至 12.5%",
        "08:00 起 order-service 的 5xx 错误率升至 12.5%。",
    ),
    # A supported critical claim and an unsupported minor one: groundedness 2/3.
    "LOW_CONFID": ("order-service 的数据库连接池耗尽", "连接池耗尽", REF_CONTENT),
}
# The AIOps checks a session can be made to fail, and the report that fails them.
AIOPS_FAILURES = {
    "evidence_tools_succeeded": "the only call is not an evidence tool",
    "unrelated_alerts_not_main_object": "the report blames an unrelated active alert",
}


def diagnosis_payload(
    session_id: str,
    *,
    verdict: str = "PASS",
    mode: str = "chat",
    created_at: dt.datetime | None = None,
    query: str | None = None,
    answer: str | None = None,
    claim_text: str | None = None,
    excerpt: str | None = None,
    ref_content: str | None = None,
    match_level: str = "L0",
    aiops_failure: str | None = None,
) -> dict[str, Any]:
    """A payload whose evaluation gives `verdict` (PASS, LOW_CONFID or REJECT); see `evaluated_session`."""
    default_claim, default_excerpt, default_ref = _VERDICT_CONTENT[verdict]
    payload = chat_payload(sessionId=session_id, mode=mode)
    if created_at is not None:
        payload["createdAt"] = clock.iso(created_at)
        payload["finishedAt"] = clock.iso(created_at + dt.timedelta(seconds=9))
    if query is not None:
        payload["query"] = query
    if answer is not None:
        payload["answer"] = answer
    invocation = payload["toolInvocations"][0]
    invocation["retrievalDetails"]["matchLevel"] = match_level
    invocation["retrievalDetails"]["evidenceRefs"][0]["content"] = ref_content or default_ref
    claims = [
        {
            "claimId": "c1",
            "text": claim_text or default_claim,
            "critical": True,
            "evidence": [{"refId": "inv-1#1", "excerpt": excerpt or default_excerpt}],
        }
    ]
    if verdict == "LOW_CONFID":
        claims.append(
            {
                "claimId": "c2",
                "text": "order-service 的 CPU 使用率正常",
                "critical": False,
                "evidence": [{"refId": "inv-1#1", "excerpt": "CPU 使用率正常"}],
            }
        )
    payload["executorOutput"]["claims"] = claims
    if mode == "aiops":
        alert = AIOPS_PAYLOAD["alert"]
        payload["alert"] = copy.deepcopy(alert)
        payload["activeAlerts"] = copy.deepcopy(AIOPS_PAYLOAD["activeAlerts"])
        if answer is None:
            payload["answer"] = f"## Root cause\n{alert['service']}: {payload['answer']}"
        if aiops_failure not in (None, *AIOPS_FAILURES):
            raise ValueError(f"unknown AIOps failure {aiops_failure!r}; one of {sorted(AIOPS_FAILURES)}")
        if aiops_failure == "evidence_tools_succeeded":
            invocation["toolName"] = "read_runbook"  # not a knowledge, log or metrics tool
        else:
            payload["toolInvocations"] += [
                {"invocationId": "inv-logs", "stepIndex": 1, "toolName": "query_logs", "status": "SUCCESS",
                 "arguments": {"service": alert["service"]}, "output": {"lines": 12}, "latencyMs": 210},
                {"invocationId": "inv-metrics", "stepIndex": 1, "toolName": "query_metrics", "status": "SUCCESS",
                 "arguments": {"expr": "rate(http_5xx[5m])"}, "output": {"series": 1}, "latencyMs": 90},
            ]  # fmt: skip
        if aiops_failure == "unrelated_alerts_not_main_object":
            other = AIOPS_PAYLOAD["activeAlerts"][0]
            payload["answer"] = f"## Root cause\n{other['service']} {other['name']}: the disk is full."
    return payload


def evaluated_session(
    project: Project,
    session_id: str,
    *,
    verdict: str = "PASS",
    feedback: str = "",
    comment: str = "",
    aiops_failure: str | None = None,
    **content: Any,
) -> DiagnosisSession:
    """A session ingested and evaluated through the real services, with the verdict asked for.

    One step, one retrieval call and its ref, one critical claim citing it (LOW_CONFID adds an
    unsupported minor claim). `content` overrides the text (query, answer, claim_text, excerpt,
    ref_content), the time (created_at) or the match level. The pipeline decides the verdict; this
    fails loudly when it is not the one asked for, so a producer change shows in every test that
    relies on it. `feedback` is then submitted as an API client would (cases and bad cases follow).
    """
    payload = diagnosis_payload(session_id, verdict=verdict, aiops_failure=aiops_failure, **content)
    session = session_ingest_evaluated(project, payload)
    if session.verifier_verdict != verdict:
        raise AssertionError(f"{session_id}: the pipeline gave {session.verifier_verdict!r}, not {verdict!r}")
    if aiops_failure is not None:
        failed = session.self_evaluation["aiops_rule_evaluation"]["failed_checks"]
        if aiops_failure not in failed:
            raise AssertionError(f"{session_id}: the AIOps rules failed {failed}, not {aiops_failure!r}")
    if feedback:
        feedback_of(session, feedback, comment=comment)
        session.refresh_from_db()
    return session


def feedback_of(session: DiagnosisSession, value: str, *, comment: str = "", reviewer: str = "") -> FeedbackResult:
    """A vote on the session as its project's API client sends it."""
    submitter = FeedbackSubmitter(access=Access.to_project(session.project_id), client="api_key")
    return feedback_submit(
        submitter=submitter, session_id=session.session_id, value=value, comment=comment, reviewer=reviewer
    )


def case_of(session: DiagnosisSession) -> Case:
    """The session's case-library entry, created as `useful` feedback creates it."""
    return case_create_from_session(session=session)


def bad_case_of(session: DiagnosisSession, *, source: str = "feedback") -> BadCase:
    """The session's bad case, opened as not_useful feedback or a verifier REJECT opens it."""
    return bad_case_open_for_session(session=session, source=source)


def review_of(
    session: DiagnosisSession, reviewer, *, judgement: str, verifier_was_right: bool | None = None, notes: str = ""
) -> SessionReview:
    """A reviewer's judgement, recorded as the inspector records it."""
    return session_mark_reviewed(
        session=session, reviewer=reviewer, judgement=judgement, verifier_was_right=verifier_was_right, notes=notes
    )
