"""A bad-case category for a claim whose evidence the session held but the claim cited wrong."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("cases", "0004_project_in_tenancy"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="badcase",
            name="bad_case_category_valid",
        ),
        migrations.AlterField(
            model_name="badcase",
            name="category",
            field=models.CharField(
                blank=True,
                choices=[
                    ("hallucination", "Hallucination"),
                    ("missing_evidence", "Missing evidence"),
                    ("miscited_evidence", "Evidence existed, cited wrong"),
                    ("wrong_root_cause", "Wrong root cause"),
                    ("incomplete", "Incomplete"),
                    ("other", "Other"),
                ],
                max_length=32,
                verbose_name="category",
            ),
        ),
        migrations.AddConstraint(
            model_name="badcase",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "category__in",
                        [
                            "hallucination",
                            "missing_evidence",
                            "miscited_evidence",
                            "wrong_root_cause",
                            "incomplete",
                            "other",
                            "",
                        ],
                    )
                ),
                name="bad_case_category_valid",
            ),
        ),
    ]
