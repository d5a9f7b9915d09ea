"""Candidate evidence in the inspector, and recording "evidence existed, cited wrong" from it."""

import copy

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from backoffice.candidates import MAX_ANALYSED_CHARS, MAX_CANDIDATES, MAX_SOURCE_CHARS
from cases.models import BadCase, BadCaseCategory, BadCaseStatus
from tests.admin.conftest import logged_in
from tests.factories import UserFactory, chat_payload, session_ingest_evaluated

pytestmark = pytest.mark.django_db

LOG = "payment-gateway WARN tls: handshake failure <script>x</script>；TLS 握手失败率 62%，证书有效期至 2026-11-28。"


def _miscited_payload(session_id: str = "s-miscited") -> dict:
    """Claim c2 cites a ref that does not exist; the log of another call states its facts."""
    payload = chat_payload(
        sessionId=session_id,
        query="支付网关为什么报错？",
        answer="## 根因\n客户端证书过期导致 TLS 握手失败。\n\nTLS 握手失败率达到 62%。",
    )
    payload["toolInvocations"][0]["retrievalDetails"]["evidenceRefs"][0]["content"] = (
        "客户端证书过期导致 TLS 握手失败。处理：更新证书。"
    )
    logs = copy.deepcopy(payload["toolInvocations"][0])
    logs.update(invocationId="inv-2", toolName="query_logs", arguments={"service": "payment-gateway"})
    logs["retrievalDetails"] = {
        "matchLevel": "L1",
        "evidenceRefs": [{"refId": "inv-2#1", "source": "loki://payment-gateway", "content": LOG}],
    }
    unrelated = copy.deepcopy(logs)
    unrelated.update(invocationId="inv-3")
    unrelated["retrievalDetails"]["evidenceRefs"] = [
        {"refId": "inv-3#1", "source": "loki://other", "content": "磁盘使用率 91%，与本次告警无关。"}
    ]
    payload["toolInvocations"] += [logs, unrelated]
    payload["executorOutput"]["claims"] = [
        {
            "claimId": "c1",
            "text": "客户端证书过期导致 TLS 握手失败",
            "critical": True,
            "evidence": [{"refId": "inv-1#1", "excerpt": "证书过期导致 TLS 握手失败"}],
        },
        {
            "claimId": "c2",
            "text": "TLS 握手失败率达到 62%",
            "critical": True,
            "evidence": [{"refId": "inv-9#1", "excerpt": "握手失败率 62%"}],
        },
    ]
    return payload


@pytest.fixture
def miscited(project):
    return session_ingest_evaluated(project, _miscited_payload())


def _inspector(client, session):
    return client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk]))


def test_a_claim_citing_a_missing_ref_shows_where_its_facts_are(reviewer_client, miscited):
    response = _inspector(reviewer_client, miscited)

    claims = {claim.claim_id: claim for claim in response.context["inspection"].claims}
    assert not claims["c1"].wants_candidates  # supported, cited right
    c2 = claims["c2"]
    assert c2.wants_candidates
    assert [candidate.source.ref_id for candidate in c2.candidates] == ["inv-2#1"]  # not the unrelated 91% log
    assert c2.candidates[0].facts == ["62%"]
    html = str(c2.candidates[0].highlighted)
    assert "<mark>TLS</mark> <mark>握手失败率</mark> <mark>62%</mark>" in html  # in the sentence that states 62%
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html  # the ref's text stays text
    page = response.content.decode()
    assert "Candidate evidence elsewhere in this session" in page
    assert reverse("admin:diagnosis_diagnosissession_miscited", args=[miscited.pk]) in page


def test_the_claim_knows_its_answer_sentence(reviewer_client, miscited):
    response = _inspector(reviewer_client, miscited)

    claims = {claim.claim_id: claim for claim in response.context["inspection"].claims}
    assert claims["c1"].sentence == "客户端证书过期导致 TLS 握手失败。"
    assert claims["c2"].sentence == "TLS 握手失败率达到 62%。"
    assert 'data-sentence="TLS 握手失败率达到 62%。"' in response.content.decode()


