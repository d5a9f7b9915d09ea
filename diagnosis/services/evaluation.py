"""Orchestrating the evaluation of one session: load once, run the pure producers, write once.

`session_evaluate` loads the session, its invocations and its refs in three queries, runs
`producers.pipeline.evaluate` (no ORM) with this process's config and judge
(`evaluation_config`) and writes everything in one transaction: the layers through the single
merge service, the evaluation state columns, the claim-check rows of the round with their ref
links, the AIOps check rows of the AIOps layer, and a bad case when the verifier rejects the
answer. The number of SQL statements is the same for 1 or 20 invocations and 1 or 10 claims.

`session_evaluation_run` is the task body: bounded retries with exponential backoff, then
FAILED. `session_evaluation_request` asks for a re-evaluation (admin, `reevaluate`, sweep).

Sessions still RUNNING are evaluated on what they hold so far: the rule score is provisional
and the agent's final re-post (status SUCCEEDED or FAILED) triggers the definitive evaluation.
"""

import logging
from dataclasses import replace
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from diagnosis.constants import Layer
from diagnosis.evaluation_layers import AiOpsRuleEvaluation, layer_json
from diagnosis.models import (
    AiOpsCheck,
    ClaimCheck,
    ClaimCheckRef,
    DiagnosisSession,
    EvaluationState,
    EvidenceRef,
    ToolInvocation,
)
from diagnosis.services.evaluation_config import evaluation_config, evaluation_judge
from diagnosis.services.evaluation_data import SESSION_COLUMNS, session_data_from_models
from diagnosis.services.merge import self_evaluation_merge
from diagnosis.services.producers.pipeline import evaluate
from diagnosis.services.producers.types import ClaimResult, PipelineResult
from diagnosis.services.trace_version import TRACE_CHANGED
from diagnosis.signals import session_evaluated

logger = logging.getLogger(__name__)

# Outcomes returned by the services (and stored as the task's return value).
MISSING = "MISSING"  # the session was deleted meanwhile
STALE = "STALE"  # the session changed while it was judged: the newer evaluation writes instead
RETRY_SCHEDULED = "RETRY_SCHEDULED"

_SESSION_FIELDS = ("pk", "project_id", "created_at", *SESSION_COLUMNS, "updated_at", "verifier_verdict")
_CLAIM_UPDATE_FIELDS = [
    "text", "critical", "verdict", "judge", "rationale", "rationale_code", "rationale_params", "facts", "bindings",
    "service", "p_supported", "p_contradicted", "band", "decided_by", "reasons",
]  # fmt: skip
_AIOPS_CHECK_UPDATE_FIELDS = ["passed", "severity", "applicable", "reason", "reason_code", "reason_params"]


def session_evaluate(*, session_pk: int) -> str:
    """Evaluate one session and store the result; returns the new evaluation state.

    Raises `DiagnosisSession.DoesNotExist` for an unknown pk. Idempotent: running it twice stores
    the same layers and the same claim-check rows (the round only moves when the evidence
    fingerprint changes). Returns STALE without writing when the session was re-ingested while
    it was being judged (that ingestion enqueued its own evaluation).
    """
    # The latest stored claim-check round rides along in the same query: when the verifier layer
    # was removed (the session stopped qualifying) and comes back, its rounds continue after the
    # stored ones instead of restarting at 1 over their rows.
    last_round = ClaimCheck.objects.filter(session_id=OuterRef("pk")).order_by("-round").values("round")[:1]
    session = (
        DiagnosisSession.objects.only(*_SESSION_FIELDS)
        .annotate(last_claim_round=Subquery(last_round))
        .get(pk=session_pk)
    )
    invocations = list(ToolInvocation.objects.filter(session_id=session_pk))
    refs = list(EvidenceRef.objects.filter(session_id=session_pk))
    data = session_data_from_models(session=session, invocations=invocations, refs=refs)
    if (session.last_claim_round or 0) > data.previous_round:
        data = replace(data, previous_round=session.last_claim_round, previous_evidence_fingerprint="")

    had_aiops_layer = isinstance(session.self_evaluation, dict) and Layer.AIOPS in session.self_evaluation
    result = evaluate(data, config=evaluation_config(), judge=evaluation_judge())
    # Layers the session no longer qualifies for are removed (None), mirrored columns with them;
    # a layer whose producer failed is simply absent and keeps its previous value.
    layers = {**result.layers, **dict.fromkeys(result.inapplicable_layers)}

    state = EvaluationState.PARTIAL if result.errors else EvaluationState.DONE
    extra_fields = {
        "evaluation_state": state,
        "evaluation_error": _errors_text(result),
        "evaluation_attempts": 0,
        "failure_attribution": result.failure_attribution,
        "evaluated_at": timezone.now(),
    }
    with transaction.atomic():
        current = DiagnosisSession.objects.select_for_update().filter(pk=session_pk).values_list("updated_at").first()
        if current is None:
            return MISSING
        if current[0] != session.updated_at:
            return STALE
        merged = self_evaluation_merge(session_pk=session_pk, layers=layers, extra_fields=extra_fields)
        if Layer.VERIFIER in result.layers:
            _store_claim_checks(session_pk, result, {ref.ref_id: ref.pk for ref in refs})
        if Layer.AIOPS in result.layers:
            _store_aiops_checks(session_pk, result.layers[Layer.AIOPS])
        elif Layer.AIOPS in result.inapplicable_layers and had_aiops_layer:
            AiOpsCheck.objects.filter(session_id=session_pk).delete()
        session.verifier_verdict = merged.verifier_verdict
        session_evaluated.send(sender=DiagnosisSession, session=session)
    return state


