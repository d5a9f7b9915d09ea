"""The Chinese admin shows no English machine text: every page, walked as a superuser in zh-hans.

The known set of English machine strings comes from the code itself (the verdict and status enums,
the message table's codes, labels and English texts, the models' choice labels), so a new verdict,
check or reason is covered the day it is added. User content (queries, answers, tool outputs, the
raw JSON) is shown as written and is not looked at.
"""

import re
from html.parser import HTMLParser

import pytest
from django.apps import apps
from django.contrib import admin as django_admin
from django.urls import NoReverseMatch, reverse
from django.utils import translation

from cases.models import BadCase, Case
from cases.services.bad_cases import bad_case_update
from cases.services.library import case_approve, case_reject
from diagnosis import constants
from diagnosis.messages import LABELS, MESSAGES
from diagnosis.models import Feedback, ReviewJudgement
from diagnosis.services.producers.gatekeeper import STATUSES
from evolution.services.verification import evolution_verify
from tests.factories import (
    UserFactory,
    bad_case_of,
    case_of,
    evaluated_session,
    feedback_of,
    review_of,
)

pytestmark = pytest.mark.django_db

OUR_APPS = {"diagnosis", "cases", "feedback", "evolution", "backoffice", "tenancy", "otlp"}
SAME_IN_CHINESE = {"AIOps", "L0", "L1", "CSV", "JSON", "API", "CPU"}
SKIPPED_TAGS = {"script", "style", "pre", "textarea"}
SKIPPED_CLASSES = {"se-raw", "se-text", "se-claim-text", "se-ref", "se-ref-full"}  # user content


def _literal_fragments(template: str) -> list[str]:
    """The fixed words of a message's English format string (its parameters left out)."""
    return [part.strip(" :;,.()[]|") for part in re.split(r"\{[^}]*\}", template)]


def machine_strings() -> tuple[set[str], set[str]]:
    """(codes matched as whole words, English phrases matched as substrings)."""
    with translation.override("en"):
        return _machine_strings()


def _machine_strings() -> tuple[set[str], set[str]]:
    codes = {
        str(value)
        for enum in (
            constants.VerifierVerdict,
            constants.AiOpsVerdict,
            constants.ClaimVerdict,
            constants.FailureAttribution,
        )
        for value in enum
    }
    codes |= set(STATUSES)
    codes |= {key for key in LABELS if key.isupper() or "_" in key}
    codes |= {"True", "False", "None", "deterministic"}
    codes |= {str(value) for value in (*ReviewJudgement.values, *Feedback.values) if "_" in value}
    # Stored values and field names of our models shown raw ("AUTO", "NONE", "source_type"). The
    # evolution log's reasons name their metric by its key ("basic.new_length: ..."), by design.
    for model in apps.get_models():
        if model._meta.app_label in OUR_APPS - {"evolution"}:
            for field in model._meta.get_fields():
                if "_" in field.name and field.concrete:
                    codes.add(field.name)
                for value, _label in getattr(field, "choices", None) or ():
                    if isinstance(value, str) and len(value) > 1 and (value.isupper() or "_" in value):
                        codes.add(value)
    phrases = {"Bad case", "verdict right?:", "吗？:", "Case library › Case library", "案例库 › 案例库"}
    phrases |= {fragment for spec in MESSAGES.values() for fragment in _literal_fragments(spec.template)}
    phrases |= set(LABELS.values())
    # One-word labels ("logs", "stated") are common in user content: their translation is held by
    # test_every_machine_label_and_message_is_translated instead.
    phrases |= {str(config.verbose_name) for config in apps.get_app_configs() if config.label in OUR_APPS}
    for model in apps.get_models():
        if model._meta.app_label not in OUR_APPS:
            continue
        phrases |= {str(model._meta.verbose_name), str(model._meta.verbose_name_plural)}
        for field in model._meta.get_fields():
            for _value, label in getattr(field, "choices", None) or ():
                phrases.add(str(label))
    phrases = {p for p in phrases if " " in p.strip() and p not in SAME_IN_CHINESE}
    return codes - SAME_IN_CHINESE, phrases


