"""A reviewer triages from the queue with the keyboard, in a real browser (Debian's Chromium).

Screenshots land in test-output/screenshots/ (workflow-*.png) for a person to look at.
"""

import re

import pytest

from backoffice.models import ReviewLock
from backoffice.triage import TriageQueueAdmin
from diagnosis.models import SessionReview
from tests import clock
from tests.admin.conftest import _user_in
from tests.admin.test_browser import CHROMIUM, browser, login, shot  # noqa: F401 - browser is a fixture
from tests.factories import ProjectFactory, evaluated_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]


@pytest.fixture
def queue():
    """Four REJECT sessions (oldest first) and two LOW_CONFID ones wait for review; one PASS does not."""
    chat = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    sessions = [
        evaluated_session(
            chat,
            f"s-{i:02}",
            verdict="REJECT" if i % 3 else "LOW_CONFID",
            created_at=clock.ago(hours=20 - i),
            query=f"订单服务 5xx 突增，原因是什么？（第 {i} 次）",
        )
        for i in range(1, 7)
    ]
    evaluated_session(chat, "s-pass", created_at=clock.ago(hours=1))
    return {
        "reject": [s for s in sessions if s.verifier_verdict == "REJECT"],
        "reviewer": _user_in("Reviewer", "bob"),
        "alice": _user_in("Reviewer", "alice"),
    }


def test_reviewer_triages_the_filtered_queue_with_the_keyboard(browser, live_server, queue):  # noqa: F811
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    page.goto(f"{live_server.url}/admin/backoffice/triageitem/?reason=reject")
    page.wait_for_selector("body.se-triage #result_list")
    shot(page, "workflow-01-queue-filtered")
    first, second, third = queue["reject"][:3]

    # Keyboard: j selects the oldest row, o opens it in the inspector, inside the filtered queue.
    page.keyboard.press("j")
    page.keyboard.press("o")
    page.wait_for_selector(".se-decision")
    assert page.locator("h1").first.inner_text() == first.session_id
    assert page.locator(".se-position").inner_text() == "1 / 4"
    assert "Triage queue (filtered)" in page.locator(".breadcrumbs").inner_text()
    # The keys' legend is in view, below the decision and above the answer and the evidence.
    legend = page.locator(".se-decision .se-keys").bounding_box()
    assert page.locator(".se-verdict-summary").bounding_box()["y"] < legend["y"]
    assert legend["y"] < page.locator(".se-qa").bounding_box()["y"] and legend["y"] + legend["height"] < 900
    page.keyboard.press("?")
    assert page.locator("#se-key-help").is_visible()
    shot(page, "workflow-02-inspector-keys")
    page.keyboard.press("?")

    # 3 = wrong, y = the verifier was right, Enter = save & next: three keys per session.
    page.keyboard.press("3")
    page.keyboard.press("y")
    assert page.locator("input[name=judgement][value=wrong]").is_checked()
    assert page.locator("input[name=verifier_was_right][value=yes]").is_checked()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/diagnosissession/{second.pk}/change/\?"))
    assert "_changelist_filters=reason%3Dreject" in page.url and "_list=triage" in page.url
    assert page.locator(".se-position").inner_text() == "1 / 3"  # the first left the queue
    assert "left the triage queue" in page.locator(".messagelist").inner_text()
    shot(page, "workflow-03-next-session")

    # A note, written without the mouse, then saved from the note with Ctrl+Enter.
    page.keyboard.press("2")
    page.keyboard.press("n")
    page.keyboard.press("e")
    page.keyboard.type("根因在下游支付服务超时")
    page.keyboard.press("Control+Enter")
    page.wait_for_url(re.compile(rf"/diagnosissession/{third.pk}/change/\?"))

    # s skips without saving, p comes back; b returns to the queue with its filter.
    page.keyboard.press("s")
    page.wait_for_url(re.compile(rf"/diagnosissession/{queue['reject'][3].pk}/change/\?"))
    page.keyboard.press("p")
    page.wait_for_url(re.compile(rf"/diagnosissession/{third.pk}/change/\?"))
    page.keyboard.press("b")
    page.wait_for_url(re.compile(r"/admin/backoffice/triageitem/\?reason=reject$"))
    shot(page, "workflow-04-back-in-the-queue")

    reviews = {r.session_id: (r.judgement, r.verifier_was_right, r.notes) for r in SessionReview.objects.all()}
    assert reviews == {first.pk: ("wrong", True, ""), second.pk: ("partly_correct", False, "根因在下游支付服务超时")}
    assert page.locator("#result_list tbody tr").count() == 2
    page.close()


def test_selection_survives_paging_and_bulk_review_judges_each(browser, live_server, queue, monkeypatch):  # noqa: F811
    monkeypatch.setattr(TriageQueueAdmin, "list_per_page", 2)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    page.goto(f"{live_server.url}/admin/backoffice/triageitem/")
    page.locator("input.action-select").first.check()
    page.goto(f"{live_server.url}/admin/backoffice/triageitem/?p=2")
    page.locator("input.action-select").first.check()
    assert "Selected on other pages: 1" in page.locator(".se-selection-note").inner_text()
    page.goto(f"{live_server.url}/admin/backoffice/triageitem/")
    assert page.locator("input.action-select").first.is_checked()  # re-checked from the kept selection
    shot(page, "workflow-05-selection-kept")
    page.select_option("select[name=action]", "mark_reviewed")
    page.click("button[name=index]")
    page.wait_for_selector(".se-bulk-review-table")
    assert page.locator(".se-bulk-review-table tbody tr").count() == 2
    page.check("input[name=review-0-judgement][value=wrong]")
    page.check("input[name=review-0-verifier_was_right][value=yes]")
    page.check("input[name=review-1-judgement][value=correct]")
    page.check("input[name=review-1-verifier_was_right][value=no]")
    shot(page, "workflow-06-bulk-review")
    page.click("text=Save these reviews")
    page.wait_for_selector(".messagelist")
    assert "Reviews recorded: 2; skipped: 0." in page.locator(".messagelist").inner_text()
    assert sorted(SessionReview.objects.values_list("judgement", flat=True)) == ["correct", "wrong"]
    page.close()


def test_a_second_reviewer_sees_who_is_reviewing(browser, live_server, queue):  # noqa: F811
    session = queue["reject"][0]
    inspector = f"{live_server.url}/admin/diagnosis/diagnosissession/{session.pk}/change/?_list=triage"
    alice = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    login(alice, live_server.url, "alice")
    alice.goto(inspector)
    alice.wait_for_function("document.getElementById('se-presence') !== null")
    alice.wait_for_timeout(500)  # her page's first heartbeat
    assert ReviewLock.objects.get().holder.username == "alice"

    bob = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
    login(bob, live_server.url, "bob")
    bob.goto(inspector)
    assert "alice is reviewing this" in bob.locator("#se-presence").inner_text()
    bob.click("#se-take")
    bob.wait_for_selector(".messagelist")
    assert "Assigned to bob" in bob.locator(".se-assignment").inner_text()
    shot(bob, "workflow-07-someone-else-reviewing")
    bob.goto(f"{live_server.url}/admin/backoffice/triageitem/?assigned=me")
    assert bob.locator("#result_list tbody tr").count() == 1
    assert "alice reviewing" in bob.locator("#result_list").inner_text()
    shot(bob, "workflow-08-my-queue")

    alice.goto(f"{live_server.url}/admin/")  # leaving the page says goodbye
    alice.wait_for_timeout(500)
    assert not ReviewLock.objects.filter(holder__username="alice").exists()
    alice.close()
    bob.close()
