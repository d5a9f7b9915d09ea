"""A reviewer and an approver use the admin in a real browser (Debian's Chromium, driven by Playwright).

Screenshots land in test-output/screenshots/ for a person to look at.
"""

import re
from pathlib import Path

import pytest

from cases.models import BadCase, Case
from diagnosis.models import DiagnosisSession, SessionReview
from tests import clock
from tests.admin.conftest import PASSWORD, _user_in
from tests.factories import ProjectFactory, evaluated_session

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.browser,
    # The roles are created by a migration; a transactional test's flush must bring them back.
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
]


@pytest.fixture
def browser(monkeypatch):
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls stay
    # synchronous. Scoped to the test, so no later subprocess inherits the flag.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        # Nothing reaches the live server after the test: a closing inspector's goodbye beacon
        # (pagehide) would land in the next test's database set-up and find its tables locked.
        for context in browser.contexts:
            context.route("**/*", lambda route: route.abort())
        browser.close()


@pytest.fixture
def demo_data():
    """Thirty evaluated sessions of two projects, through the real services; one to inspect and triage."""
    chat = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    aiops = ProjectFactory(slug="acme-aiops", name="ACME AIOps agent")
    for i in range(24):
        verdict = ["PASS", "PASS", "LOW_CONFID", "REJECT"][i % 4]
        feedback = ["useful", "", "not_useful", "not_useful"][i % 4] if i % 3 else ""
        evaluated_session(
            chat,
            f"s-{i:04}",
            verdict=verdict,
            feedback=feedback,
            created_at=clock.ago(days=i % 12, hours=i),
            match_level=["L0", "L1"][i % 2],
        )
    for i in range(6):
        evaluated_session(
            aiops,
            f"a-{i:04}",
            mode="aiops",
            aiops_failure="unrelated_alerts_not_main_object" if i % 2 else None,
            created_at=clock.ago(days=i, hours=3),
        )
    target = evaluated_session(
        chat,
        "s-inspect-0001",
        verdict="REJECT",
        feedback="not_useful",
        comment="根因不对，是下游超时",
        created_at=clock.ago(days=20),
        answer="order-service 的 5xx 错误率升至 25%，数据库连接池耗尽。建议把连接池从 20 调到 50。",
    )
    case = Case.objects.filter(project=chat).order_by("session__created_at").first()  # from useful feedback
    bad = BadCase.objects.get(session=target)
    reviewer = _user_in("Reviewer", "bob")
    approver = _user_in("Case approver", "dana")
    return {"target": target, "case": case, "bad": bad, "reviewer": reviewer, "approver": approver}


