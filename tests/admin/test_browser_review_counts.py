"""The issue's counted targets in a real browser (Debian's Chromium): a claim's verdict corrected in
two keys, in English and in Chinese; five bad cases triaged by keyboard in fifteen actions or fewer."""

import pytest
from django.urls import reverse

from cases.models import BadCase
from diagnosis.models import ClaimCorrection
from tests import clock
from tests.admin.conftest import _user_in
from tests.admin.test_browser import CHROMIUM, Actions, browser, login, shot  # noqa: F401 - browser is a fixture
from tests.factories import ProjectFactory, evaluated_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]


@pytest.mark.parametrize(
    ("language", "confirmation"),
    [("en", "bob corrected the judge: Supported → Unsupported"), ("zh-hans", "bob 更正了判定器：有支撑 → 无支撑")],
)
def test_a_reviewer_corrects_a_claims_verdict_in_two_keys(browser, live_server, language, confirmation):  # noqa: F811
    chat = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    session = evaluated_session(chat, "s-claims", verdict="LOW_CONFID")
    _user_in("Reviewer", "bob")
    context = browser.new_context(
        viewport={"width": 1440, "height": 900}, extra_http_headers={"Accept-Language": language}
    )
    page = context.new_page()
    login(page, live_server.url, "bob")
    page.goto(f"{live_server.url}{reverse('admin:diagnosis_diagnosissession_change', args=[session.pk])}")
    actions = Actions(page)

    actions.press("j")  # the first claim, c1, which the judge calls supported
    with page.expect_navigation():
        actions.press("u")

    (correction,) = ClaimCorrection.objects.all()
    assert (correction.claim_id, correction.judge_verdict, correction.verdict) == ("c1", "SUPPORTED", "UNSUPPORTED")
    assert page.url.endswith("#claim-c1")
    assert confirmation in page.locator("#claim-c1 .se-correction-last").inner_text()
    assert actions.count == 2
    shot(page, f"claim-corrected-{language}")
    context.close()


def test_a_reviewer_triages_five_bad_cases_by_keyboard_in_fifteen_actions(browser, live_server):  # noqa: F811
    chat = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    for i in range(5):
        evaluated_session(
            chat, f"s-bad-{i}", verdict="REJECT", feedback="not_useful", created_at=clock.ago(hours=10 - i)
        )
    _user_in("Reviewer", "bob")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    page.goto(f"{live_server.url}{reverse('admin:cases_badcase_changelist')}?status__exact=open")
    actions = Actions(page)

    actions.click("#result_list tbody tr:first-child th a")
    for _ in range(5):
        page.wait_for_selector("#badcase_form")
        actions.press("2")  # the second category of the menu
        with page.expect_navigation():
            actions.press("Enter")  # triage & next

    categories = set(BadCase.objects.values_list("status", "category"))
    assert categories == {("triaged", BadCase._meta.get_field("category").choices[1][0])}
    assert BadCase.objects.count() == 5
    assert actions.count <= 15, actions.count
    shot(page, "five-bad-cases-triaged")


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_at_1024_px_every_navigation_link_is_on_screen_on_the_header(browser, live_server, language):  # noqa: F811
    _user_in("Case approver", "dana")  # an approver sees every link a reviewer sees, and more
    context = browser.new_context(
        viewport={"width": 1024, "height": 768}, extra_http_headers={"Accept-Language": language}
    )
    page = context.new_page()
    login(page, live_server.url, "dana")

    header = page.locator("#header").bounding_box()
    links = page.locator(".se-nav a").all()
    assert len(links) >= 8
    for link in links:
        box = link.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1024, link.inner_text()
        assert header["y"] <= box["y"] and box["y"] + box["height"] <= header["y"] + header["height"], link.inner_text()
        colour, background = link.evaluate(
            "a => [getComputedStyle(a).color, getComputedStyle(document.getElementById('header')).backgroundColor]"
        )
        assert colour != background, link.inner_text()  # never white on white
    shot(page, f"navigation-1024-{language}")
    context.close()
