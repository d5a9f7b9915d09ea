"""Bounded work per ingestion: over-long lists are refused before any item is validated, and the
executor's claims are capped in number and size (SELFEVAL_MAX_CLAIMS, SELFEVAL_MAX_CLAIM_EVIDENCE,
SELFEVAL_MAX_EXCERPT_CHARS)."""

import pytest

from diagnosis import serializers as ingest
from diagnosis.models import ClaimCheck, DiagnosisSession
from tests.factories import chat_payload
from tests.feedback.helpers import post_json

pytestmark = pytest.mark.django_db

URL = "/api/sessions"


# Each item is invalid: were any validated before the list's length is checked, the error would name it.
@pytest.mark.parametrize(
    ("field", "limit", "item"),
    [
        ("activeAlerts", ingest.MAX_ACTIVE_ALERTS, {"service": "no name"}),
        ("steps", ingest.MAX_STEPS, {"index": "first", "name": "plan", "status": "SUCCEEDED"}),
        ("toolInvocations", ingest.MAX_INVOCATIONS, {"invocationId": "i", "toolName": "t", "status": "OK"}),
    ],
)
def test_an_over_long_list_is_refused_before_any_item_is_validated(api, project, field, limit, item):
    payload = chat_payload()
    payload[field] = [item] * (20 * limit)

    response = post_json(api, URL, payload)

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {field: [f"Ensure this field has no more than {limit} elements."]}
    assert not DiagnosisSession.objects.exists()


def test_over_many_refs_in_one_invocation_are_refused_before_validating_them(api, project):
    payload = chat_payload()
    refs = payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"]
    refs[:] = [{"refId": 5} for _ in range(ingest.MAX_REFS_PER_INVOCATION + 1)]

    response = post_json(api, URL, payload)

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["toolInvocations.0.retrievalDetails.evidenceRefs"]


def _claims(
    count: int, *, text: str = "order-service 的数据库连接池耗尽", excerpt: str = "连接池耗尽", bindings: int = 1
):
    return [
        {
            "claimId": f"c{n}",
            "text": text,
            "critical": n == 0,
            "evidence": [{"refId": "inv-1#1", "excerpt": excerpt}] * bindings,
        }
        for n in range(count)
    ]


def _post_claims(api, claims):
    payload = chat_payload()
    payload["executorOutput"]["claims"] = claims
    return post_json(api, URL, payload)


def test_claims_up_to_the_cap_are_stored_and_judged(api, project, settings, django_capture_on_commit_callbacks):
    settings.SELFEVAL_MAX_CLAIMS = 5

    with django_capture_on_commit_callbacks(execute=True):
        response = _post_claims(api, _claims(5))

    assert response.status_code == 201, response.content
    assert ClaimCheck.objects.count() == 5


def test_claims_past_the_cap_are_a_400(api, project, settings):
    settings.SELFEVAL_MAX_CLAIMS = 5

    response = _post_claims(api, _claims(6))

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"executorOutput.claims": ["Expected `array` of length <= 5."]}
    assert not DiagnosisSession.objects.exists()


def test_the_default_caps_are_documented_settings(settings):
    assert (settings.SELFEVAL_MAX_CLAIMS, settings.SELFEVAL_MAX_CLAIM_EVIDENCE) == (200, 20)
    assert settings.SELFEVAL_MAX_EXCERPT_CHARS == 2000


@pytest.mark.parametrize(
    ("claims", "field"),
    [
        (_claims(2, text="x" * 11), "executorOutput.claims.0.text"),
        (_claims(1, text="连接池耗尽", excerpt="x" * 11), "executorOutput.claims.0.evidence.0.excerpt"),
        (_claims(1, text="连接池耗尽", bindings=4), "executorOutput.claims.0.evidence"),
    ],
    ids=["claim text", "excerpt", "bindings"],
)
def test_oversized_claims_are_a_400_naming_the_claim(api, project, settings, claims, field):
    settings.SELFEVAL_MAX_EXCERPT_CHARS = 10
    settings.SELFEVAL_MAX_CLAIM_EVIDENCE = 3

    response = _post_claims(api, claims)

    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]
    assert not DiagnosisSession.objects.exists()


def test_a_malformed_executor_output_is_still_stored_and_evaluated_as_invalid(
    api, project, django_capture_on_commit_callbacks
):
    payload = chat_payload()
    payload["executorOutput"] = {"version": "executor_evidence_v2", "claims": "not a list"}

    with django_capture_on_commit_callbacks(execute=True):
        response = post_json(api, URL, payload)

    assert response.status_code == 201
    session = DiagnosisSession.objects.get()
    parse = session.self_evaluation["verifier_evaluation"]["executor_output_parse_status"]
    assert parse["status"] == "INVALID"