def login(page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(re.compile(r"/admin/$"))


def shot(page, name: str) -> None:
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_reviewer_walks_dashboard_inspects_reviews_and_triages(browser, live_server, demo_data):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    assert page.locator(".se-kpi").count() == 7  # the six of the sessions, and the spans refused over OTLP
    shot(page, "01-reviewer-dashboard")

    page.click("text=Does PASS mean useful?")
    page.wait_for_selector(".se-matrix")
    shot(page, "02-calibration")

    page.click("nav.se-nav >> text=Triage queue")
    page.wait_for_selector("body.se-triage #result_list")
    shot(page, "03-triage-queue")
    # Keyboard: j moves to the first (oldest) row, o opens it.
    page.keyboard.press("j")
    page.keyboard.press("o")
    page.wait_for_selector(".se-views")
    assert page.locator("h1").first.inner_text() == "s-inspect-0001"
    assert "The evidence says «12.5%» where the claim says «25%»." in page.locator("#claim-c1").inner_text()
    page.click("#claim-c1 .se-claim-detail summary")  # the cited excerpt is behind the claim's fold
    assert page.locator(".se-ref mark").first.inner_text() == "5xx 错误率升至 12.5%"
    page.click("text=Raw self_evaluation JSON")
    shot(page, "04-session-inspector")

    page.check("input[name=judgement][value=wrong]")
    page.check("input[name=verifier_was_right][value=yes]")
    page.fill("textarea[name=notes]", "The verifier rejected it rightly: the cause is a downstream timeout.")
    page.click("text=Save review")
    page.wait_for_selector(".messagelist")
    assert "left the triage queue" in page.locator(".messagelist").inner_text()
    review = SessionReview.objects.get(session=demo_data["target"])
    assert (review.judgement, review.verifier_was_right) == ("wrong", True)
    assert not DiagnosisSession.objects.get(pk=demo_data["target"].pk).needs_review

    # Bad-case triage: assign to me from the list, then set status, category and notes.
    page.goto(f"{live_server.url}/admin/cases/badcase/")
    page.check(f"input[name=_selected_action][value='{demo_data['bad'].pk}']")
    page.select_option("select[name=action]", "assign_to_me")
    page.click("button[name=index]")
    page.wait_for_selector(".messagelist")
    shot(page, "05-bad-cases")
    page.click(f"a[href$='/admin/cases/badcase/{demo_data['bad'].pk}/change/']")
    page.select_option("#id_status", "triaged")
    page.select_option("#id_category", "wrong_root_cause")
    page.fill("#id_notes", "Downstream payment-service timeouts; runbook needs an entry.")
    shot(page, "06-bad-case-change")
    page.click("input[name=_save]")
    page.wait_for_selector(".messagelist")
    bad = BadCase.objects.get(pk=demo_data["bad"].pk)
    assert (bad.status, bad.category, bad.assignee_id) == ("triaged", "wrong_root_cause", demo_data["reviewer"].pk)

    # A reviewer sees cases but cannot approve them.
    page.goto(f"{live_server.url}/admin/cases/case/")
    options = page.locator("select[name=action] option").all_inner_texts()
    assert not any("Approve" in option for option in options)
    page.close()


class Actions:
    """Counts what the person does (a click, a choice, a field filled); reading the page is free."""

    def __init__(self, page):
        self.page, self.count = page, 0

    def click(self, selector: str) -> None:
        self.count += 1
        self.page.click(selector)

    def fill(self, selector: str, value: str) -> None:
        self.count += 1
        self.page.fill(selector, value)

    def select(self, selector: str, value: str) -> None:
        self.count += 1
        self.page.select_option(selector, value)

    def press(self, key: str) -> None:
        self.count += 1
        self.page.keyboard.press(key)


def test_reviewer_triages_a_bad_case_in_four_actions_without_leaving_the_page(browser, live_server, demo_data):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    page.goto(f"{live_server.url}/admin/cases/badcase/?status__exact=open")
    bad = demo_data["bad"]
    actions = Actions(page)

    actions.click(f"#result_list a[href*='/admin/cases/badcase/{bad.pk}/change/']")
    page.wait_for_selector(".se-side-session")
    panel = page.locator(".se-side-session").inner_text()
    # Everything needed to decide is beside the form: query, answer, verdict, claims, feedback.
    assert demo_data["target"].query in panel and "数据库连接池耗尽" in panel
    assert "Contradicted" in panel and "根因不对，是下游超时" in panel
    assert "Unsupported reasoning" in panel
    assert page.input_value("#id_category") == "hallucination"  # suggested from the attribution
    actions.select("#id_status", "triaged")
    actions.fill("#id_notes", "Contradicted by the log: 12.5 %, not 25 %.")
    shot(page, "11-bad-case-with-context")
    actions.click("#se-triage-next")
    page.wait_for_selector(".messagelist")

    assert actions.count <= 4
    stored = BadCase.objects.get(pk=bad.pk)
    assert (stored.status, stored.category) == ("triaged", "hallucination")
    assert stored.notes.startswith("Contradicted by the log")
    # The next open bad case is open, in the same list.
    assert f"/admin/cases/badcase/{bad.pk}/" not in page.url and "_changelist_filters=status__exact" in page.url
    following = BadCase.objects.get(pk=int(page.url.split("/badcase/")[1].split("/")[0]))
    assert following.status == "open"
    assert page.locator(".se-side-session").count() == 1
    shot(page, "12-next-open-bad-case")
    page.close()


def test_approver_edits_and_approves_a_case_in_four_actions(browser, live_server, demo_data):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "dana")
    page.click("nav.se-nav >> text=Cases to curate")
    page.wait_for_selector("#result_list")
    shot(page, "07-case-list")
    case = demo_data["case"]
    actions = Actions(page)

    actions.click(f"#result_list a[href*='/admin/cases/case/{case.pk}/change/']")
    page.wait_for_selector(".se-side-session")
    actions.fill("#id_solution", "扩大连接池到 50，并为慢查询加索引")
    actions.fill("#id_decision_note", "Checked against the runbook.")
    shot(page, "08-case-side-by-side")
    actions.click("input[name=_approve]")
    page.wait_for_selector(".messagelist")

    assert actions.count <= 4
    assert "saved and approved" in page.locator(".messagelist").inner_text()
    stored = Case.objects.get(pk=case.pk)
    assert (stored.status, stored.reviewed_by_id) == ("approved", demo_data["approver"].pk)
    assert stored.solution == "扩大连接池到 50，并为慢查询加索引"
    assert stored.review_note == "Checked against the runbook."
    assert list(stored.revisions.order_by("pk").values_list("action", flat=True)) == ["create", "edit", "approve"]
    # Moved on to the next pending case of the same list.
    assert f"/admin/cases/case/{case.pk}/" not in page.url and "/admin/cases/case/" in page.url
    assert "_changelist_filters=status__exact" in page.url
    shot(page, "13-next-pending-case")
    page.close()


