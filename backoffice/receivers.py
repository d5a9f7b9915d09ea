"""The back office listens to the apps: a session that enters the triage queue may be given to the
next reviewer in turn (`triage_assignment_round_robin`, off unless a group is configured)."""

from django.dispatch import receiver

from backoffice.services.sharing import triage_assignment_round_robin
from diagnosis.signals import session_evaluated
from feedback.signals import feedback_recorded


@receiver(session_evaluated, dispatch_uid="backoffice.round_robin_after_evaluation")
def _session_evaluated(sender, session, **kwargs) -> None:
    triage_assignment_round_robin(session_pk=session.pk)


@receiver(feedback_recorded, dispatch_uid="backoffice.round_robin_after_feedback")
def _feedback_recorded(sender, session, value, **kwargs) -> None:
    triage_assignment_round_robin(session_pk=session.pk)
