"""The single writer of `DiagnosisSession.self_evaluation` (the seed's SelfEvaluationMergeService).

Each producer hands over only its own layer; the merge locks the session row, reads the current
container, migrates legacy root keys, replaces that one layer and rewrites the mirrored columns,
so two producers merging at the same time never lose each other's layer.

Legacy JSON (the agent's own flat `selfEvaluation`, seed section 3) is history, not SelfEval's
judgement. Its root keys are wrapped into their layers marked `"source": "legacy"`, and such a
layer is kept, visibly marked, until a producer replaces it: the verifier layer of an AIOps
report without executor output, which no producer writes, survives every evaluation. A legacy
layer never fills the mirrored columns: the verdict, groundedness and score columns (and so the
dashboard, the triage queue, calibration and the verifier's bad cases, which read them) hold
only what SelfEval's producers decided.
"""

from typing import Any

from django.db import transaction

from diagnosis.models import DiagnosisSession

RULE_LAYER = "rule_evaluation"
VERIFIER_LAYER = "verifier_evaluation"
AIOPS_LAYER = "aiops_rule_evaluation"
LAYERS = (RULE_LAYER, VERIFIER_LAYER, AIOPS_LAYER)
LEGACY_SOURCE = "legacy"

# Root keys of the legacy flat JSON and the layer each one belongs to (seed section 3).
_LEGACY_ROOT_KEYS = {
    "evidence_score": RULE_LAYER,
    "verdict": VERIFIER_LAYER,
    "groundedness_score": VERIFIER_LAYER,
}


def migrate_legacy_layout(container: dict[str, Any] | None) -> dict[str, Any]:
    """Return a layered copy of `container`: legacy root keys are moved into their layer, which
    is marked `"source": "legacy"`.

    A layer already present wins over the legacy root values: they only fill the keys it lacks,
    and it is not labelled `source: legacy` (it is already layered). Unknown root keys are kept
    as they are so nothing the agent stored is thrown away.
    """
    layered: dict[str, Any] = {}
    legacy: dict[str, dict[str, Any]] = {}
    for key, value in (container or {}).items():
        layer = _LEGACY_ROOT_KEYS.get(key)
        if layer is None:
            layered[key] = value
        else:
            legacy.setdefault(layer, {})[key] = value
    for layer, values in legacy.items():
        current = layered.get(layer)
        if isinstance(current, dict):
            layered[layer] = {**values, **current}
        else:
            layered[layer] = {**values, "source": LEGACY_SOURCE}
    return layered


def is_legacy(layer: Any) -> bool:
    """Whether `layer` was wrapped from legacy root keys rather than written by a producer."""
    return isinstance(layer, dict) and layer.get("source") == LEGACY_SOURCE


def _producer_layer(container: dict[str, Any], name: str) -> dict[str, Any]:
    layer = container.get(name)
    return {} if is_legacy(layer) else layer or {}


def mirrored_columns(container: dict[str, Any]) -> dict[str, Any]:
    """The plain columns that mirror the container, for filtering without JSON lookups.

    Legacy layers mirror nothing (module docstring)."""
    rule, verifier, aiops = (_producer_layer(container, name) for name in LAYERS)
    score = rule.get("evidence_score")
    groundedness = verifier.get("groundedness_score")
    return {
        "evidence_score": max(0, min(100, int(score))) if isinstance(score, (int, float)) else None,
        "verifier_verdict": verifier.get("verdict")
        if verifier.get("verdict") in {"PASS", "LOW_CONFID", "REJECT"}
        else "",
        "groundedness_score": float(groundedness) if isinstance(groundedness, (int, float)) else None,
        "aiops_verdict": aiops.get("verdict") if aiops.get("verdict") in {"PASS", "WARN", "FAIL"} else "",
    }


def self_evaluation_merge(
    *, session_pk: int, layers: dict[str, dict[str, Any] | None], extra_fields: dict[str, Any] | None = None
) -> DiagnosisSession:
    """Merge the given layers into the session's container, atomically, under a row lock.

    `layers` maps layer names (see LAYERS) to their new value, or to None to remove that layer
    (the session no longer qualifies for it: its mirrored columns are cleared with it) unless it
    is a legacy layer, which no producer replaced; other layers stay as they are. `extra_fields` are further session columns written in the same
    UPDATE (evaluation state).
    """
    unknown = set(layers) - set(LAYERS)
    if unknown:
        raise ValueError(f"unknown self_evaluation layers: {sorted(unknown)}")
    bad = sorted(name for name, value in layers.items() if value is not None and not isinstance(value, dict))
    if bad:
        raise ValueError(f"self_evaluation layers must be dicts or None (remove): {bad}")
    with transaction.atomic():
        session = DiagnosisSession.objects.select_for_update().only("pk", "self_evaluation").get(pk=session_pk)
        container = migrate_legacy_layout(session.self_evaluation)
        for name, value in layers.items():
            if value is None:
                if not is_legacy(container.get(name)):
                    container.pop(name, None)
            else:
                container[name] = value
        fields = {"self_evaluation": container, **mirrored_columns(container), **(extra_fields or {})}
        DiagnosisSession.objects.filter(pk=session_pk).update(**fields)
        for name, value in fields.items():
            setattr(session, name, value)
    return session


def self_evaluation_import_legacy(*, legacy: dict[str, Any]) -> dict[str, Any]:
    """The layered container and its mirrored columns for a legacy JSON sent at ingestion."""
    container = migrate_legacy_layout(legacy)
    return {"self_evaluation": container, **mirrored_columns(container)}
