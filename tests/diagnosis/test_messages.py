"""Machine text is a code plus parameters: English as stored, the admin's language when shown."""

import string

import pytest
from django.utils import translation

from diagnosis.evaluation_layers import self_evaluation_read
from diagnosis.messages import MESSAGES, Message, machine_label, machine_text, message, message_render
from tests.factories import evaluated_session

pytestmark = pytest.mark.django_db


def test_the_stored_text_is_the_english_of_the_code_and_its_parameters():
    failed = message("gatekeeper.ref_from_failed_call", invocation="inv-2")

    assert failed.fields("reason") == {
        "reason": "call inv-2 failed",
        "reason_code": "gatekeeper.ref_from_failed_call",
        "reason_params": {"invocation": "inv-2"},
    }


def test_labels_are_translated_only_when_shown():
    failed = message("claim.gatekeeper_failed", statuses=["EXCERPT_MISMATCH", "REF_NOT_FOUND"])

    assert failed.text == "no cited evidence passed the gatekeeper (EXCERPT_MISMATCH, REF_NOT_FOUND)"
    with translation.override("zh-hans"):
        assert (
            machine_text(failed.code, failed.json(), failed.text)
            == "引用的证据均未通过守门校验（摘录不匹配, 引用不存在）"
        )


def test_a_nested_message_is_stored_as_code_and_parameters_and_shown_translated():
    inner = message("judge.nothing_aligned")
    outer = message(
        "judge.escalated", rationale=message("judge.llm", rationale="证据未提及"), judge="deterministic", first=inner
    )

    assert outer.json()["first"] == {"code": "judge.nothing_aligned", "params": {}}
    assert (
        outer.text
        == "证据未提及 [escalated by the deterministic judge: nothing in the claim could be aligned to the evidence]"
    )
    with translation.override("zh-hans"):
        assert (
            machine_text(outer.code, outer.json(), outer.text)
            == "证据未提及 [由 deterministic 判定器升级：论断中没有任何内容能与证据对齐]"
        )


def test_an_unknown_code_or_unfit_parameters_show_the_stored_text():
    with translation.override("zh-hans"):
        assert machine_text("", {}, "stored by an older version") == "stored by an older version"
        assert machine_text("gatekeeper.gone", {}, "stored") == "stored"
        assert machine_text("gatekeeper.ref_from_failed_call", {}, "call inv-1 failed") == "call inv-1 failed"
        assert machine_text("gatekeeper.ref_from_failed_call", "not a dict", "call inv-1 failed") == "call inv-1 failed"


def test_a_producer_cannot_write_a_code_the_table_lacks():
    with pytest.raises(KeyError):
        message("gatekeeper.no_such_reason")


def test_every_format_string_names_only_parameters_its_translation_keeps():
    """A translation that drops or renames a parameter would fall back to English: none does."""
    with translation.override("zh-hans"):
        for code, spec in MESSAGES.items():
            fields = dict.fromkeys(_fields(spec.template), 1)
            assert message_render(code, fields, fallback="FALLBACK", translate=translation.gettext) != "FALLBACK", code


def _fields(template: str) -> set[str]:
    return {name.split(":")[0].split("!")[0] for _, name, _, _ in string.Formatter().parse(template) if name}


def test_unknown_literals_are_shown_as_they_are():
    with translation.override("zh-hans"):
        assert machine_label("REJECT") == "驳回"
        assert machine_label("evidence_traces") == "evidence_traces"  # a category of a custom tool map


def test_the_pipeline_stores_codes_beside_the_english_in_every_layer_and_row(project):
    session = evaluated_session(
        project, "s-codes", verdict="LOW_CONFID", mode="aiops", aiops_failure="evidence_tools_succeeded"
    )
    evaluation = self_evaluation_read(session.self_evaluation)
    verifier, aiops, rule = evaluation.verifier, evaluation.aiops, evaluation.rule
    stored = [
        (verifier.rationale, verifier.rationale_code, verifier.rationale_params),
        *((c.rationale, c.rationale_code, c.rationale_params) for c in verifier.claim_checks),
        *((b.reason, b.reason_code, b.reason_params) for b in verifier.gatekeeper_result.bindings),
        *((c.reason, c.reason_code, c.reason_params) for c in aiops.checks),
        *((f.detail, f.detail_code, f.detail_params) for f in rule.factors),
        (verifier.composer_output.retry_context.reason, verifier.composer_output.retry_context.reason_code, {}),
        *((row.rationale, row.rationale_code, row.rationale_params) for row in session.claim_checks.all()),
        *((row.reason, row.reason_code, row.reason_params) for row in session.aiops_checks.all()),
    ]

    assert all(code in MESSAGES for _, code, _ in stored)
    assert all(text == Message(code, params).text for text, code, params in stored if code != "judge.llm")