def _errors_text(result: PipelineResult) -> str:
    return "; ".join(f"{producer}: {message}" for producer, message in sorted(result.errors.items()))


def _store_claim_checks(session_pk: int, result: PipelineResult, ref_pks: dict[str, int]) -> None:
    """Upsert this round's claim checks on (session, round, claim_id) and relink their refs.

    Four statements whatever the number of claims or rounds: drop claims no longer in the
    output together with the rounds older than the latest SELFEVAL_CLAIM_CHECK_ROUNDS, upsert
    the rest (ids come back from the upsert), drop their ref links, insert the current links.
    """
    claims: list[ClaimResult] = result.claim_results
    ClaimCheck.objects.filter(
        Q(round=result.round) & ~Q(claim_id__in=[claim.claim_id for claim in claims])
        | Q(round__lte=result.round - settings.SELFEVAL_CLAIM_CHECK_ROUNDS),
        session_id=session_pk,
    ).delete()
    if not claims:
        return
    rows = ClaimCheck.objects.bulk_create(
        [
            ClaimCheck(
                session_id=session_pk,
                round=result.round,
                claim_id=claim.claim_id,
                text=claim.text,
                critical=claim.critical,
                verdict=claim.verdict,
                judge=claim.judge[:64],
                **claim.message.fields("rationale"),
                facts=layer_json(claim.facts),
                bindings=layer_json(claim.bindings),
                service=claim.service[:200],
                p_supported=claim.p_supported,
                p_contradicted=claim.p_contradicted,
                band=claim.band or "",
                decided_by=claim.decided_by,
                reasons=layer_json(claim.reasons),
            )
            for claim in claims
        ],
        update_conflicts=True,
        unique_fields=["session", "round", "claim_id"],
        update_fields=_CLAIM_UPDATE_FIELDS,
    )
    ClaimCheckRef.objects.filter(claim_check_id__in=[row.pk for row in rows]).delete()
    links = {
        (row.pk, ref_pks[ref_id])
        for row, claim in zip(rows, claims, strict=True)
        for ref_id in claim.ref_ids
        if ref_id in ref_pks
    }
    ClaimCheckRef.objects.bulk_create(
        ClaimCheckRef(claim_check_id=check_pk, evidence_ref_id=ref_pk) for check_pk, ref_pk in sorted(links)
    )


