"""The case library listens to the diagnosis app; the rules live in the services called here."""

from django.dispatch import receiver

from cases.services.bad_cases import bad_case_open_for_rejected_session
from diagnosis.signals import session_evaluated


@receiver(session_evaluated, dispatch_uid="cases.bad_case_for_rejected_session")
def _session_evaluated(sender, session, **kwargs) -> None:
    bad_case_open_for_rejected_session(session=session)
