"""In a real browser at 1440 px: the session list fits its box and finds Chinese text; the inspector
renders the answer, highlights a claim's sentence on hover, and records a miscitation in one click.

Screenshots land in test-output/screenshots/ (see test_browser.py).
"""

import pytest

from cases.models import BadCase, BadCaseCategory
from diagnosis.models import DiagnosisSession
from tests.admin.test_browser import CHROMIUM, browser, demo_data, login, shot  # noqa: F401 - fixtures
from tests.admin.test_candidate_evidence import _miscited_payload
from tests.factories import session_ingest_evaluated

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]

LIST_GEOMETRY = """() => {
  const table = document.querySelector('#result_list');
  const box = table.closest('.results');
  const created = [...table.querySelectorAll('thead th')].pop().getBoundingClientRect();
  return {table: table.getBoundingClientRect().width, box: box.clientWidth, scroll: box.scrollWidth,
          created_right: created.right, box_right: box.getBoundingClientRect().right,
          page: document.documentElement.scrollWidth};
}"""


@pytest.fixture
def miscited(demo_data):  # noqa: F811 - the fixture imported above
    project = demo_data["target"].project
    return session_ingest_evaluated(project, _miscited_payload())


def _fits(geometry: dict) -> bool:
    return (
        geometry["scroll"] <= geometry["box"] + 1
        and geometry["created_right"] <= geometry["box_right"] + 1
        and geometry["page"] <= 1440
    )


def test_session_list_fits_at_1440_and_finds_chinese_text(browser, live_server, miscited):  # noqa: F811
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    page.goto(f"{live_server.url}/admin/diagnosis/diagnosissession/")
    assert _fits(page.evaluate(LIST_GEOMETRY)), page.evaluate(LIST_GEOMETRY)
    assert page.locator("#result_list .se-query").count() > 0
    shot(page, "21-session-list")

    page.fill("#searchbar", "证书")
    page.press("#searchbar", "Enter")
    page.wait_for_selector("#result_list")
    rows = page.locator("#result_list tbody tr").all_inner_texts()
    assert [row.split()[0] for row in rows] == [miscited.session_id]

    with page.expect_navigation():
        page.select_option("#se-language", "zh-hans")
    page.goto(f"{live_server.url}/admin/diagnosis/diagnosissession/")
    assert _fits(page.evaluate(LIST_GEOMETRY)), page.evaluate(LIST_GEOMETRY)
    shot(page, "22-session-list-zh")
    page.close()


def test_inspector_renders_highlights_and_records_a_miscitation(browser, live_server, miscited):  # noqa: F811
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")
    page.goto(f"{live_server.url}/admin/diagnosis/diagnosissession/{miscited.pk}/change/")

    assert page.locator("#se-answer h2").inner_text() == "根因"  # markdown, rendered
    page.hover("#claim-c2")
    highlighted = page.evaluate(
        "() => CSS.highlights.has('se-claim-sentence') && CSS.highlights.get('se-claim-sentence').values().next()"
        ".value.toString()"
    )
    assert highlighted == "TLS 握手失败率达到 62%。"
    candidate = page.locator("#claim-c2 .se-candidate").first
    assert "inv-2#1" in candidate.inner_text()
    assert candidate.locator("mark").all_inner_texts() == ["TLS", "握手失败率", "62%"]
    shot(page, "23-inspector-candidates")

    candidate.locator("button").click()  # one click: "Evidence existed, cited wrong"
    page.wait_for_selector(".messagelist")
    assert "inv-2#1" in page.locator(".messagelist").inner_text()
    bad = BadCase.objects.get(session=DiagnosisSession.objects.get(pk=miscited.pk))
    assert bad.category == BadCaseCategory.MISCITED_EVIDENCE
    page.close()
