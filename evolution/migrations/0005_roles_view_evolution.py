"""Reviewers and case approvers read the evolution verification log and the thresholds (view only)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ["Reviewer", "Case approver"]  # cases/migrations/0002_roles.py
VIEW_PERMISSIONS = ["view_verificationlog", "view_verificationthresholds", "view_thresholdchange"]


def grant(apps, schema_editor):
    # Permissions are normally created after all migrations ran; this migration needs them now.
    app_config = apps.get_app_config("evolution")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="evolution", codename__in=VIEW_PERMISSIONS)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(*permissions)


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(content_type__app_label="evolution", codename__in=VIEW_PERMISSIONS)
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.remove(*permissions)


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0004_thresholds_row"),
        ("cases", "0002_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
