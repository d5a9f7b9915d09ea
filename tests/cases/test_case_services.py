"""Case library services: seed document 000's mapping, idempotence, manual cases, edits, review, bad cases."""

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied, ValidationError

from cases.models import BadCase, Case, CaseRevision
from cases.services import (
    bad_case_open_for_session,
    bad_case_update,
    case_approve,
    case_create_from_session,
    case_create_manual,
    case_reject,
    case_update,
)
from tests.factories import UserFactory
from tests.feedback.helpers import make_session

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer(db):
    user = UserFactory(username="bob")
    user.groups.add(Group.objects.get(name="Reviewer"))
    return user


@pytest.fixture
def approver(db):
    user = UserFactory(username="dora")
    user.groups.add(Group.objects.get(name="Case approver"))
    return user


@pytest.fixture
def session(project):
    return make_session(project, query="订单服务 5xx 突增" + "，详细说明" * 40)


def test_case_from_session_follows_the_seed_mapping(session):
    case = case_create_from_session(session=session)

    assert case.diagnosis_id == session.session_id
    assert case.project_id == session.project_id
    assert (case.source_type, case.created_by, case.status) == ("AUTO", "system", "pending")
    assert case.title == session.query[:100] and len(case.title) == 100
    assert case.root_cause == case.solution == session.answer  # no sections: seed document 000's fallback
    assert (case.fault_category, case.service, case.error_code) == ("DATABASE", "order-service", "HTTP 5xx")
    assert CaseRevision.objects.get(case=case).action == "create"


def test_case_from_session_is_idempotent(session, django_assert_num_queries):
    first = case_create_from_session(session=session)

    with django_assert_num_queries(1):
        second = case_create_from_session(session=session)

    assert first.pk == second.pk
    assert Case.objects.count() == 1


def test_manual_case_needs_add_permission(project, outsider, reviewer):
    with pytest.raises(PermissionDenied):
        case_create_manual(user=outsider, project=project, title="x")

    case = case_create_manual(user=reviewer, project=project, title="Redis 主从切换", fault_category="DATABASE")

    assert (case.source_type, case.created_by, case.session, case.status) == ("MANUAL", "bob", None, "pending")
    assert CaseRevision.objects.get(case=case).changes["title"] == [None, "Redis 主从切换"]


@pytest.mark.parametrize(
    "fields",
    [
        {"title": ""},
        {"title": "x", "fault_category": "WEATHER"},
        {"title": "x" * 101},
        {"title": "x", "status": "approved"},
    ],
)
def test_manual_case_refuses_bad_fields(project, reviewer, fields):
    with pytest.raises(ValidationError):
        case_create_manual(user=reviewer, project=project, **fields)
    assert not Case.objects.exists()


def test_case_update_records_old_and_new_values(session, approver):
    case = case_create_from_session(session=session)

    updated = case_update(case=case, user=approver, changes={"service": "order-api", "title": case.title})

    assert updated.service == "order-api"
    revision = CaseRevision.objects.filter(action="edit").get()
    assert revision.changes == {"service": ["order-service", "order-api"]}
    assert revision.editor == approver


def test_case_update_without_change_records_nothing(session, approver):
    case = case_create_from_session(session=session)

    case_update(case=case, user=approver, changes={"service": case.service})

    assert not CaseRevision.objects.filter(action="edit").exists()


def test_case_update_that_only_changes_line_endings_records_nothing(project, approver):
    # Issue 9, 3.9: a browser's textarea sends CRLF line endings for text stored with LF.
    answer = "## 根因\n连接池耗尽。\n慢查询占满连接。\n## 处理建议\n1. 扩大连接池\n2. 优化慢查询"
    case = case_create_from_session(session=make_session(project, answer=answer))
    assert "\n" in case.root_cause and "\n" in case.solution

    crlf = {name: getattr(case, name).replace("\n", "\r\n") for name in ("root_cause", "solution")}
    updated = case_update(case=case, user=approver, changes=crlf)

    assert not CaseRevision.objects.filter(action="edit").exists()
    updated.refresh_from_db()
    assert (updated.root_cause, updated.solution) == (case.root_cause, case.solution)


def test_case_text_is_stored_with_lf_line_endings(project, approver):
    case = case_create_from_session(session=make_session(project))

    case_update(case=case, user=approver, changes={"root_cause": "第一行\r\n第二行\r第三行"})

    case.refresh_from_db()
    assert case.root_cause == "第一行\n第二行\n第三行"
    assert CaseRevision.objects.get(action="edit").changes["root_cause"][1] == "第一行\n第二行\n第三行"


