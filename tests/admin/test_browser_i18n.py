"""The main admin pages in Chinese, in a real browser (Debian's Chromium, driven by Playwright).

Screenshots land in test-output/screenshots/zh-*.png for a person to look at; each page is also
held to the zh-hans walk's rule: no English machine text (`test_i18n_walk`).
"""

import pytest
from django.urls import reverse

from cases.models import BadCase, Case
from diagnosis.models import DiagnosisSession
from evolution.models import VerificationLog, VerificationThresholds
from tests.admin.test_browser import CHROMIUM, browser, login, shot  # noqa: F401 (the browser fixture)
from tests.admin.test_i18n_walk import demo, english_machine_text, machine_strings  # noqa: F401 (demo)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
    pytest.mark.skipif(not __import__("pathlib").Path(CHROMIUM).exists(), reason=f"{CHROMIUM} is missing"),
]


def test_the_main_pages_read_in_chinese(browser, live_server, demo):  # noqa: F811
    low = DiagnosisSession.objects.get(session_id="s-low")
    aiops = DiagnosisSession.objects.get(session_id="a-fail")
    pages = {
        "zh-01-dashboard": reverse("admin:index"),
        "zh-02-calibration": reverse("admin:calibration"),
        "zh-03-triage-queue": reverse("admin:backoffice_triageitem_changelist"),
        "zh-04-sessions": reverse("admin:diagnosis_diagnosissession_changelist"),
        "zh-05-inspector-low-confidence": reverse("admin:diagnosis_diagnosissession_change", args=[low.pk]),
        "zh-06-inspector-aiops": reverse("admin:diagnosis_diagnosissession_change", args=[aiops.pk]),
        "zh-07-claim-checks": reverse("admin:diagnosis_claimcheck_changelist"),
        "zh-08-bad-cases": reverse("admin:cases_badcase_changelist"),
        "zh-09-bad-case": reverse("admin:cases_badcase_change", args=[BadCase.objects.order_by("pk").first().pk]),
        "zh-10-cases": reverse("admin:cases_case_changelist"),
        "zh-11-case": reverse("admin:cases_case_change", args=[Case.objects.order_by("pk").first().pk]),
        "zh-12-evolution-log": reverse(
            "admin:evolution_verificationlog_change", args=[VerificationLog.objects.get().pk]
        ),
        "zh-13-thresholds": reverse(
            "admin:evolution_verificationthresholds_change", args=[VerificationThresholds.objects.get().pk]
        ),
    }
    codes, phrases = machine_strings()
    context = browser.new_context(
        viewport={"width": 1440, "height": 900}, locale="zh-CN", extra_http_headers={"Accept-Language": "zh-hans"}
    )
    page = context.new_page()
    login(page, live_server.url, "root")
    problems = {}
    for name, path in pages.items():
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("load")
        for summary in page.locator("details:not(.se-raw) > summary").all():
            summary.click()  # the composer output and tool calls, folded by default
        shot(page, name)
        assert page.locator("html").get_attribute("lang") == "zh-hans", name
        found = english_machine_text(page.content(), codes, phrases)
        if found:
            problems[name] = found
    context.close()

    assert not problems, problems
