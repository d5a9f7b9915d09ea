"""The rollups listen to the domain writes; why a signal is said in `reporting.services.session_days`."""

from django.dispatch import receiver

from diagnosis.signals import figures_changed
from reporting.services.session_days import session_day_key, session_days_mark_changed


@receiver(figures_changed, dispatch_uid="reporting.mark_changed_days")
def _figures_changed(sender, moments, **kwargs) -> None:
    session_days_mark_changed(
        keys=[session_day_key(project_id=project_id, created_at=moment) for project_id, moment in moments]
    )
