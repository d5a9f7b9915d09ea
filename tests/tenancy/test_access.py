"""One scoping rule for every tenant model: `.visible_to(access)`."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cases.models import BadCase, Case
from core.tenancy.access import Access
from diagnosis.models import ClaimCheck, DiagnosisSession, SessionReview
from feedback.models import FeedbackEvent
from tests.factories import UserFactory, case_of, evaluated_session, review_of

pytestmark = pytest.mark.django_db

TENANT_MODELS = [DiagnosisSession, ClaimCheck, SessionReview, FeedbackEvent, Case, BadCase]


@pytest.fixture
def two_projects(project, other_project):
    reviewer = UserFactory(username="rita", is_superuser=True)
    for owner in (project, other_project):
        rejected = evaluated_session(owner, "s-shared-id", verdict="REJECT", feedback="not_useful")
        useful = evaluated_session(owner, "s-useful", feedback="useful")
        case_of(useful)
        review_of(rejected, reviewer, judgement="wrong", verifier_was_right=True)
    return project, other_project


def project_ids(queryset) -> set[int]:
    model = queryset.model
    path = model.objects.get_queryset().project_lookup
    return set(queryset.values_list(path, flat=True))


@pytest.mark.parametrize("model", TENANT_MODELS, ids=lambda m: m.__name__)
def test_a_project_sees_only_its_own_rows(two_projects, model):
    mine, theirs = two_projects

    visible = model.objects.visible_to(Access.to_project(mine.pk))

    assert visible.exists()
    assert project_ids(visible) == {mine.pk}
    assert project_ids(model.objects.visible_to(Access.to_project(theirs.pk))) == {theirs.pk}


@pytest.mark.parametrize("model", TENANT_MODELS, ids=lambda m: m.__name__)
def test_everything_sees_every_project_and_nothing_sees_nothing_without_a_query(two_projects, model):
    mine, theirs = two_projects

    assert project_ids(model.objects.visible_to(Access.to_everything())) == {mine.pk, theirs.pk}
    with CaptureQueriesContext(connection) as queries:
        assert list(model.objects.visible_to(Access.to_nothing())) == []
    assert len(queries) == 0


def test_staff_see_everything_only_with_the_permission_asked_for(db):
    thresholds_only = UserFactory(username="tess", is_staff=True)
    superuser = UserFactory(username="sue", is_superuser=True)
    outsider = UserFactory(username="otto", is_staff=False, is_superuser=False)

    assert Access.for_user(thresholds_only, permission="diagnosis.view_diagnosissession").sees_nothing
    assert Access.for_user(superuser, permission="diagnosis.view_diagnosissession").all_projects
    assert Access.for_user(outsider, permission="diagnosis.view_diagnosissession").sees_nothing
