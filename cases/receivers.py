"""The case library listens to the diagnosis app; the rules live in the services called here."""

from django.dispatch import receiver

from cases.selectors import session_pks_with_cases
from cases.services.bad_cases import bad_case_open_for_rejected_session
from diagnosis.signals import session_evaluated, sessions_purging


@receiver(session_evaluated, dispatch_uid="cases.bad_case_for_rejected_session")
def _session_evaluated(sender, session, **kwargs) -> None:
    bad_case_open_for_rejected_session(session=session)


@receiver(sessions_purging, dispatch_uid="cases.keep_curated_sessions")
def _sessions_purging(sender, session_pks, **kwargs) -> set[int]:
    return session_pks_with_cases(session_pks=session_pks)
