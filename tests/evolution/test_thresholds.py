"""Thresholds: one row stored by the migration, read without writing, validated updates, every
change recorded."""

import pytest
from django.db import IntegrityError, transaction

from evolution.models import ThresholdChange, VerificationThresholds
from evolution.selectors import thresholds_current, thresholds_get
from evolution.services.thresholds import ThresholdValidationError, thresholds_update
from evolution.services.types import Thresholds
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_migration_stores_the_one_row_with_seed_document_004_s_defaults(django_assert_num_queries):
    row = VerificationThresholds.objects.get()

    assert row.pk == 1 and row.updated_by is None
    with django_assert_num_queries(1):
        assert thresholds_get() == Thresholds.from_row(row) == Thresholds()


def test_a_missing_row_reads_as_the_defaults_and_is_not_written(django_assert_num_queries):
    VerificationThresholds.objects.all().delete()

    with django_assert_num_queries(1):
        assert thresholds_get() == Thresholds()
    current = thresholds_current()
    assert current._state.adding and Thresholds.from_row(current) == Thresholds()
    assert not VerificationThresholds.objects.exists()


def test_an_update_stores_a_missing_row():
    VerificationThresholds.objects.all().delete()

    assert thresholds_update(changes={"min_length": 800}) == Thresholds(min_length=800)

    assert thresholds_get() == Thresholds(min_length=800)
    assert ThresholdChange.objects.get().changes == {"min_length": {"old": 500, "new": 800}}


def test_thresholds_update_changes_only_given_values_and_records_who_and_what():
    user = UserFactory(username="ops")

    updated = thresholds_update(
        changes={"min_confidence": 0.8, "min_improvement_ratio": 1.5, "min_length": 800}, user=user, source="api"
    )

    assert updated == Thresholds(min_confidence=0.8, min_improvement_ratio=1.5, min_length=800)
    assert thresholds_get() == updated
    change = ThresholdChange.objects.get()
    assert change.changed_by == user and change.source == "api" and change.changed_at is not None
    assert change.changes == {
        "min_confidence": {"old": 0.7, "new": 0.8},
        "min_improvement_ratio": {"old": 1.2, "new": 1.5},
        "min_length": {"old": 500, "new": 800},
    }


def test_unchanged_values_record_nothing():
    thresholds_update(changes={"min_length": 500})

    assert not ThresholdChange.objects.exists()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"min_confidence": 1.5}, "min_confidence", "between 0 and 1"),
        ({"min_confidence": "0.8"}, "min_confidence", "Must be a number."),
        ({"min_confidence": True}, "min_confidence", "Must be a number."),
        ({"min_confidence": float("nan")}, "min_confidence", "between"),
        ({"min_improvement_ratio": 0.9}, "min_improvement_ratio", "between 1 and 10"),
        ({"min_length": 500.5}, "min_length", "Must be an integer."),
        ({"min_length": -1}, "min_length", "between 0 and 100000"),
        ({"min_user_satisfaction": 5.1}, "min_user_satisfaction", "between 0 and 5"),
        ({"max_competitor_rank": 0}, "max_competitor_rank", "between 1 and 100"),
        ({"min_structure_score": None}, "min_structure_score", "Must be a number."),
        ({"max_rank": 2}, "max_rank", "Unknown threshold"),
    ],
)
def test_invalid_values_are_refused_naming_the_field(changes, field, message):
    with pytest.raises(ThresholdValidationError) as error:
        thresholds_update(changes=changes)

    assert message in error.value.fields[field][0]
    assert thresholds_get() == Thresholds()


def test_one_invalid_value_rejects_the_whole_update():
    with pytest.raises(ThresholdValidationError):
        thresholds_update(changes={"min_length": 800, "min_confidence": 2})

    assert thresholds_get().min_length == 500
    assert not ThresholdChange.objects.exists()


def test_integral_float_is_accepted_for_integer_thresholds():
    assert thresholds_update(changes={"max_competitor_rank": 3.0}).max_competitor_rank == 3


def test_database_refuses_a_second_row_and_out_of_range_values():
    with pytest.raises(IntegrityError), transaction.atomic():
        VerificationThresholds.objects.create(id=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        VerificationThresholds.objects.filter(pk=1).update(min_confidence=3)
