from django.db import migrations


def store_default_thresholds(apps, schema_editor):
    """The one thresholds row (pk 1) with seed document 004's defaults, so reading never has to write."""
    VerificationThresholds = apps.get_model("evolution", "VerificationThresholds")
    VerificationThresholds.objects.using(schema_editor.connection.alias).get_or_create(pk=1)


class Migration(migrations.Migration):
    dependencies = [
        ("evolution", "0003_project_in_tenancy"),
    ]

    operations = [migrations.RunPython(store_default_thresholds, migrations.RunPython.noop)]
