"""factory_boy factories and payload builders shared by every test module."""

import copy
from typing import Any

import factory
from django.contrib.auth import get_user_model

from diagnosis.models import Project, ProjectAPIKey


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
    "createdAt": "2026-11-29T08:00:00Z",
    "finishedAt": "2026-11-29T08:00:09Z",
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
                        "content": "当 order-service 的数据库连接池耗尽时，请求排队超时并返回 5xx。",
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
    "createdAt": "2026-11-29T09:00:00Z",
    "finishedAt": "2026-11-29T09:00:20Z",
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


def chat_payload(**overrides: Any) -> dict[str, Any]:
    payload = copy.deepcopy(CHAT_PAYLOAD)
    payload.update(overrides)
    return payload


def aiops_payload(**overrides: Any) -> dict[str, Any]:
    payload = copy.deepcopy(AIOPS_PAYLOAD)
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
