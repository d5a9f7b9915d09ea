"""Orchestrates the evaluation producers for one session (to be completed with the pipeline)."""

from diagnosis.models import DiagnosisSession, EvaluationState


def session_evaluate(*, session_pk: int) -> str:
    DiagnosisSession.objects.filter(pk=session_pk).update(evaluation_state=EvaluationState.DONE)
    return EvaluationState.DONE
