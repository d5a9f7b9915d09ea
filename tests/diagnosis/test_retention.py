"""`purge_sessions` / `sessions_purge`: old sessions go with every row of theirs, in batches; recent
sessions, other projects' and those a case or a bad case points to stay; the day rollups stay exact.

Every row is made by the real services (ingestion, evaluation, votes, reviews, the triage queue's
assignment and lock), at times relative to the pinned test clock.
"""

from dataclasses import dataclass
from io import StringIO

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import models

from backoffice.models import ReviewLock, TriageAssignment
from backoffice.services.sharing import review_lock_refresh, triage_assignments_take
from cases.models import BadCase, BadCaseStatus, Case
from cases.services.bad_cases import bad_case_update
from core.tenancy.access import Access
from diagnosis.models import (
    AiOpsCheck,
    ClaimCheck,
    ClaimCheckRef,
    ClaimCorrection,
    DiagnosisSession,
    DiagnosisStep,
    EvidenceRef,
    SessionReview,
    ToolInvocation,
)
from diagnosis.services.retention import session_rows, sessions_purge
from diagnosis.services.reviews import claim_correction_record
from feedback.models import EndUserVote, FeedbackClient, FeedbackEvent
from feedback.services import FeedbackSubmitter, feedback_submit
from reporting.models import SessionDayChange
from tests import clock
from tests.factories import UserFactory, evaluated_session, review_of
from tests.production import production_settings
from tests.reporting.recount import dashboard_days, recounted_days

pytestmark = pytest.mark.django_db

RETENTION = 30  # days
OLD = RETENTION + 10  # days ago: past the retention
REVIEWED = 12  # days ago: when the old session was reviewed (a day the purge changes too)

# Every model whose rows belong to a session, and the lookup from it to the session: written out
# here, so a child the model graph misses (or one added without a cascade) fails a test.
BELONGING: dict[type[models.Model], str] = {
    DiagnosisSession: "pk",
    DiagnosisStep: "session",
    ToolInvocation: "session",
    EvidenceRef: "session",
    ClaimCheck: "session",
    ClaimCheckRef: "evidence_ref__session",
    AiOpsCheck: "session",
    SessionReview: "session",
    ClaimCorrection: "session",
    FeedbackEvent: "session",
    EndUserVote: "session",
    TriageAssignment: "session",
    ReviewLock: "session",
}


@dataclass
class History:
    doomed: list[DiagnosisSession]  # older than the retention, nothing curated: they go
    with_case: DiagnosisSession  # as old, voted useful: its case keeps it
    with_bad_case: DiagnosisSession  # as old, REJECT: its bad case, triaged by a reviewer, keeps it
    recent: DiagnosisSession  # within the retention
    elsewhere: DiagnosisSession  # as old, in the other project

    @property
    def staying(self) -> list[DiagnosisSession]:
        return [self.with_case, self.with_bad_case, self.recent, self.elsewhere]


def rows_of(sessions: list[DiagnosisSession]) -> dict[str, int]:
    pks = [session.pk for session in sessions]
    return {
        model.__name__: model.objects.filter(**{f"{lookup}__in": pks}).count() for model, lookup in BELONGING.items()
    }


def everything() -> dict[str, int]:
    """Rows of every table the purge could touch, the day marks it writes included."""
    tables = [*BELONGING, Case, BadCase, SessionDayChange]
    return {model.__name__: model.objects.count() for model in tables}


def end_user_vote(session: DiagnosisSession, value: str) -> None:
    """A vote from an end user's feedback token (an EndUserVote and a FeedbackEvent)."""
    submitter = FeedbackSubmitter(
        access=Access.to_project(session.project_id),
        client=FeedbackClient.TOKEN,
        end_user_id="end-user-1",
        session_pk=session.pk,
        session_id=session.session_id,
    )
    feedback_submit(submitter=submitter, session_id=session.session_id, value=value)


@pytest.fixture
def reviewer(db):
    user = UserFactory(username="bob", is_staff=True)
    user.groups.add(Group.objects.get(name="Reviewer"))
    return user


