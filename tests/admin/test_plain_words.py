"""The inspector says in plain words what the judge found for each claim, and opens on the decision."""

import copy

import pytest
from django.urls import reverse
from django.utils import translation

from backoffice.plain_words import claim_summary, judge_name, listed, verdict_reason
from diagnosis.messages import message
from diagnosis.services.producers.judges.deterministic import message_of
from judge.decision import claim_decide
from tests.factories import chat_payload, evaluated_session, session_ingest_evaluated

pytestmark = pytest.mark.django_db

POOL_LOG = "checkout-api: pool exhausted, 132 waiting connections"


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


def test_what_the_evidence_states_and_what_it_does_not(reviewer_client, project):
    claim = _claim("c1", "The database pool is exhausted with 132 waiting", "pool exhausted, 132 waiting")
    session = session_ingest_evaluated(project, _payload("s-words-2", [claim]))

    view = _inspection(reviewer_client, session).context["inspection"].claims[0]

    assert view.summary == "The evidence states «pool», «exhausted» and «132 waiting», but not «database»."
    with translation.override("zh-hans"):
        chinese = _inspection(reviewer_client, session, "zh-hans").context["inspection"].claims[0].summary
    assert chinese == "证据陈述了 «pool»、«exhausted»和«132 waiting»，但没有陈述 «database»。"
    assert view.judge_label == "learned judge"


def _nothing_found(claim_id: str, text: str) -> dict:
    return {
        "claimId": claim_id,
        "text": text,
        "critical": False,
        "evidence": [{"refId": "$.no_evidence", "excerpt": ""}],
    }


def test_a_claim_bound_only_to_no_evidence_says_nothing_was_found_once(reviewer_client, project):
    claims = [_nothing_found("c1", "The cache layer was not involved"), _nothing_found("c2", "The queue kept up")]
    session = session_ingest_evaluated(project, _payload("s-words-3", claims))

    response = _inspection(reviewer_client, session)
    page = response.content.decode()

    assert [claim.summary for claim in response.context["inspection"].claims] == [
        "The agent reported that nothing was found.",
        "The agent reported that nothing was found.",
    ]
    assert page.count("The agent reported that nothing was found.") == 4  # each claim: in the decision and below
    assert "not among this session's evidence" not in page
    assert "No evidence bound to this claim." not in page
    # No candidate box per claim: one line for the claims whose facts nothing else states.
    assert 'class="se-candidates"' not in page
    assert page.count("No other ref or tool output of this session states the facts of c1, c2.") == 1


def test_a_source_that_is_a_candidate_for_several_claims_is_shown_once(reviewer_client, project):
    payload = _payload(
        "s-words-4",
        [
            _claim("c1", "TLS 握手失败率达到 62%", "握手失败率 62%", ref="inv-9#1"),
            _claim("c2", "证书有效期至 2026-11-28", "有效期至 2026-11-28", ref="inv-9#2"),
        ],
        ref_content="支付网关告警：握手失败。",
    )
    logs = copy.deepcopy(payload["toolInvocations"][0])
    logs.update(invocationId="inv-2", toolName="query_logs")
    logs["retrievalDetails"] = {
        "matchLevel": "L1",
        "evidenceRefs": [{"refId": "inv-2#1", "source": "loki://payment-gateway",
                          "content": "TLS 握手失败率 62%，证书有效期至 2026-11-28。"}],
    }  # fmt: skip
    payload["toolInvocations"].append(logs)
    session = session_ingest_evaluated(project, payload)

    response = _inspection(reviewer_client, session)
    claims = {claim.claim_id: claim for claim in response.context["inspection"].claims}
    page = response.content.decode()

    assert [c.source.ref_id for c in claims["c1"].candidates] == [c.source.ref_id for c in claims["c2"].candidates]
    assert (claims["c1"].candidates[0].shown_under, claims["c2"].candidates[0].shown_under) == ("", "c1")
    assert page.count('<div class="se-candidate">') == 1
    assert page.count('href="#claim-c1">shown under claim c1</a>') == 1
    assert page.count('name="ref_id" value="inv-2#1"') == 2  # each claim can still record its miscitation


