"""Reviewers and case approvers see buffered traces (partial and expired ones among them) in the admin."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

ROLES = ["Reviewer", "Case approver"]  # cases/migrations/0002_roles.py


def grant(apps, schema_editor):
    app_config = apps.get_app_config("otlp")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    permission = Permission.objects.get(content_type__app_label="otlp", codename="view_bufferedtrace")
    for group in Group.objects.filter(name__in=ROLES):
        group.permissions.add(permission)


def revoke(apps, schema_editor):
    Permission = apps.get_model("auth", "Permission")
    for permission in Permission.objects.filter(content_type__app_label="otlp", codename="view_bufferedtrace"):
        permission.group_set.clear()


class Migration(migrations.Migration):
    dependencies = [
        ("otlp", "0001_initial"),
        ("cases", "0002_roles"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]
