"""Every page works under the Content-Security-Policy, in a real browser: the admin (Django's own
scripts, the site's, the inspector's keys), the API docs (Swagger UI), and the policy reports no
violation on any of them. A violation is what Chromium reports on the console ("Refused to ...
because it violates the following Content Security Policy directive") and the page's
`securitypolicyviolation` events.
"""

import re
from pathlib import Path

import pytest
from django.urls import reverse

from cases.models import BadCase, Case
from evolution.models import VerificationLog
from evolution.services.verification import evolution_verify
from tests.admin.test_browser import CHROMIUM, browser, login  # noqa: F401 (the browser fixture)
from tests.evolution.samples import NEW_STUDY_ANSWER, OLD_STUDY_ANSWER, STUDY_QUERY
from tests.factories import ProjectFactory, UserFactory, evaluated_session

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
]

# The page reports its own violations on the console too, with what was blocked.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", function (event) {
  console.error("CSP violation: " + event.violatedDirective + " blocked " + (event.blockedURI || "inline"));
});
"""


@pytest.fixture
def pages(browser, live_server):  # noqa: F811 (the browser fixture, imported)
    """A logged-in superuser's browser page that records every CSP violation."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_init_script(REPORT_VIOLATIONS)
    page = context.new_page()
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text)
            if "Content Security Policy" in message.text or message.text.startswith("CSP violation")
            else None
        ),
    )
    page.on("pageerror", lambda error: violations.append(f"page error: {error}"))
    page.violations = violations
    return page


def _visit(page, url: str) -> None:
    response = page.goto(url)
    assert response.status == 200, url
    header = response.headers.get("content-security-policy", "")
    policy = dict(directive.split(" ", 1) for directive in header.split("; ") if directive)
    assert policy.get("script-src") == "'self'", url  # no inline script, no eval, nothing from elsewhere
    assert "'unsafe-inline'" not in policy.get("style-src", "'unsafe-inline'"), url
    page.wait_for_load_state("load")


@pytest.fixture
def content():
    project = ProjectFactory(slug="acme-chat", name="ACME chat agent")
    session = evaluated_session(project, "s-csp-0001", verdict="REJECT", feedback="not_useful", comment="wrong")
    evaluated_session(project, "s-csp-0002", feedback="useful")
    evolution_verify(query=STUDY_QUERY, old_response=OLD_STUDY_ANSWER, new_response=NEW_STUDY_ANSWER)
    UserFactory(username="alice", is_staff=True, is_superuser=True)
    return {
        "session": session,
        "case": Case.objects.get(),
        "bad_case": BadCase.objects.get(session=session),
        "log": VerificationLog.objects.get(),
    }


def test_the_admin_and_the_api_docs_work_under_the_policy(pages, live_server, content):
    page, base = pages, live_server.url
    _visit(page, f"{base}/admin/login/")
    login(page, base, "alice")  # the login form posts under form-action 'self'

    admin_pages = [
        reverse("admin:index"),
        reverse("admin:calibration"),
        reverse("admin:backoffice_triageitem_changelist"),
        reverse("admin:diagnosis_diagnosissession_changelist"),
        reverse("admin:cases_case_change", args=[content["case"].pk]),
        reverse("admin:cases_badcase_change", args=[content["bad_case"].pk]),
        reverse("admin:cases_case_changelist"),
        reverse("admin:evolution_verificationlog_changelist"),
        reverse("admin:evolution_verificationlog_change", args=[content["log"].pk]),
        reverse("admin:evolution_verificationthresholds_change", args=[1]),
        reverse("admin:auth_user_changelist"),
    ]
    for path in admin_pages:
        _visit(page, base + path)
        assert page.locator("#content").count() == 1, path

    # Django's admin scripts run: "select all" of the actions checks every row.
    _visit(page, base + reverse("admin:diagnosis_diagnosissession_changelist"))
    page.check("#action-toggle")
    assert page.locator("input.action-select:checked").count() == 2

    # The inspector's script runs: its keys choose a judgement and show their legend.
    _visit(page, base + reverse("admin:diagnosis_diagnosissession_change", args=[content["session"].pk]))
    page.keyboard.press("1")
    assert page.locator("#review input[name=judgement]").first.is_checked()
    page.keyboard.press("?")
    assert page.locator("#se-key-help").is_visible()

    # Swagger UI renders the schema: its bundle and its set-up script (a file, not inline) ran.
    _visit(page, f"{base}/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock-tag", timeout=20_000)
    assert page.locator(".swagger-ui .opblock").count() > 10
    assert re.search(r"SelfEval API", page.locator(".swagger-ui .title").inner_text())

    assert page.violations == []