def test_case_update_needs_change_permission_and_valid_values(session, reviewer, approver):
    case = case_create_from_session(session=session)

    with pytest.raises(PermissionDenied):
        case_update(case=case, user=reviewer, changes={"service": "x"})
    with pytest.raises(ValidationError):
        case_update(case=case, user=approver, changes={"fault_category": "nope"})
    with pytest.raises(ValidationError):
        case_update(case=case, user=approver, changes={"diagnosis_id": "other"})
    case.refresh_from_db()
    assert case.service == "order-service"


def test_approve_and_reject_need_the_approve_permission(session, reviewer, approver):
    case = case_create_from_session(session=session)

    with pytest.raises(PermissionDenied):
        case_approve(case=case, user=reviewer)
    with pytest.raises(PermissionDenied):
        case_reject(case=case, user=reviewer)

    approved = case_approve(case=case, user=approver, note="good")
    assert (approved.status, approved.reviewed_by, approved.review_note) == ("approved", approver, "good")
    assert approved.reviewed_at is not None
    rejected = case_reject(case=case, user=approver, note="outdated")
    assert rejected.status == "rejected"
    actions = list(CaseRevision.objects.order_by("id").values_list("action", "changes"))
    assert actions[1:] == [
        ("approve", {"status": ["pending", "approved"], "review_note": ["", "good"]}),
        ("reject", {"status": ["approved", "rejected"], "review_note": ["good", "outdated"]}),
    ]


def test_bad_case_triage_sets_and_clears_closed_at(session, reviewer):
    bad_case = bad_case_open_for_session(session=session, source="feedback", from_feedback=True)

    triaged = bad_case_update(
        bad_case=bad_case,
        user=reviewer,
        status="triaged",
        category="hallucination",
        assignee=reviewer,
        notes="fabricated ref",
    )
    assert (triaged.status, triaged.category, triaged.assignee, triaged.closed_at) == (
        "triaged",
        "hallucination",
        reviewer,
        None,
    )
    fixed = bad_case_update(bad_case=bad_case, user=reviewer, status="fixed")
    assert fixed.closed_at is not None
    reopened = bad_case_update(bad_case=bad_case, user=reviewer, status="open")
    assert reopened.closed_at is None


def test_closed_bad_case_lets_a_new_one_open_and_refuses_double_reopen(session, reviewer):
    first = bad_case_open_for_session(session=session, source="feedback")
    bad_case_update(bad_case=first, user=reviewer, status="wont_fix")
    second = bad_case_open_for_session(session=session, source="verifier")

    assert second.pk != first.pk and second.source == "verifier"
    with pytest.raises(ValidationError):
        bad_case_update(bad_case=first, user=reviewer, status="open")
    first.refresh_from_db()
    assert first.status == "wont_fix"


@pytest.mark.parametrize(
    "fields", [{"status": "closed"}, {"category": "typo"}, {"notes": 3}, {"assignee": "bob"}, {"session": None}]
)
def test_bad_case_update_refuses_bad_values(session, reviewer, fields):
    bad_case = bad_case_open_for_session(session=session, source="feedback")

    with pytest.raises(ValidationError):
        bad_case_update(bad_case=bad_case, user=reviewer, **fields)


def test_bad_case_update_needs_permission(session, outsider):
    bad_case = bad_case_open_for_session(session=session, source="feedback")

    with pytest.raises(PermissionDenied):
        bad_case_update(bad_case=bad_case, user=outsider, status="triaged")
    assert BadCase.objects.get().status == "open"


def test_bad_case_records_verifier_verdict_at_opening(session):
    type(session).objects.filter(pk=session.pk).update(verifier_verdict="REJECT")
    session.refresh_from_db()

    bad_case = bad_case_open_for_session(session=session, source="verifier")

    assert bad_case.verifier_verdict == "REJECT"


def test_a_note_is_added_to_the_notes_once(session, reviewer):
    bad_case = bad_case_open_for_session(session=session, source="feedback")
    bad_case_update(bad_case=bad_case, user=reviewer, notes="first look")

    bad_case_update(bad_case=bad_case, user=reviewer, add_note="  the pool, not the network  ")
    again = bad_case_update(bad_case=bad_case, user=reviewer, add_note="the pool, not the network", status="triaged")

    assert again.notes == "first look\nthe pool, not the network"
    assert BadCase.objects.get().notes == again.notes and again.status == "triaged"
    with pytest.raises(ValidationError):
        bad_case_update(bad_case=bad_case, user=reviewer, add_note=3)