@pytest.fixture
def history(project, other_project, reviewer) -> History:
    chat = evaluated_session(project, "s-old-chat", verdict="LOW_CONFID", created_at=clock.ago(days=OLD))
    end_user_vote(chat, "useful")
    # Every vote makes a case or a bad case, which keeps its session, and no product path deletes
    # one: the case goes here as from `manage.py shell`, so that the votes' rows can be seen to go.
    Case.objects.filter(session=chat).delete()
    with time_machine.travel(clock.ago(days=REVIEWED), tick=False):
        review_of(chat, reviewer, judgement="wrong", verifier_was_right=False)
        claim_correction_record(session=chat, reviewer=reviewer, claim_id="c2", verdict="right")
    triage_assignments_take(session_pks=[chat.pk], user=reviewer)
    review_lock_refresh(session=chat, user=reviewer)
    aiops = evaluated_session(
        project,
        "s-old-aiops",
        mode="aiops",
        aiops_failure="evidence_tools_succeeded",
        created_at=clock.ago(days=OLD, hours=2),
    )
    rejected = evaluated_session(project, "s-old-reject-open", verdict="REJECT", created_at=clock.ago(days=OLD))
    triaged = evaluated_session(project, "s-old-reject", verdict="REJECT", created_at=clock.ago(days=OLD + 1))
    bad_case_update(bad_case=BadCase.objects.get(session=triaged), user=reviewer, status=BadCaseStatus.TRIAGED)
    return History(
        doomed=[chat, aiops, rejected],
        with_case=evaluated_session(project, "s-old-useful", feedback="useful", created_at=clock.ago(days=OLD + 1)),
        with_bad_case=triaged,
        recent=evaluated_session(project, "s-recent", created_at=clock.ago(days=RETENTION - 1)),
        elsewhere=evaluated_session(other_project, "s-old-elsewhere", created_at=clock.ago(days=OLD)),
    )


def purge(*args: str) -> str:
    out = StringIO()
    call_command("purge_sessions", *args, stdout=out)
    return out.getvalue()


def test_the_model_graph_finds_every_row_of_a_session():
    """What cascades from a session, the bad cases included (the cases app keeps their sessions)."""
    assert {rows.model: rows.lookup for rows in session_rows()} == {**BELONGING, BadCase: "session"}


def test_old_sessions_go_with_every_row_of_theirs(history):
    before = rows_of(history.doomed)
    assert all(before.values()), f"the fixture must give the old sessions a row of every kind: {before}"

    output = purge("--older-than", str(RETENTION), "--project", "acme-chat")

    assert rows_of(history.doomed) == dict.fromkeys(before, 0)
    assert not DiagnosisSession.objects.filter(session_id__in=["s-old-chat", "s-old-aiops"]).exists()
    assert "deleted" in output
    for model, count in before.items():
        assert f".{model}: {count}\n" in output
    assert "Kept 2 old session(s)" in output


def test_recent_sessions_other_projects_and_curated_sessions_stay_whole(history):
    before = rows_of(history.staying)
    cases = (Case.objects.get(session=history.with_case).pk, BadCase.objects.get(session=history.with_bad_case).pk)

    purge("--older-than", str(RETENTION), "--project", "acme-chat")

    assert rows_of(history.staying) == before
    assert (
        Case.objects.get(session=history.with_case).pk,
        BadCase.objects.get(session=history.with_bad_case).pk,
    ) == cases
    assert DiagnosisSession.objects.filter(session_id="s-old-elsewhere").exists()


def test_the_project_option_purges_that_project_only(history):
    purge("--older-than", str(RETENTION), "--project", "acme-aiops")

    assert not DiagnosisSession.objects.filter(pk=history.elsewhere.pk).exists()
    assert all(rows_of(history.doomed).values())


def test_a_dry_run_deletes_nothing_and_tells_what_would_go(history):
    before = everything()

    output = purge("--older-than", str(RETENTION), "--dry-run")

    assert everything() == before
    assert "would delete" in output
    # The same counts as the real run's (the first line names the cutoff, a moment later).
    assert purge("--older-than", str(RETENTION)).splitlines()[1:] == output.splitlines()[1:]


