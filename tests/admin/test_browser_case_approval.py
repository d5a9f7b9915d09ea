"""An approver decides on cases from the keyboard, warned about doubted sessions (Debian's Chromium)."""

import pytest

from cases.models import Case, CaseStatus
from tests.admin.conftest import _user_in
from tests.admin.test_browser import CHROMIUM, Actions, browser, login, shot  # noqa: F401 - browser is a fixture
from tests.factories import ProjectFactory, case_of, evaluated_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]


@pytest.fixture
def cases():
    chat = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    _user_in("Case approver", "dana")
    return {
        "rejected": case_of(evaluated_session(chat, "s-reject", verdict="REJECT")),
        "passed": case_of(evaluated_session(chat, "s-pass", verdict="PASS")),
    }


def test_approving_a_case_from_a_reject_session_warns_and_needs_confirmation(browser, live_server, cases):  # noqa: F811
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "dana")
    case = cases["rejected"]
    page.goto(f"{live_server.url}/admin/cases/case/{case.pk}/change/")
    actions = Actions(page)

    assert page.locator(".se-warning").is_visible()
    assert page.locator("#se-case-keys").is_visible()
    actions.press("a")  # moves to the confirmation box, approves nothing
    assert Case.objects.get(pk=case.pk).status == CaseStatus.PENDING
    shot(page, "case-reject-session-warning")
    actions.press("Space")
    actions.press("a")
    page.wait_for_selector(".messagelist")

    assert actions.count <= 3
    assert Case.objects.get(pk=case.pk).status == CaseStatus.APPROVED


def test_approver_approves_a_case_from_a_passing_session_with_one_key(browser, live_server, cases):  # noqa: F811
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "dana")
    case = cases["passed"]
    page.goto(f"{live_server.url}/admin/cases/case/{case.pk}/change/")

    assert page.locator(".se-warning").count() == 0
    page.keyboard.press("a")
    page.wait_for_selector(".messagelist")

    assert Case.objects.get(pk=case.pk).status == CaseStatus.APPROVED