def test_leaving_a_case_form_with_unsaved_edits_asks_first(browser, live_server, demo_data):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "dana")
    case = demo_data["case"]
    page.goto(f"{live_server.url}/admin/cases/case/{case.pk}/change/")
    dialogs = []

    def stay(dialog):
        dialogs.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", stay)
    page.click("nav.se-nav >> text=Sessions")  # nothing edited: leaves without asking
    page.wait_for_selector("#result_list")
    assert dialogs == []

    page.go_back()
    page.wait_for_selector("#id_solution")
    page.fill("#id_solution", "an edit not saved yet")
    page.click("nav.se-nav >> text=Sessions")
    page.wait_for_timeout(500)
    assert dialogs == ["beforeunload"]
    assert "/admin/cases/case/" in page.url and page.input_value("#id_solution") == "an edit not saved yet"
    assert Case.objects.get(pk=case.pk).status == "pending"
    page.close()


def test_reviewer_reads_the_evolution_log(browser, live_server, demo_data):
    from evolution.services.verification import evolution_verify
    from tests.evolution.samples import NEW_STUDY_ANSWER, OLD_STUDY_ANSWER, STUDY_QUERY

    result = evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    page.click("nav.se-nav >> text=Evolution verifications")
    page.wait_for_selector("#result_list")
    page.goto(f"{live_server.url}/admin/evolution/verificationlog/{result.log_id}/change/")
    page.wait_for_selector(".se-evo-dimensions")
    assert page.locator(".se-evo-answers section").count() == 2
    shot(page, "14-evolution-detail-reviewer")
    page.click("nav.se-nav >> text=Thresholds")
    page.wait_for_selector("#verificationthresholds_form")
    assert page.locator("input[name=min_confidence]").count() == 0  # read-only
    shot(page, "15-thresholds-reviewer")
    page.close()


def test_dashboard_in_chinese(browser, live_server, demo_data):
    page = browser.new_page(viewport={"width": 1440, "height": 900}, locale="zh-CN")
    login(page, live_server.url, "bob")
    page.select_option("#se-language", "zh-hans")
    page.wait_for_selector("html[lang=zh-hans]")
    assert "仪表盘" in page.content()
    shot(page, "09-dashboard-zh")
    page.goto(f"{live_server.url}/admin/diagnosis/diagnosissession/{demo_data['target'].pk}/change/")
    shot(page, "10-inspector-zh")
    page.close()


def test_dashboard_trends_are_charts_with_their_tables(browser, live_server, demo_data):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    charts = page.locator(".se-trends .se-chart")
    assert charts.count() == 4
    assert page.locator(".se-trends svg rect").count() > 0
    table = charts.first.locator("details table")
    assert not table.is_visible()
    charts.first.locator("summary").click()
    assert table.is_visible() and table.locator("tbody tr").count() == 30  # a row per day of the range
    waiting = page.locator(".se-kpi-warn .se-kpi-value").inner_text()
    shot(page, "16-dashboard-trends")

    page.click(".se-kpi-warn")
    page.wait_for_selector("body.se-triage #result_list")
    assert waiting == str(DiagnosisSession.objects.filter(needs_review=True).count())
    page.close()
