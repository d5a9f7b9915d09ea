"""In a real browser: a reviewer walks a conversation's turns in the inspector, and follows the
dashboard's count of spans refused over OTLP to the refused trace and its reason."""

import re

import pytest

from tests.admin.conftest import _user_in
from tests.admin.test_browser import CHROMIUM, browser, login, shot  # noqa: F401 - browser is a fixture
from tests.factories import ProjectFactory, make_api_key
from tests.otlp.conftest import export
from tests.otlp.sdk import Recorder, openinference_agent, request_of
from tests.trace.test_conversation import QUESTIONS, three_turns

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]


def test_reviewer_walks_the_turns_and_finds_the_refused_spans(browser, live_server, client_for):  # noqa: F811
    project = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    _, second, third = three_turns(project)
    recorder = Recorder()
    openinference_agent(recorder.tracer, session_id="s-otlp")
    message = request_of(recorder.take())
    plan = next(span for span in message.resource_spans[0].scope_spans[0].spans if span.name == "plan")
    plan.end_time_unix_nano = plan.start_time_unix_nano - 1
    assert export(client_for(make_api_key(project)), message.SerializeToString()).status_code == 200
    _user_in("Reviewer", "bob")
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    login(page, live_server.url, "bob")

    page.goto(f"{live_server.url}/admin/diagnosis/diagnosissession/{second.pk}/change/")
    turns = page.locator(".se-conversation li")
    assert turns.count() == 3
    assert "Conversation conv-1: 3 turns" in page.locator(".se-conversation h2").inner_text()
    assert page.locator('.se-conversation li[aria-current="page"]').inner_text().startswith(QUESTIONS[1])
    shot(page, "conversation-turn-2")
    turns.nth(2).locator("a").click()
    page.wait_for_url(re.compile(rf"/diagnosissession/{third.pk}/change/$"))
    assert page.locator('.se-conversation li[aria-current="page"]').inner_text().startswith(QUESTIONS[2])

    page.goto(f"{live_server.url}/admin/")
    refused = page.locator(".se-kpi", has_text="spans refused over OTLP")
    assert refused.locator(".se-kpi-value").inner_text() == "1"
    refused.click()
    page.wait_for_url(re.compile(r"/admin/otlp/bufferedtrace/\?"))
    assert "ends before it starts" in page.locator("#result_list").inner_text()
    shot(page, "refused-traces")
