"""create_demo_users: three demo accounts with their roles, idempotent, refused outside DEBUG."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

User = get_user_model()


@pytest.fixture
def debug_on(settings):
    """The test runner turns DEBUG off; demo accounts are for a local (DEBUG) database."""
    settings.DEBUG = True


@pytest.mark.django_db
def test_creates_admin_reviewer_and_approver_with_their_roles(debug_on, capsys):
    call_command("create_demo_users")
    admin, reviewer, approver = (User.objects.get(username=name) for name in ("admin", "reviewer", "approver"))
    assert admin.is_superuser and admin.is_staff and admin.check_password("demo-admin-password")
    assert reviewer.is_staff and not reviewer.is_superuser
    assert list(reviewer.groups.values_list("name", flat=True)) == ["Reviewer"]
    assert list(approver.groups.values_list("name", flat=True)) == ["Case approver"]
    assert reviewer.has_perm("diagnosis.review_session") and not reviewer.has_perm("cases.approve_case")
    assert approver.has_perm("cases.approve_case")
    assert approver.check_password("demo-approver-password")
    out = capsys.readouterr().out
    for credential in ("admin", "demo-admin-password", "reviewer", "demo-reviewer-password", "demo-approver-password"):
        assert credential in out


@pytest.mark.django_db
def test_rerunning_resets_the_accounts_without_duplicates(debug_on):
    call_command("create_demo_users")
    reviewer = User.objects.get(username="reviewer")
    reviewer.set_password("changed")
    reviewer.is_staff = False
    reviewer.save()
    reviewer.groups.clear()
    call_command("create_demo_users")
    assert User.objects.filter(username__in=["admin", "reviewer", "approver"]).count() == 3
    reviewer.refresh_from_db()
    assert reviewer.is_staff and reviewer.check_password("demo-reviewer-password")
    assert list(reviewer.groups.values_list("name", flat=True)) == ["Reviewer"]


@pytest.mark.django_db
def test_refuses_with_debug_off_unless_forced(settings):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="DEBUG is off"):
        call_command("create_demo_users")
    assert not User.objects.filter(username="admin").exists()
    call_command("create_demo_users", force=True)
    assert User.objects.get(username="admin").is_superuser


@pytest.mark.django_db
def test_seed_demo_creates_the_role_users_without_a_usable_password():
    pytest.importorskip("feedback.services")
    call_command("seed_demo", sessions=42, seed=1, evaluate=True)
    reviewer = User.objects.get(username="reviewer")
    assert not reviewer.has_usable_password()
    assert list(reviewer.groups.values_list("name", flat=True)) == ["Reviewer"]
