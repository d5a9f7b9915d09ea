"""Duplicate cases in the case list: grouped (same question, service and error code) and merged by an approver."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from cases.models import Case, CaseRevision, CaseStatus
from cases.services import case_approve
from tests.factories import case_of, evaluated_session

pytestmark = pytest.mark.django_db

LIST = reverse("admin:cases_case_changelist")
QUESTION = "订单服务 5xx 突增，原因是什么？"


def cases_asked(project, question: str, count: int, prefix: str) -> list[Case]:
    return [case_of(evaluated_session(project, f"{prefix}-{n}", query=question)) for n in range(count)]


@pytest.fixture
def duplicates(project):
    return cases_asked(project, QUESTION, 3, "s-dup")


@pytest.fixture
def other(project):
    return cases_asked(project, "支付网关为什么超时？", 1, "s-other")[0]


def listed(response) -> list[Case]:
    return list(response.context["cl"].result_list)


def test_the_list_counts_each_cases_duplicates_and_links_to_its_group(approver_client, duplicates, other):
    assert len({case.duplicate_key for case in duplicates}) == 1
    assert other.duplicate_key != duplicates[0].duplicate_key

    page = approver_client.get(LIST).content.decode()

    assert page.count(">×3</a>") == 3
    group = approver_client.get(LIST, {"duplicates": str(duplicates[0].pk)})
    assert {case.pk for case in listed(group)} == {case.pk for case in duplicates}


def test_with_duplicates_lists_only_grouped_cases_each_group_together(approver_client, project, duplicates, other):
    more = cases_asked(project, "Why is checkout slow?", 2, "s-more")

    shown = listed(approver_client.get(LIST, {"duplicates": "yes"}))

    assert {case.pk for case in shown} == {case.pk for case in duplicates + more}
    keys = [case.duplicate_key for case in shown]
    assert keys == sorted(keys)  # a group's cases sit together


def test_a_group_link_with_a_malformed_id_lists_nothing(approver_client, duplicates):
    response = approver_client.get(LIST, {"duplicates": "not-a-uuid"})

    assert response.status_code == 200 and listed(response) == []


def merge(client, cases):
    return client.post(
        LIST, {"action": "merge_duplicates", ACTION_CHECKBOX_NAME: [str(c.pk) for c in cases]}, follow=True
    )


def test_merging_keeps_the_approved_case_and_rejects_the_others_naming_it(approver_client, approver, duplicates):
    approved = case_approve(case=duplicates[1], user=approver)

    response = merge(approver_client, duplicates)

    assert f"Kept “{approved.title}”; 2 duplicates rejected." in response.content.decode()
    statuses = dict(Case.objects.values_list("pk", "status"))
    assert statuses[approved.pk] == CaseStatus.APPROVED
    for case in (duplicates[0], duplicates[2]):
        case.refresh_from_db()
        assert case.status == CaseStatus.REJECTED
        assert case.review_note == f"Duplicate of case “{approved.title}” ({approved.pk})."
        assert CaseRevision.objects.filter(case=case, action="reject", editor=approver).exists()


def test_without_an_approved_case_the_oldest_is_kept(approver_client, duplicates):
    merge(approver_client, duplicates)

    oldest = min(duplicates, key=lambda case: (case.created_at, str(case.pk)))
    assert Case.objects.get(pk=oldest.pk).status == CaseStatus.PENDING
    assert Case.objects.filter(status=CaseStatus.REJECTED).count() == 2


@pytest.mark.parametrize(
    ("chosen", "message"),
    [
        (lambda dup, other: [dup[0], other], "Only duplicates merge"),
        (lambda dup, other: [dup[0]], "Select two or more duplicate cases to merge."),
    ],
)
def test_a_selection_that_is_not_duplicates_is_refused_and_nothing_changes(
    approver_client, duplicates, other, chosen, message
):
    response = merge(approver_client, chosen(duplicates, other))

    assert message in response.content.decode()
    assert set(Case.objects.values_list("status", flat=True)) == {CaseStatus.PENDING}


def test_reviewers_cannot_merge(reviewer_client, duplicates):
    merge(reviewer_client, duplicates)

    assert set(Case.objects.values_list("status", flat=True)) == {CaseStatus.PENDING}


def test_the_duplicates_column_costs_no_query_per_row(approver_client, project, duplicates):
    with CaptureQueriesContext(connection) as few:
        approver_client.get(LIST)
    cases_asked(project, "Why is checkout slow?", 6, "s-more")
    with CaptureQueriesContext(connection) as many:
        approver_client.get(LIST)

    assert len(many) == len(few)
