"""Demo accounts for local use: a superuser, a reviewer and a case approver with fixed passwords."""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.db import transaction

REVIEWER_GROUP = "Reviewer"
CASE_APPROVER_GROUP = "Case approver"


@dataclass(frozen=True)
class DemoAccount:
    username: str
    password: str
    superuser: bool
    groups: tuple[str, ...]
    role: str


# Deliberately obvious: these exist only for a local demo database.
DEMO_ACCOUNTS: tuple[DemoAccount, ...] = (
    DemoAccount("admin", "demo-admin-password", True, (), "superuser"),
    DemoAccount("reviewer", "demo-reviewer-password", False, (REVIEWER_GROUP,), "reviewer"),
    DemoAccount("approver", "demo-approver-password", False, (CASE_APPROVER_GROUP,), "case approver"),
)


def demo_users_ensure(*, set_passwords: bool) -> dict[str, AbstractBaseUser]:
    """Create or update the demo accounts (staff, groups); idempotent.

    With `set_passwords` every account gets its fixed demo password; without it, accounts
    created here get an unusable password (seed_demo needs the users, not their logins).
    The groups come from the cases app's roles migration; a missing group is an error.
    """
    user_model = get_user_model()
    users: dict[str, AbstractBaseUser] = {}
    with transaction.atomic():
        groups = {group.name: group for group in Group.objects.filter(name__in=[REVIEWER_GROUP, CASE_APPROVER_GROUP])}
        missing = {REVIEWER_GROUP, CASE_APPROVER_GROUP} - set(groups)
        if missing:
            raise LookupError(f"groups {sorted(missing)} do not exist: run `manage.py migrate` first")
        for account in DEMO_ACCOUNTS:
            user, created = user_model.objects.get_or_create(
                username=account.username, defaults={"email": f"{account.username}@demo.invalid"}
            )
            user.is_staff = True
            user.is_active = True
            user.is_superuser = account.superuser
            if set_passwords:
                user.set_password(account.password)
            elif created:
                user.set_unusable_password()
            user.save()
            user.groups.set([groups[name] for name in account.groups])
            users[account.username] = user
    return users
