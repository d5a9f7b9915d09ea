"""The inspector opens on the decision: at 1440 x 900 the REJECT's reason and its first failing
claim show without scrolling, in English and in Chinese (Debian's Chromium, driven by Playwright)."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from diagnosis.models import DiagnosisSession
from tests.admin.conftest import _user_in
from tests.admin.test_browser import CHROMIUM, SHOTS, browser, login  # noqa: F401 (the browser fixture)
from tests.factories import ProjectFactory, diagnosis_payload, feedback_of, session_ingest_evaluated

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]

VIEWPORT = {"width": 1440, "height": 900}
ANSWER = (
    "## 根因\norder-service 的 5xx 错误率升至 25%，数据库连接池耗尽。\n\n" + "排查步骤：检查连接池与下游依赖。\n" * 60
)


@pytest.fixture
def newest_reject():
    """An AIOps REJECT whose other badges read well: AIOps Pass, a high evidence score, an excerpt
    found; a supported claim before the contradicted one; a long answer; voted not useful."""
    project = ProjectFactory(slug="acme-aiops", name="ACME AIOps agent")
    payload = diagnosis_payload("a-reject-0001", verdict="REJECT", mode="aiops", answer=ANSWER)
    supported = {
        "claimId": "c0",
        "text": "08:00 起 order-service 的 5xx 错误率升高",
        "critical": False,
        "evidence": [{"refId": "inv-1#1", "excerpt": "08:00 起 order-service 的 5xx 错误率升至 12.5%"}],
    }
    payload["executorOutput"]["claims"].insert(0, supported)
    session = session_ingest_evaluated(project, payload)
    assert (session.verifier_verdict, session.aiops_verdict) == ("REJECT", "PASS")
    feedback_of(session, "not_useful", comment="根因不对，是下游超时")
    _user_in("Reviewer", "bob")
    return session


@pytest.mark.parametrize(
    ("language", "reason", "claim_words"),
    [
        (
            "en",
            "The evidence contradicts a critical claim (c1).",
            "The evidence says «12.5%» where the claim says «25%».",
        ),
        ("zh-hans", "证据与关键论断矛盾（c1）。", "证据说的是 «12.5%»，而论断说的是 «25%»。"),
    ],
)
def test_the_reject_reason_and_the_failing_claim_show_without_scrolling(
    browser,  # noqa: F811
    live_server,
    newest_reject,
    language,
    reason,
    claim_words,
):
    context = browser.new_context(viewport=VIEWPORT, extra_http_headers={"Accept-Language": language})
    page = context.new_page()
    login(page, live_server.url, "bob")
    page.goto(live_server.url + reverse("admin:diagnosis_diagnosissession_change", args=[newest_reject.pk]))

    shown_reason = page.locator("#se-verdict-reason")
    first_failing = page.locator(".se-failing-claim").first
    assert shown_reason.inner_text() == reason
    assert first_failing.locator("code").inner_text() == "c1"
    assert claim_words in first_failing.inner_text()
    reason_box, claim_box = shown_reason.bounding_box(), first_failing.bounding_box()
    assert reason_box["y"] + reason_box["height"] < VIEWPORT["height"]
    assert claim_box["y"] + claim_box["height"] < VIEWPORT["height"]
    assert page.evaluate("window.scrollY") == 0
    # The badges beside the REJECT say what they measure, and a line says why they read better.
    notes = page.locator(".se-badge-notes li").all_inner_texts()
    assert len(notes) >= 2
    assert page.locator(".se-scores .se-score-what").count() == 5
    page.screenshot(path=str(SHOTS / f"21-decision-first-{language}.png"))  # what the viewport shows
    # The unit-by-unit detail waits behind its fold.
    detail = page.locator("#claim-c1 details.se-claim-detail")
    assert not detail.evaluate("node => node.open")
    detail.locator("summary").click()
    assert detail.locator(".se-ref mark").first.is_visible()
    page.screenshot(path=str(SHOTS / f"22-claim-detail-{language}.png"), full_page=True)
    context.close()


@pytest.fixture
def demo_newest_reject():
    """The demo's newest REJECT, as the issue measured it (seed_demo, evaluated by the real pipeline)."""
    call_command("seed_demo", sessions=60, stdout=StringIO())
    _user_in("Reviewer", "bob")
    return DiagnosisSession.objects.filter(verifier_verdict="REJECT").order_by("-created_at").first()


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_demo_newest_reject_opens_on_its_decision(browser, live_server, demo_newest_reject, language):  # noqa: F811
    context = browser.new_context(viewport=VIEWPORT, extra_http_headers={"Accept-Language": language})
    page = context.new_page()
    login(page, live_server.url, "bob")
    page.goto(live_server.url + reverse("admin:diagnosis_diagnosissession_change", args=[demo_newest_reject.pk]))

    boxes = [page.locator("#se-verdict-reason").bounding_box(), page.locator(".se-failing-claim").first.bounding_box()]
    page.screenshot(path=str(SHOTS / f"23-demo-newest-reject-{language}.png"))
    assert all(box["y"] + box["height"] < VIEWPORT["height"] for box in boxes), boxes
    assert page.locator(".se-failing-claim .se-claim-summary").first.inner_text()

    # A REJECT of claims the agent found nothing for: said once a claim, no candidate box repeated.
    nothing = (
        DiagnosisSession.objects.filter(verifier_verdict="REJECT")
        .exclude(claim_checks__verdict__in=["SUPPORTED", "CONTRADICTED", "UNSUPPORTED"])
        .order_by("-created_at")
        .first()
    )
    page.goto(live_server.url + reverse("admin:diagnosis_diagnosissession_change", args=[nothing.pk]))
    claims = page.locator(".se-claim")
    assert claims.count() >= 2
    for n in range(claims.count()):
        assert claims.nth(n).locator(".se-claim-summary").count() == 1
    assert page.locator(".se-candidates").count() == 0 and page.locator(".se-no-candidates").count() == 1
    page.screenshot(path=str(SHOTS / f"24-demo-nothing-found-{language}.png"), full_page=True)
    context.close()