def test_candidates_cost_no_query(reviewer_client, miscited, session):
    """The sources are the invocations and refs the inspector loads anyway."""
    with CaptureQueriesContext(connection) as plain:
        _inspector(reviewer_client, session)
    with CaptureQueriesContext(connection) as with_candidates:
        response = _inspector(reviewer_client, miscited)

    assert any(claim.candidates for claim in response.context["inspection"].claims)
    assert len(with_candidates) == len(plain)


def test_one_click_records_evidence_existed_but_was_cited_wrong(reviewer_client, miscited):
    url = reverse("admin:diagnosis_diagnosissession_miscited", args=[miscited.pk])

    response = reviewer_client.post(url, {"claim_id": "c2", "ref_id": "inv-2#1"})

    assert response.status_code == 302 and response["Location"].endswith("#claim-c2")
    bad_case = BadCase.objects.get(session=miscited)
    assert bad_case.category == BadCaseCategory.MISCITED_EVIDENCE
    assert bad_case.status == BadCaseStatus.TRIAGED
    assert "c2" in bad_case.notes and "inv-2#1" in bad_case.notes
    # Again: the same bad case, the note once.
    reviewer_client.post(url, {"claim_id": "c2", "ref_id": "inv-2#1"})
    assert BadCase.objects.filter(session=miscited).count() == 1
    assert BadCase.objects.get(session=miscited).notes.count("inv-2#1") == 1


@pytest.mark.parametrize(
    "data",
    [{"claim_id": "c9", "ref_id": "inv-2#1"}, {"claim_id": "c2", "ref_id": "inv-9#9"}, {"claim_id": "c2"}, {}],
)
def test_a_wrong_claim_or_ref_is_refused_and_writes_nothing(reviewer_client, miscited, data):
    response = reviewer_client.post(reverse("admin:diagnosis_diagnosissession_miscited", args=[miscited.pk]), data)

    assert response.status_code == 400
    assert not BadCase.objects.filter(session=miscited).exists()


def test_recording_needs_a_post_and_the_triage_permission(reviewer_client, miscited, project):
    url = reverse("admin:diagnosis_diagnosissession_miscited", args=[miscited.pk])
    assert reviewer_client.get(url).status_code == 405

    viewer = UserFactory(username="viewer", is_staff=True)
    viewer.user_permissions.add(*_view_session_permission())
    assert logged_in(viewer).post(url, {"claim_id": "c2", "ref_id": "inv-2#1"}).status_code == 403
    assert not BadCase.objects.filter(session=miscited).exists()


def _view_session_permission():
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(codename="view_diagnosissession")


def test_the_new_labels_are_in_chinese(reviewer_client, miscited):
    reviewer_client.post(reverse("set_language"), {"language": "zh-hans"})

    page = _inspector(reviewer_client, miscited).content.decode()
    listed = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_changelist")).content.decode()

    assert "本会话中其他位置的候选证据" in page and "证据存在，但引用错误" in page
    assert "Candidate evidence" not in page and "cited wrong" not in page
    assert "未选择时为全部日期" in listed


def test_the_evidence_read_per_page_is_bounded(reviewer_client, project):
    payload = _miscited_payload("s-big")
    filler = "网关日志一切正常，无异常。" * 700  # ~9,000 characters a ref
    for n in range(20, 28):
        call = copy.deepcopy(payload["toolInvocations"][1])
        call["invocationId"] = f"inv-{n}"
        call["retrievalDetails"]["evidenceRefs"] = [
            {"refId": f"inv-{n}#1", "source": "loki://payment-gateway", "content": filler + "TLS 握手失败率 62%。"}
        ]
        payload["toolInvocations"].append(call)
    session = session_ingest_evaluated(project, payload)

    c2 = next(c for c in _inspector(reviewer_client, session).context["inspection"].claims if c.claim_id == "c2")

    assert [candidate.source.ref_id for candidate in c2.candidates][:1] == ["inv-2#1"]
    assert len(c2.candidates) <= MAX_CANDIDATES
    # A few of the 9,000-character refs fit the page's budget; the other mentions are counted, not read.
    read = 8 - c2.candidates_unread
    assert 0 < read <= MAX_ANALYSED_CHARS // 9000 and len(filler) < MAX_SOURCE_CHARS
