"""`Authorization: Api-Key`: verified from the shared cache, which a revoked key never passes."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.test import APIRequestFactory

from core.api.authentication import ProjectAPIKeyAuthentication
from core.tenancy import services
from core.tenancy.models import ProjectAPIKey
from core.tenancy.services import InvalidAPIKey, api_key_revoke, api_key_verify
from tests import clock
from tests.admin.conftest import logged_in
from tests.factories import make_api_key

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


def authenticate(header: str):
    request = APIRequestFactory().get("/api/sessions", HTTP_AUTHORIZATION=header)
    return ProjectAPIKeyAuthentication().authenticate(request)


def queries_of(call) -> tuple[object, int]:
    with CaptureQueriesContext(connection) as queries:
        result = call()
    return result, len(queries)


def test_a_key_is_read_once_then_verified_from_the_cache(project):
    raw = make_api_key(project)

    (_, first), first_queries = queries_of(lambda: authenticate(f"Api-Key {raw}"))
    (_, again), again_queries = queries_of(lambda: authenticate(f"Api-Key {raw}"))

    assert (first_queries, again_queries) == (1, 0)  # the key with its project, then nothing
    for api_key in (first, again):
        assert api_key.pk == ProjectAPIKey.objects.get(project=project).pk
        assert api_key.project.slug == project.slug and api_key.project_id == project.pk


def test_the_cache_holds_the_hash_never_the_key(project):
    raw = make_api_key(project)
    authenticate(f"Api-Key {raw}")

    entry = cache.get(f"selfeval:api-key:{raw.partition('.')[0]}")

    assert entry is not None
    assert raw.partition(".")[2] not in repr(entry)


@pytest.mark.parametrize(
    "mangle",
    [
        lambda raw: raw[:-1] + ("A" if raw[-1] != "A" else "B"),  # right prefix, wrong secret
        lambda raw: "zzzzzzzz." + raw.partition(".")[2],  # unknown prefix
        lambda raw: raw.partition(".")[0],  # prefix only
        lambda raw: raw.partition(".")[0] + ".",  # empty secret
    ],
)
def test_wrong_keys_are_refused_also_once_the_right_one_is_cached(project, mangle):
    raw = make_api_key(project)
    authenticate(f"Api-Key {raw}")

    with pytest.raises(AuthenticationFailed):
        authenticate(f"Api-Key {mangle(raw)}")


def test_an_unknown_prefix_is_remembered_so_a_spray_of_bad_keys_stays_cheap(project):
    _, first = queries_of(lambda: pytest.raises(InvalidAPIKey, api_key_verify, key="nope1234.secret"))
    _, again = queries_of(lambda: pytest.raises(InvalidAPIKey, api_key_verify, key="nope1234.other"))

    assert (first, again) == (1, 0)


def test_a_new_key_works_at_once_even_after_its_prefix_was_remembered_as_unknown(project, monkeypatch):
    pytest.raises(InvalidAPIKey, api_key_verify, key="fixedpfx.secret")
    monkeypatch.setattr(ProjectAPIKey.objects.key_generator, "get_prefix", lambda: "fixedpfx")

    raw = make_api_key(project)

    assert raw.startswith("fixedpfx.") and api_key_verify(key=raw).project_id == project.pk


REVOCATIONS = {
    "service": lambda key: api_key_revoke(api_key=key),
    "save": lambda key: (setattr(key, "revoked", True), key.save()),
    "queryset update": lambda key: ProjectAPIKey.objects.filter(pk=key.pk).update(revoked=True),
    "expiry": lambda key: ProjectAPIKey.objects.filter(pk=key.pk).update(expiry_date=clock.ago(seconds=1)),
    "delete": lambda key: key.delete(),
}


@pytest.mark.parametrize("revoke", REVOCATIONS.values(), ids=REVOCATIONS.keys())
def test_a_revoked_expired_or_deleted_key_is_refused_on_the_next_request(project, revoke):
    raw = make_api_key(project)
    authenticate(f"Api-Key {raw}")  # cached now

    revoke(ProjectAPIKey.objects.get(project=project))

    with pytest.raises(AuthenticationFailed):
        authenticate(f"Api-Key {raw}")


def test_a_key_that_expires_while_cached_is_refused(project, time_machine):
    raw = make_api_key(project)
    ProjectAPIKey.objects.filter(project=project).update(expiry_date=clock.ago(seconds=-60))
    assert authenticate(f"Api-Key {raw}") is not None  # cached, with its expiry

    time_machine.move_to(clock.ago(seconds=-120))

    with pytest.raises(AuthenticationFailed):
        authenticate(f"Api-Key {raw}")


def test_a_request_that_read_the_key_before_its_revocation_cannot_cache_it_after(project, monkeypatch):
    """The race: a request reads the usable row, the key is revoked, then the request caches the row."""
    raw = make_api_key(project)

    class RevokedMeanwhile:
        """The real cache, with the revocation landing between the request's read and its write."""

        def __getattr__(self, name):
            return getattr(cache, name)

        def add(self, *args, **kwargs):
            api_key_revoke(api_key=ProjectAPIKey.objects.get(project=project))
            return cache.add(*args, **kwargs)

    monkeypatch.setattr(services, "cache", RevokedMeanwhile())
    api_key_verify(key=raw)  # it read the row while the key was usable: this one request passes
    monkeypatch.undo()

    with pytest.raises(InvalidAPIKey):
        api_key_verify(key=raw)


def test_renaming_the_project_reaches_the_cached_key(project):
    raw = make_api_key(project)
    authenticate(f"Api-Key {raw}")

    project.name = "Renamed"
    project.save()

    _, api_key = authenticate(f"Api-Key {raw}")
    assert api_key.project.name == "Renamed"


def test_admin_revoke_action_refuses_the_key_at_once(project, superuser, client_for):
    raw = make_api_key(project)
    api = client_for(raw)
    assert api.get("/api/sessions").status_code == 200
    key = ProjectAPIKey.objects.get(project=project)

    response = logged_in(superuser).post(
        reverse("admin:tenancy_projectapikey_changelist"),
        {"action": "revoke_keys", "_selected_action": [key.pk], "index": "0"},
    )

    assert response.status_code == 302
    assert ProjectAPIKey.objects.get(pk=key.pk).revoked
    assert api.get("/api/sessions").status_code == 401


def test_an_empty_key_is_refused():
    with pytest.raises(AuthenticationFailed):
        authenticate("Api-Key ")
