"""The inspector says in plain words what the judge found for each claim, and opens on the decision."""

import copy

import pytest
from django.urls import reverse
from django.utils import translation

from backoffice.plain_words import claim_summary, judge_name, listed
from tests.factories import chat_payload, evaluated_session, session_ingest_evaluated

pytestmark = pytest.mark.django_db

POOL_LOG = "db-proxy: pool exhausted, 132 waiting connections on the proxy"


def _inspection(client, session, language="en"):
    response = client.get(
        reverse("admin:diagnosis_diagnosissession_change", args=[session.pk]), HTTP_ACCEPT_LANGUAGE=language
    )
    assert response.status_code == 200
    return response


def _payload(session_id: str, claims: list[dict], ref_content: str = POOL_LOG) -> dict:
    payload = chat_payload(sessionId=session_id, query="Why is checkout slow?", answer="The pool is exhausted.")
    payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = ref_content
    payload["executorOutput"]["claims"] = claims
    return payload


def _claim(claim_id: str, text: str, excerpt: str, *, ref: str = "inv-1#1", critical: bool = True) -> dict:
    return {"claimId": claim_id, "text": text, "critical": critical, "evidence": [{"refId": ref, "excerpt": excerpt}]}


def test_a_contradicted_number_is_said_in_one_sentence_in_both_languages(reviewer_client, project):
    session = evaluated_session(project, "s-words-1", verdict="REJECT")

    claim = _inspection(reviewer_client, session).context["inspection"].claims[0]
    with translation.override("zh-hans"):
        chinese = _inspection(reviewer_client, session, "zh-hans").context["inspection"].claims[0].summary

    assert claim.summary == "The evidence says «12.5%» where the claim says «25%»."
    assert chinese == "证据说的是 «12.5%»，而论断说的是 «25%»。"