class _VisibleText(HTMLParser):
    """The text a reader sees, less the blocks that show user content as written."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._stack: list[bool] = []  # per open element: is it (inside) a skipped block

    def handle_starttag(self, tag, attrs):
        if tag in {"br", "img", "input", "meta", "link", "hr", "col", "source", "wbr"}:
            return
        classes = set((dict(attrs).get("class") or "").split())
        inside = bool(self._stack and self._stack[-1])
        self._stack.append(inside or tag in SKIPPED_TAGS or bool(classes & SKIPPED_CLASSES))

    def handle_endtag(self, tag):
        if tag in {"br", "img", "input", "meta", "link", "hr", "col", "source", "wbr"}:
            return
        if self._stack:
            self._stack.pop()

    def handle_data(self, data):
        if not (self._stack and self._stack[-1]):
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _VisibleText()
    parser.feed(html)
    return re.sub(r"\s+", " ", " ".join(parser.parts))


def english_machine_text(html: str, codes: set[str], phrases: set[str]) -> list[str]:
    """Each known string the page shows, with the words around its first occurrence."""
    text = visible_text(html)
    found = []
    for string in sorted(codes | phrases):
        match = re.search(rf"(?<![\w-]){re.escape(string)}(?![\w-])", text)
        if match:
            found.append(f"{string} «{text[max(0, match.start() - 30) : match.end() + 30]}»")
    return found


@pytest.fixture
def demo(project):
    """Demo-like data through the services: every verdict, an AIOps failure, feedback, cases,
    bad cases, reviews and an evolution verification."""
    admin_user = UserFactory(username="root", is_staff=True, is_superuser=True)
    passed = evaluated_session(project, "s-pass", verdict="PASS", feedback="useful")
    low = evaluated_session(project, "s-low", verdict="LOW_CONFID", feedback="not_useful", comment="缺少根因")
    rejected = evaluated_session(project, "s-reject", verdict="REJECT", feedback="not_useful", comment="根因错误")
    aiops = evaluated_session(project, "a-fail", mode="aiops", aiops_failure="evidence_tools_succeeded")
    evaluated_session(project, "a-other", mode="aiops", aiops_failure="unrelated_alerts_not_main_object")
    feedback_of(aiops, "not_useful", comment="没有查日志")
    case_approve(case=Case.objects.get(session=passed), user=admin_user)
    case_reject(case=case_of(low), user=admin_user, note="not reusable")
    bad = BadCase.objects.get(session=rejected)
    bad_case_update(bad_case=bad, user=admin_user, status="triaged", assignee=admin_user)
    bad_case_of(low)
    review_of(rejected, admin_user, judgement="wrong", verifier_was_right=True, notes="agreed")
    review_of(low, admin_user, judgement="partly_correct", verifier_was_right=False)
    evolution_verify(
        query="订单服务 5xx 突增，原因是什么？",
        old_response="重启服务。",
        new_response="## 根因\n数据库连接池耗尽。\n## 处理\n1. 扩容连接池",
        compare_competitors=False,
        project=project,
    )
    return admin_user


def admin_pages() -> list[str]:
    """Every changelist and one change form of each registered model, and the site's own pages."""
    urls = [reverse("admin:index"), reverse("admin:calibration")]
    for model in django_admin.site._registry:
        if model._meta.app_label not in OUR_APPS:
            continue  # Django's and third-party pages (users, groups, tasks, login attempts)
        info = (model._meta.app_label, model._meta.model_name)
        try:
            urls.append(reverse("admin:{}_{}_changelist".format(*info)))
        except NoReverseMatch:
            continue
        for obj in model._default_manager.order_by("pk")[:2]:
            urls.append(reverse("admin:{}_{}_change".format(*info), args=[obj.pk]))
    return urls


def test_every_admin_page_in_chinese_shows_no_english_machine_text(client, demo):
    client.force_login(demo)
    codes, phrases = machine_strings()
    problems = {}
    with translation.override("zh-hans"):
        for url in admin_pages():
            response = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans", follow=True)
            assert response.status_code == 200, url
            found = english_machine_text(response.content.decode(), codes, phrases)
            if found:
                problems[url] = found

    assert not problems, "\n".join(f"{url}: {found}" for url, found in problems.items())


def test_every_machine_label_and_message_is_translated():
    """Every label and message format string of the table has its Chinese (one-word labels too,
    which the page walk cannot tell from user content)."""
    worded = [
        spec.template for spec in MESSAGES.values() if any(map(str.isalpha, "".join(_literal_fragments(spec.template))))
    ]
    english = worded + list(LABELS.values())
    with translation.override("zh-hans"):
        untranslated = [text for text in english if text not in SAME_IN_CHINESE and translation.gettext(text) == text]

    assert not untranslated


def test_the_known_set_is_taken_from_the_code():
    codes, phrases = machine_strings()

    assert {"LOW_CONFID", "UNSUPPORTED", "REF_NOT_FOUND", "STATED", "final_report_present", "True"} <= codes
    assert "no cited evidence passed the gatekeeper" in phrases and "Bad case" in phrases
    assert english_machine_text("<p>裁决 LOW_CONFID</p><pre>LOW_CONFID</pre>", codes, phrases) == [
        "LOW_CONFID «裁决 LOW_CONFID»"
    ]


def test_the_inspector_translates_a_rationale_and_shows_an_older_one_as_stored(reviewer_client, project):
    session = evaluated_session(project, "s-low", verdict="LOW_CONFID")
    older = session.claim_checks.get(claim_id="c1")
    older.rationale, older.rationale_code = "stored before codes existed", ""
    older.save()
    url = reverse("admin:diagnosis_diagnosissession_change", args=[session.pk])

    html = reviewer_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "引用的证据均未通过守门校验（摘录不匹配）" in html  # c2, from its code
    assert "stored before codes existed" in html  # c1, as stored
    assert "1/2 条论断有支撑，证据支撑度 0.67；低于通过阈值 0.8" in html
