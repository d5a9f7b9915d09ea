"""The admin speaks English and Simplified Chinese; user content is shown as written."""

from pathlib import Path

import pytest
from django.urls import reverse
from django.utils import translation

PO = Path(__file__).resolve().parents[2] / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"

pytestmark = pytest.mark.django_db


def test_accept_language_serves_the_chinese_admin(reviewer_client, rejected_session):
    dashboard = reviewer_client.get(reverse("admin:index"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    inspector = reviewer_client.get(
        reverse("admin:diagnosis_diagnosissession_change", args=[rejected_session.pk]), HTTP_ACCEPT_LANGUAGE="zh-CN"
    )

    assert "每日结论分布" in dashboard.content.decode()
    html = inspector.content.decode()
    assert "执行" in html and "证据" in html and "保存审核" in html
    # User content is not translated: the answer appears exactly as the agent wrote it.
    assert rejected_session.answer in html


def test_language_selector_switches_to_chinese(reviewer_client):
    response = reviewer_client.post(reverse("set_language"), {"language": "zh-hans", "next": reverse("admin:index")})

    assert response.status_code == 302
    assert "仪表盘" in reviewer_client.get(reverse("admin:index")).content.decode()


def po_entries(text: str):
    """(msgid, msgstr or msgstr[0]) of each live entry of a .po file."""
    for block in text.split("\n\n")[1:]:
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            if line.startswith('"'):
                fields[key] += line[1:-1]
            else:
                key, _, value = line.partition(" ")
                fields[key] = value[1:-1]
        if "msgid" in fields:
            yield fields["msgid"], fields.get("msgstr", fields.get("msgstr[0]", ""))


def test_every_message_of_the_catalogue_is_translated():
    untranslated = [msgid for msgid, msgstr in po_entries(PO.read_text(encoding="utf-8")) if not msgstr]

    assert not untranslated
    assert PO.with_suffix(".mo").exists()


# Written the same in both languages: names and abbreviations.
SAME_IN_BOTH = {"CPU", "AIOps", "API", "SelfEval", "%(position)s / %(total)s"}


def test_no_message_is_translated_as_itself():
    """A msgstr copied from its msgid ("Verifier") shows English in the Chinese admin."""
    same = [
        msgid
        for msgid, msgstr in po_entries(PO.read_text(encoding="utf-8"))
        if msgid == msgstr and msgid not in SAME_IN_BOTH and any(char.isalpha() for char in msgid)
    ]

    assert not same


def test_compiled_catalogue_is_current():
    with translation.override("zh-hans"):
        assert translation.gettext("Triage queue") == "分诊队列"
        assert translation.gettext("Raw self_evaluation JSON") == "原始 self_evaluation JSON"


def _admin_labels():
    """(model admin, field name, label) of every column, filter and form field our admins show."""
    from django.contrib import admin as django_admin
    from django.contrib.admin.utils import flatten_fieldsets, label_for_field

    for model, model_admin in django_admin.site._registry.items():
        if model._meta.app_label not in {"diagnosis", "cases", "feedback", "evolution", "backoffice"}:
            continue
        names = [name for name in model_admin.list_display if isinstance(name, str)]
        names += [item[0] if isinstance(item, tuple) else item for item in model_admin.list_filter]
        names += flatten_fieldsets(model_admin.fieldsets) if model_admin.fieldsets else list(model_admin.fields or [])
        for name in names:
            if isinstance(name, str) and name != "id":
                yield model_admin, name, str(label_for_field(name, model, model_admin))
        yield model_admin, "verbose_name_plural", str(model._meta.verbose_name_plural)


PROPER_NOUNS = {"AIOps"}  # written the same in Chinese


def test_every_admin_label_has_a_chinese_translation():
    """Headers, filter titles and form labels: a field declared without a translatable label
    would show its English name in the Chinese admin."""
    with translation.override("zh-hans"):
        untranslated = [
            f"{type(model_admin).__name__}.{name}: {label}"
            for model_admin, name, label in _admin_labels()
            if label not in PROPER_NOUNS and not any("\u4e00" <= char <= "\u9fff" for char in label)
        ]

    assert not untranslated
