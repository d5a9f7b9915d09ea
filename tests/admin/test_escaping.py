"""User content is shown as written and always escaped: injected HTML/JS renders as text on every page."""

import pytest
from django.urls import reverse

from backoffice.inspector import highlight_excerpt
from cases.models import BadCase, Case
from cases.services import bad_case_update, case_update
from tests.factories import (
    case_of,
    diagnosis_payload,
    evaluated_session,
    feedback_of,
    review_of,
    session_ingest_evaluated,
)

pytestmark = pytest.mark.django_db

XSS = "<script>alert('x')</script>"
ESCAPED = "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;"


@pytest.fixture
def hostile(project, reviewer, approver):
    """Markup in every field a user or an agent can write, stored through the real services."""
    excerpt = f"连接池耗尽{XSS}"
    payload = diagnosis_payload(
        f"s-{XSS}",
        mode="aiops",
        verdict="REJECT",
        query=f"query {XSS}",
        answer=f"answer {XSS}",
        claim_text=f"claim {XSS}",
        excerpt=excerpt,
        ref_content=f"before {excerpt} after <img src=x onerror=alert(1)>",
    )
    payload["alert"] |= {"name": f"alert {XSS}", "service": f"svc {XSS}"}  # named in the AIOps check reasons
    session = session_ingest_evaluated(project, payload)
    feedback_of(session, "not_useful", comment=f"comment {XSS}", reviewer=XSS)
    case = case_of(session)
    case_update(
        case=case,
        user=approver,
        changes={
            "title": f"title {XSS}",
            "root_cause": f"cause {XSS}",
            "solution": f"fix {XSS}",
            "service": XSS,
            "error_code": XSS,
        },
    )
    bad_case_update(bad_case=BadCase.objects.get(session=session), user=reviewer, notes=f"notes {XSS}")
    review_of(session, reviewer, judgement="wrong", verifier_was_right=True, notes=f"review {XSS}")
    return session


def pages(session):
    case = Case.objects.get(session=session)
    bad_case = BadCase.objects.get(session=session)
    return [
        reverse("admin:index"),
        reverse("admin:calibration"),
        reverse("admin:diagnosis_diagnosissession_changelist"),
        reverse("admin:diagnosis_diagnosissession_changelist") + f"?aiops_failed_check=check+{XSS}",
        reverse("admin:diagnosis_diagnosissession_change", args=[session.pk]),
        reverse("admin:backoffice_triageitem_changelist") + "?reason=reject",
        reverse("admin:diagnosis_claimcheck_changelist"),
        reverse("admin:diagnosis_sessionreview_changelist"),
        reverse("admin:feedback_feedbackevent_changelist"),
        reverse("admin:cases_case_changelist"),
        reverse("admin:cases_case_change", args=[case.pk]),
        reverse("admin:cases_badcase_changelist"),
        reverse("admin:cases_badcase_change", args=[bad_case.pk]),
    ]


def test_injected_markup_renders_as_text_on_every_page(approver_client, hostile):
    # The reviewed session left the queue; put it back so the triage page shows it too.
    type(hostile).objects.filter(pk=hostile.pk).update(reviewed_at=None, review_judgement="")
    for url in pages(hostile):
        response = approver_client.get(url)
        assert response.status_code == 200, url
        html = response.content.decode()
        assert "<script>alert" not in html, url
        assert "<img src=x" not in html, url


def test_inspector_shows_every_hostile_field_escaped(approver_client, hostile):
    html = approver_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[hostile.pk])).content.decode()

    for text in ("query ", "answer ", "claim ", "comment ", "review ", "svc "):
        assert f"{text}{ESCAPED}" in html, text
    # The excerpt is marked inside the escaped ref content.
    assert f"<mark>连接池耗尽{ESCAPED}</mark>" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_highlight_escapes_before_marking():
    html, found = highlight_excerpt("a <b>bold</b> & <i>x</i>", "<b>bold</b>")

    assert found
    assert str(html) == "a <mark>&lt;b&gt;bold&lt;/b&gt;</mark> &amp; &lt;i&gt;x&lt;/i&gt;"


def test_highlight_matches_across_case_and_whitespace_and_reports_misses():
    html, found = highlight_excerpt("Connection   Pool exhausted", "connection pool")
    assert found and str(html) == "<mark>Connection   Pool</mark> exhausted"

    html, found = highlight_excerpt("nothing here", "<x>")
    assert not found and str(html) == "nothing here"


def test_highlight_cuts_long_content_around_the_match():
    content = "x" * 1000 + "needle" + "y" * 1000

    html, found = highlight_excerpt(content, "needle", window=10)

    assert found and str(html) == "…" + "x" * 10 + "<mark>needle</mark>" + "y" * 10 + "…"


def test_inspector_survives_broken_layers(reviewer_client, project):
    session = evaluated_session(project, "s-broken")
    type(session).objects.filter(pk=session.pk).update(
        self_evaluation={
            "rule_evaluation": "not a dict",
            "verifier_evaluation": {"claim_checks": [1, None, {"claimId": 5}], "gatekeeper_result": []},
            "aiops_rule_evaluation": {"checks": "nope"},
        }
    )
    session.claim_checks.all().delete()

    response = reviewer_client.get(reverse("admin:diagnosis_diagnosissession_change", args=[session.pk]))

    assert response.status_code == 200
    assert "rule_evaluation" in response.content.decode()


def test_highlight_marks_what_the_gatekeeper_matched_across_cjk_spacing_and_width():
    html, found = highlight_excerpt("数据库 连接池 耗尽，ＨＴＴＰ ５０３", "连接池耗尽")
    assert found and str(html) == "数据库 <mark>连接池 耗尽</mark>，ＨＴＴＰ ５０３"

    html, found = highlight_excerpt("数据库 连接池 耗尽，ＨＴＴＰ ５０３", "http 503")
    assert found and str(html) == "数据库 连接池 耗尽，<mark>ＨＴＴＰ ５０３</mark>"
