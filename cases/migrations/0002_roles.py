"""The two admin roles. Reviewers triage; case approvers also approve or reject cases."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

REVIEWER = "Reviewer"
CASE_APPROVER = "Case approver"

REVIEWER_PERMISSIONS = [
    ("diagnosis", "view_project"),
    ("diagnosis", "view_diagnosissession"),
    ("diagnosis", "view_diagnosisstep"),
    ("diagnosis", "view_toolinvocation"),
    ("diagnosis", "view_evidenceref"),
    ("diagnosis", "view_claimcheck"),
    ("diagnosis", "view_sessionreview"),
    ("diagnosis", "add_sessionreview"),
    ("diagnosis", "review_session"),
    ("diagnosis", "reevaluate_session"),
    ("feedback", "view_feedbackevent"),
    ("cases", "view_case"),
    ("cases", "add_case"),
    ("cases", "view_caserevision"),
    ("cases", "view_badcase"),
    ("cases", "add_badcase"),
    ("cases", "change_badcase"),
]
APPROVER_EXTRA_PERMISSIONS = [
    ("cases", "change_case"),
    ("cases", "approve_case"),
]


def create_roles(apps, schema_editor):
    # Permissions are normally created after all migrations ran; this migration needs them now.
    for app_label in ("diagnosis", "feedback", "cases"):
        app_config = apps.get_app_config(app_label)
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")

    def permissions(pairs):
        found = []
        for app_label, codename in pairs:
            found.append(Permission.objects.get(content_type__app_label=app_label, codename=codename))
        return found

    reviewer, _ = Group.objects.get_or_create(name=REVIEWER)
    reviewer.permissions.add(*permissions(REVIEWER_PERMISSIONS))
    approver, _ = Group.objects.get_or_create(name=CASE_APPROVER)
    approver.permissions.add(*permissions(REVIEWER_PERMISSIONS + APPROVER_EXTRA_PERMISSIONS))


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=[REVIEWER, CASE_APPROVER]).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("diagnosis", "0001_initial"),
        ("feedback", "0001_initial"),
        ("cases", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