def test_the_setting_gives_the_default_age(history, settings):
    settings.SELFEVAL_RETENTION_DAYS = RETENTION

    purge()

    assert not DiagnosisSession.objects.filter(pk__in=[session.pk for session in history.doomed]).exists()
    assert DiagnosisSession.objects.filter(pk=history.recent.pk).exists()


def test_without_an_age_the_command_refuses(history, settings):
    settings.SELFEVAL_RETENTION_DAYS = 0
    before = everything()

    with pytest.raises(CommandError, match="--older-than DAYS or set SELFEVAL_RETENTION_DAYS"):
        purge()

    assert everything() == before


def test_a_negative_default_age_is_a_configuration_error():
    with pytest.raises(RuntimeError, match="SELFEVAL_RETENTION_DAYS must be 0"):
        production_settings("SELFEVAL_RETENTION_DAYS", env={"SELFEVAL_RETENTION_DAYS": "-30"})
    assert production_settings("SELFEVAL_RETENTION_DAYS", env={"SELFEVAL_RETENTION_DAYS": "180"}) == {
        "SELFEVAL_RETENTION_DAYS": 180
    }


@pytest.mark.parametrize("value", ["0", "-3", "thirty"])
def test_an_age_that_is_not_a_positive_number_of_days_is_refused(value):
    with pytest.raises(CommandError, match="older-than"):
        purge("--older-than", value)


def test_an_unknown_project_is_refused(history):
    with pytest.raises(CommandError, match="unknown project"):
        purge("--older-than", str(RETENTION), "--project", "nope")


def test_small_batches_step_over_the_kept_sessions(history):
    """One session per transaction: the kept ones (between doomed ones by pk here) do not stop the walk."""
    report = sessions_purge(older_than_days=RETENTION, batch_size=1)

    assert report.removed["diagnosis.DiagnosisSession"] == 4
    assert report.kept == 2
    assert set(DiagnosisSession.objects.values_list("session_id", flat=True)) == {
        "s-old-useful",
        "s-old-reject",
        "s-recent",
    }


# --- the day rollups ---------------------------------------------------------------------------------


RANGE_DAYS = OLD + 3


def test_the_dashboard_equals_a_fresh_recount_after_the_purge(history):
    before = dashboard_days(days=RANGE_DAYS)  # stores the past days' rollups and settles every mark so far
    assert before == recounted_days(days=RANGE_DAYS)

    purge("--older-than", str(RETENTION))

    after = recounted_days(days=RANGE_DAYS)
    changed = {day for day, figures_of_day in after.items() if figures_of_day != before[day]}
    assert clock.ago(days=OLD).date() in changed  # the sessions' day
    assert clock.ago(days=REVIEWED).date() in changed  # the review's day (reviewer throughput)
    assert dashboard_days(days=RANGE_DAYS) == after


# --- statements ----------------------------------------------------------------------------------------

# One batch, in its savepoint: select and lock the sessions, ask which stay, count each kind of row,
# read the reviews' days, mark the days, delete (the database cascades the diagnosis rows, Django
# deletes the others in one statement each). The walk ends with one more, empty, look.
STATEMENTS_PER_BATCH = 30
LAST_LOOK = 3


@pytest.mark.parametrize(("sessions", "batch_size", "batches"), [(1, 1000, 1), (6, 1000, 1), (6, 3, 2)])
def test_a_batch_costs_the_same_statements_whatever_its_size(
    project, sessions, batch_size, batches, django_assert_max_num_queries
):
    for n in range(sessions):
        evaluated_session(project, f"s-{n}", created_at=clock.ago(days=OLD, minutes=n))

    with django_assert_max_num_queries(batches * STATEMENTS_PER_BATCH + LAST_LOOK):
        report = sessions_purge(older_than_days=RETENTION, batch_size=batch_size)

    assert report.removed["diagnosis.DiagnosisSession"] == sessions
