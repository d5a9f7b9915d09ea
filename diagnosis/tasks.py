"""django.tasks entry points of the diagnosis app: load ids, call a service, nothing else."""

from django.tasks import task

from diagnosis.services.evaluation import session_evaluate


@task()
def evaluate_session(session_pk: int) -> str:
    return session_evaluate(session_pk=session_pk)
