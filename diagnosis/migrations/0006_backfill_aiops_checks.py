"""Backfill the AIOps check rows of sessions evaluated before the rows existed.

Reads each stored `aiops_rule_evaluation` layer as it was written when this migration was made
(the checks list of `diagnosis.evaluation_layers.AiOpsCheckEntry`); entries that are not a check
object (agent-sent legacy JSON) are skipped, as the raw-SQL reads of the JSON skipped them.
Batches of BATCH sessions in primary-key order, so memory stays flat on a large table; the same
code runs on SQLite and PostgreSQL. Reversing drops nothing: the previous migration's reversal
drops the table.
"""

from django.db import migrations

BATCH = 2000
SEVERITIES = {"critical", "warning"}


def _rows(AiOpsCheck, session_pk, layer):
    checks = layer.get("checks") if isinstance(layer, dict) else None
    seen = set()
    for check in checks if isinstance(checks, list) else ():
        if not isinstance(check, dict):
            continue
        name, passed = check.get("check"), check.get("passed")
        if not isinstance(name, str) or not name or not isinstance(passed, bool) or name[:64] in seen:
            continue
        seen.add(name[:64])
        severity = check.get("severity")
        applicable = check.get("applicable", True)
        reason = check.get("reason")
        yield AiOpsCheck(
            session_id=session_pk,
            name=name[:64],
            passed=passed,
            severity=severity if severity in SEVERITIES else "critical",
            applicable=applicable if isinstance(applicable, bool) else True,
            reason=reason if isinstance(reason, str) else "",
        )


def backfill(apps, schema_editor):
    DiagnosisSession = apps.get_model("diagnosis", "DiagnosisSession")
    AiOpsCheck = apps.get_model("diagnosis", "AiOpsCheck")
    sessions = DiagnosisSession.objects.filter(self_evaluation__has_key="aiops_rule_evaluation").order_by("pk")
    last_pk = 0
    while True:
        batch = list(sessions.filter(pk__gt=last_pk).values_list("pk", "self_evaluation")[:BATCH])
        if not batch:
            return
        rows = [row for pk, container in batch for row in _rows(AiOpsCheck, pk, container["aiops_rule_evaluation"])]
        AiOpsCheck.objects.bulk_create(rows, batch_size=BATCH, ignore_conflicts=True)
        last_pk = batch[-1][0]


class Migration(migrations.Migration):
    dependencies = [
        ("diagnosis", "0005_aiops_checks"),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
