"""The single writer of `DiagnosisSession.self_evaluation` (seed document 000's SelfEvaluationMergeService).

Each producer hands over only its own layer, typed (`diagnosis.evaluation_layers`); the merge
locks the session row, reads the current container, replaces that one layer (legacy root keys
migrated) and rewrites the mirrored columns, so two producers merging at the same time never
lose each other's layer. How legacy JSON is kept and why it mirrors nothing is said in
`diagnosis.evaluation_layers`.
"""

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from diagnosis.evaluation_layers import LayerValue, self_evaluation_from_agent, self_evaluation_write
from diagnosis.models import DiagnosisSession
from diagnosis.services.trace_version import TRACE_CHANGED
from diagnosis.signals import figures_changed


def self_evaluation_merge(
    *, session_pk: int, layers: Mapping[str, LayerValue | None], extra_fields: dict[str, Any] | None = None
) -> DiagnosisSession:
    """Merge the given layers into the session's container, atomically, under a row lock.

    `layers` maps layer names (`constants.Layer`) to their new value, or to None to remove that
    layer (the session no longer qualifies for it: its mirrored columns are cleared with it)
    unless it is a legacy layer, which no producer replaced; other layers stay as they are.
    `extra_fields` are further session columns written in the same UPDATE (evaluation state).
    Raises ValueError, writing nothing, for an unknown layer name or a value of the wrong type.
    Every write of the evaluation's figures (verdict, scores, AIOps verdict) comes through here,
    so this is where `figures_changed` is sent and the trace version moves (the claim checks, AIOps
    checks and bad case the evaluation writes in the same transaction go with it).
    """
    with transaction.atomic():
        session = (
            DiagnosisSession.objects.select_for_update()
            .only("pk", "project_id", "created_at", "self_evaluation")
            .get(pk=session_pk)
        )
        evaluation = self_evaluation_write(session.self_evaluation, layers)
        fields = {
            "self_evaluation": evaluation.container,
            **evaluation.mirrored_columns(),
            **(extra_fields or {}),
        }
        DiagnosisSession.objects.filter(pk=session_pk).update(**fields, **TRACE_CHANGED)
        figures_changed.send(sender=DiagnosisSession, moments=[(session.project_id, session.created_at)])
        for name, value in fields.items():
            setattr(session, name, value)
    return session


def self_evaluation_import(*, raw: dict[str, Any], trusted: bool = False) -> dict[str, Any]:
    """The layered container and its mirrored columns for a `selfEvaluation` given at ingestion
    (validated by the ingestion serializer).

    From an agent (the API, OTLP) every layer is legacy: history, mirroring nothing. `trusted` is
    for SelfEval's own export read back by an operator (`import_sessions`): its layers are taken as
    stored, with their verdicts, rounds and evidence fingerprints.
    """
    evaluation = self_evaluation_write(raw, {}) if trusted else self_evaluation_from_agent(raw)
    return {"self_evaluation": evaluation.container, **evaluation.mirrored_columns()}
