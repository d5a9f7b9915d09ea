"""Taking ten sessions from the triage queue in two actions, in a real browser (Debian's Chromium):
open the queue from the navigation, press t."""

import pytest

from backoffice.models import TriageAssignment
from tests import clock
from tests.admin.conftest import _user_in
from tests.admin.test_browser import CHROMIUM, Actions, browser, login, shot  # noqa: F401 - browser is a fixture
from tests.factories import ProjectFactory, evaluated_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]


def test_a_reviewer_takes_the_next_ten_in_two_actions(browser, live_server):  # noqa: F811
    chat = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    for i in range(12):
        evaluated_session(chat, f"s-{i:02}", verdict="REJECT", created_at=clock.ago(hours=30 - i))
    bob = _user_in("Reviewer", "bob")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    actions = Actions(page)

    actions.click("a[href$='/admin/backoffice/triageitem/']")
    page.wait_for_selector("#se-take-next")
    actions.press("t")
    page.wait_for_load_state("networkidle")

    taken = TriageAssignment.objects.filter(assignee=bob).order_by("session__created_at")
    assert list(taken.values_list("session__session_id", flat=True)) == [f"s-{i:02}" for i in range(10)]
    assert actions.count == 2
    shot(page, "take-next-ten")