def _store_aiops_checks(session_pk: int, layer: AiOpsRuleEvaluation) -> None:
    """Make the session's AIOps check rows those of `layer`: two statements whatever the checks.

    Checks no longer in the layer go, the others are upserted on (session, name).
    """
    names = [check.check[:64] for check in layer.checks]
    AiOpsCheck.objects.filter(session_id=session_pk).exclude(name__in=names).delete()
    AiOpsCheck.objects.bulk_create(
        [
            AiOpsCheck(
                session_id=session_pk,
                name=name,
                passed=check.passed,
                severity=check.severity,
                applicable=check.applicable,
                reason=check.reason,
                reason_code=check.reason_code,
                reason_params=check.reason_params,
            )
            for name, check in zip(names, layer.checks, strict=True)
        ],
        update_conflicts=True,
        unique_fields=["session", "name"],
        update_fields=_AIOPS_CHECK_UPDATE_FIELDS,
    )


def session_evaluation_request(*, session_pks: list[int], reset_attempts: bool = True) -> int:
    """Mark the sessions PENDING and enqueue their evaluation after commit; returns how many.

    `reset_attempts=False` (the sweep) keeps the failed-attempt count, so a session that keeps
    killing its worker still ends FAILED instead of being retried for ever.
    """
    pks = sorted(set(session_pks))
    if not pks:
        return 0
    fields = {"evaluation_state": EvaluationState.PENDING, "evaluation_requested_at": timezone.now()}
    if reset_attempts:
        fields["evaluation_attempts"] = 0
    with transaction.atomic():
        existing = list(DiagnosisSession.objects.filter(pk__in=pks).values_list("pk", flat=True))
        DiagnosisSession.objects.filter(pk__in=existing).update(**fields, **TRACE_CHANGED)
        transaction.on_commit(lambda: _enqueue(existing))
    return len(existing)


def _enqueue(session_pks: list[int]) -> None:
    from diagnosis.tasks import evaluate_session

    for pk in session_pks:
        evaluate_session.enqueue(pk)


def retry_backoff(attempts: int) -> timedelta:
    """Delay before attempt `attempts + 1`: base, 2x base, 4x base, ... capped at one hour."""
    base = settings.SELFEVAL_EVALUATION_RETRY_BACKOFF_SECONDS
    return timedelta(seconds=min(3600, base * 2 ** max(0, attempts - 1)))


def session_evaluation_run(*, session_pk: int) -> str:
    """Evaluate with bounded retries; the body of the `evaluate_session` task.

    An exception counts one failed attempt (recorded in `evaluation_attempts` and
    `evaluation_error`). Below SELFEVAL_EVALUATION_MAX_ATTEMPTS the evaluation is retried: later
    (`run_after` = now + backoff) on a backend that can defer tasks (the database worker), at
    once otherwise (the in-process backend must not sleep in a request). Then the session is
    marked FAILED; whatever layers it had stay as they were.
    """
    while True:
        try:
            return session_evaluate(session_pk=session_pk)
        except DiagnosisSession.DoesNotExist:
            return MISSING
        except Exception as exc:
            logger.exception("evaluation of session %s failed", session_pk)
            outcome = session_evaluation_record_failure(session_pk=session_pk, error=f"{type(exc).__name__}: {exc}")
            if outcome != "RETRY_NOW":
                return outcome


def session_evaluation_record_failure(*, session_pk: int, error: str) -> str:
    """Count one failed attempt and decide: FAILED, RETRY_SCHEDULED (deferred task) or RETRY_NOW."""
    from diagnosis.tasks import evaluate_session

    max_attempts = settings.SELFEVAL_EVALUATION_MAX_ATTEMPTS
    with transaction.atomic():
        attempts = (
            DiagnosisSession.objects.select_for_update()
            .filter(pk=session_pk)
            .values_list("evaluation_attempts", flat=True)
            .first()
        )
        if attempts is None:
            return MISSING
        attempts += 1
        exhausted = attempts >= max_attempts
        DiagnosisSession.objects.filter(pk=session_pk).update(
            evaluation_attempts=attempts,
            evaluation_error=f"attempt {attempts}/{max_attempts}: {error}"[:10_000],
            evaluation_state=EvaluationState.FAILED if exhausted else EvaluationState.PENDING,
            **TRACE_CHANGED,
        )
        if exhausted:
            return EvaluationState.FAILED
        if not evaluate_session.get_backend().supports_defer:
            return "RETRY_NOW"
        run_after = timezone.now() + retry_backoff(attempts)
        transaction.on_commit(lambda: evaluate_session.using(run_after=run_after).enqueue(session_pk))
    return RETRY_SCHEDULED
