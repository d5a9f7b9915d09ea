"""django.tasks entry points of the diagnosis app: load ids, call a service, nothing else."""

from django.tasks import task

from diagnosis.services.evaluation import session_evaluation_run


@task()
def evaluate_session(session_pk: int) -> str:
    """Evaluate one session; retries, backoff and the FAILED state live in the service."""
    return session_evaluation_run(session_pk=session_pk)