def test_the_inspector_opens_on_the_verdict_its_reason_and_the_failing_claim(reviewer_client, rejected_session):
    response = _inspection(reviewer_client, rejected_session)
    inspection = response.context["inspection"]
    page = response.content.decode()

    assert inspection.verdict_reason == "The evidence contradicts a critical claim (c1)."
    assert [claim.claim_id for claim in inspection.failing_claims] == ["c1"]
    summary = page.index('class="se-card se-verdict-summary se-verdict-reject"')
    assert summary < page.index('id="se-verdict-reason"') < page.index('class="se-failing-claim"')
    assert page.index('class="se-failing-claim"') < page.index('class="se-decision se-card"')  # above the review form
    assert "The evidence says «12.5%» where the claim says «25%»." in page[summary : page.index("se-decision se-card")]


def test_a_badge_that_reads_better_than_the_verdict_says_what_it_measures(reviewer_client, project, session):
    aiops = evaluated_session(project, "s-words-5", verdict="REJECT", mode="aiops")
    assert aiops.aiops_verdict == "PASS"

    notes = _inspection(reviewer_client, aiops).context["inspection"].badge_notes
    with translation.override("zh-hans"):
        chinese = _inspection(reviewer_client, aiops, "zh-hans").context["inspection"].badge_notes

    assert any(note.startswith("AIOps “Pass” checks the report's form") for note in notes)
    assert any(note.startswith("“Excerpt found” on a citation means") for note in notes)
    assert any(note.startswith("AIOps “通过”检查的是报告的形式") for note in chinese)
    assert _inspection(reviewer_client, session).context["inspection"].badge_notes == []  # a PASS: nothing to explain


@pytest.mark.parametrize(
    ("judge", "shown"),
    [
        ("rule", "rules"),
        ("deterministic", "learned judge"),
        ("llm:qwen2.5-7b", "LLM (qwen2.5-7b)"),
        ("deterministic(llm-fallback)", "learned judge, the LLM being unavailable"),
    ],
)
def test_judges_are_named_as_people_call_them(judge, shown):
    with translation.override("en"):
        assert judge_name(judge) == shown


def test_lists_read_as_a_sentence_in_both_languages():
    with translation.override("en"):
        assert listed(["«a»", "«b»", "«c»"]) == "«a», «b» and «c»"
    with translation.override("zh-hans"):
        assert listed(["«a»", "«b»", "«c»"]) == "«a»、«b»和«c»"
        assert judge_name("rule") == "规则"


def test_a_rationale_without_a_code_falls_back_to_the_verdict():
    with translation.override("en"):
        assert claim_summary(verdict="CONTRADICTED", code="", params={}) == (
            "The judge found the evidence contradicting the claim."
        )


def test_a_reject_with_no_supported_claim_says_none_is_supported():
    def reason(supported: int) -> str:
        stored = message("verifier.below_reject", supported=supported, total=4, groundedness=0.0, threshold=0.4)
        return verdict_reason(code=stored.code, params=stored.json(), fallback=stored.text)

    with translation.override("en"):
        assert reason(0) == "None of the 4 claims is supported by the evidence."
        assert reason(1) == "Only 1 of 4 claims are supported by the evidence: too few to trust the answer."
    with translation.override("zh-hans"):
        assert reason(1) == "仅 4 个论断中有 1 个得到证据支持：太少，不足以信任该回答。"


def test_the_decision_lists_three_failing_claims_and_counts_the_rest(reviewer_client, project):
    claims = [_nothing_found(f"c{n}", f"Service {n} was not involved") for n in range(1, 5)]
    session = session_ingest_evaluated(project, _payload("s-words-6", claims))

    response = _inspection(reviewer_client, session)
    inspection = response.context["inspection"]

    assert [claim.claim_id for claim in inspection.failing_claims] == ["c1", "c2", "c3"]
    assert inspection.failing_more == 1
    assert "1 more claim did not hold: see the evidence below." in response.content.decode()


def test_an_escalated_or_fallen_back_claim_speaks_with_the_words_of_the_judge_that_decided():
    """The stored messages as the cascade and the LLM judge's fallback write them."""
    decided = message_of(claim_decide("The database pool is exhausted", [POOL_LOG]).rationale)
    llm = message("judge.llm", rationale="the log shows 12.5%, not 25%")
    escalated = message("judge.escalated", rationale=llm, judge="deterministic", first=decided)
    fallen_back = message("judge.llm_fallback", reason="timeout", judge="deterministic", rationale=decided)

    with translation.override("en"):
        assert claim_summary(verdict="CONTRADICTED", code=escalated.code, params=escalated.json()) == (
            "The LLM judge says: the log shows 12.5%, not 25%"
        )
        assert claim_summary(verdict="UNSUPPORTED", code=fallen_back.code, params=fallen_back.json()) == (
            "The evidence states «pool» and «exhausted», but not «database»."
        )
