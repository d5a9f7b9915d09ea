"""`Authorization: Api-Key`: the key is read on every request (prepared statement on PostgreSQL)."""

import pytest
from django.db import connection, transaction
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIRequestFactory

from diagnosis.models import ProjectAPIKey
from selfeval_site.api.authentication import ProjectAPIKeyAuthentication
from tests import clock
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db


def authenticate(header: str):
    request = APIRequestFactory().get("/api/sessions", HTTP_AUTHORIZATION=header)
    return ProjectAPIKeyAuthentication().authenticate(request)


def test_valid_key_comes_with_its_project_in_one_query(project):
    raw = make_api_key(project)

    with CaptureQueriesContext(connection) as queries:
        _, api_key = authenticate(f"Api-Key {raw}")
        assert api_key.project.slug == project.slug  # no second query for the project

    assert len(queries) == 1
    assert api_key.pk == ProjectAPIKey.objects.get(project=project).pk
    assert api_key.project_id == project.pk and not api_key.revoked


@pytest.mark.parametrize(
    "mangle",
    [
        lambda raw: raw[:-1] + ("A" if raw[-1] != "A" else "B"),  # right prefix, wrong secret
        lambda raw: "zzzzzzzz." + raw.partition(".")[2],  # unknown prefix
        lambda raw: raw.partition(".")[0],  # prefix only
    ],
)
def test_wrong_keys_are_refused(project, mangle):
    raw = make_api_key(project)

    with pytest.raises(Exception) as refused:
        authenticate(f"Api-Key {mangle(raw)}")

    assert refused.value.status_code == 401


@pytest.mark.parametrize("change", [{"revoked": True}, {"expiry_date": clock.ago(seconds=1)}])
def test_revoked_or_expired_key_is_refused_on_the_next_request(project, change):
    raw = make_api_key(project)
    assert authenticate(f"Api-Key {raw}") is not None
    ProjectAPIKey.objects.filter(project=project).update(**change)

    with pytest.raises(Exception) as refused:
        authenticate(f"Api-Key {raw}")

    assert refused.value.status_code == 401


@pytest.mark.postgres
def test_prepared_lookup_refuses_to_run_in_a_broken_transaction(project):
    raw = make_api_key(project)
    with transaction.atomic():
        transaction.set_rollback(True)  # as after an error inside the block

        with pytest.raises(TransactionManagementError):
            authenticate(f"Api-Key {raw}")
