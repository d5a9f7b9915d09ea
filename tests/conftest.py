"""Standard actors shared by every test: two projects with keys, staff users with roles, an outsider."""

import os

# The suite runs the judge as a default install does (requirements.txt, no sentence encoder), also
# where the dev install has the extra; tests/judge/test_encoder.py switches it on.
os.environ.setdefault("SELFEVAL_JUDGE_ENCODER", "off")

import pytest
import time_machine
from django.core.cache import cache
from django.core.servers.basehttp import WSGIServer
from django.db import connection
from django.test.client import Client
from django.test.testcases import LiveServerThread
from rest_framework.test import APIClient

from tests import clock, contract
from tests.factories import ProjectFactory, UserFactory, make_api_key
from tests.fake_openai import FakeOpenAI


def pytest_addoption(parser):
    group = parser.getgroup("selfeval")
    group.addoption(
        "--clock-ahead-days",
        type=int,
        default=0,
        help="run the whole suite this many days after today (the pinned test clock moves with it)",
    )
    group.addoption("--test-clock", default=None, help="pin the test clock to this ISO instant (replays a run)")


def pytest_configure(config):
    clock.configure(at=config.getoption("--test-clock"), ahead_days=config.getoption("--clock-ahead-days"))


def pytest_report_header(config):
    return f"test clock: {clock.iso(clock.now())} (replay with --test-clock={clock.iso(clock.now())})"


@pytest.fixture
def judge_encoder_switch(monkeypatch):
    """switch("on" | "off" | "auto"): SELFEVAL_JUDGE_ENCODER for one test, the loaded encoder
    returned (None when off); the suite's setting (off) comes back after the test."""
    from judge import encoder

    def switch(value: str):
        monkeypatch.setenv(encoder.ENV, value)
        encoder.sentence_encoder.cache_clear()
        return encoder.sentence_encoder()

    yield switch
    monkeypatch.undo()
    encoder.sentence_encoder.cache_clear()


@pytest.fixture(autouse=True)
def _pinned_clock():
    """Every test starts at the run's pinned instant; time ticks on from there (timeouts still work)."""
    with time_machine.travel(clock.now(), tick=True):
        yield


@pytest.fixture(autouse=True)
def _empty_cache():
    """Every test starts with an empty cache: with the clock pinned, every test would otherwise
    count its rate limits (and failed authentications) in the same window as the tests before."""
    cache.clear()
    yield


@pytest.fixture(autouse=True)
def _responses_keep_the_schema(monkeypatch):
    """Every API response a test client receives is checked against the generated OpenAPI schema
    by openapi-core's strict validator (tests/contract.py): an undocumented status or a body the
    schema refuses fails the test."""
    send = Client.request

    def request(self, **environ):
        response = send(self, **environ)
        path = environ.get("PATH_INFO", "")
        if (path.startswith("/api/") or path.startswith("/v1/")) and not response.streaming:
            mismatch = contract.response_mismatch(
                environ["REQUEST_METHOD"],
                path,
                response.status_code,
                response.get("Content-Type", ""),
                response.content,
                dict(response.headers),
            )
            if mismatch:
                raise AssertionError(f"response does not keep the OpenAPI schema: {mismatch}")
        return response

    monkeypatch.setattr(Client, "request", request)
    yield


@pytest.fixture
def project(db):
    return ProjectFactory(slug="acme-chat", name="ACME chat agent")


@pytest.fixture
def other_project(db):
    return ProjectFactory(slug="acme-aiops", name="ACME AIOps agent")


@pytest.fixture
def api_key(project) -> str:
    return make_api_key(project)


@pytest.fixture
def other_api_key(other_project) -> str:
    return make_api_key(other_project, name="other-agent")


@pytest.fixture
def client_for():
    """An API client authenticated with the given plain API key."""

    def build(key: str | None) -> APIClient:
        client = APIClient()
        if key:
            client.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
        return client

    return build


@pytest.fixture
def api(client_for, api_key) -> APIClient:
    return client_for(api_key)


@pytest.fixture
def other_api(client_for, other_api_key) -> APIClient:
    return client_for(other_api_key)


@pytest.fixture
def anonymous() -> APIClient:
    return APIClient()


@pytest.fixture
def superuser(db):
    return UserFactory(username="alice", is_superuser=True)


@pytest.fixture
def staff_api(superuser) -> APIClient:
    client = APIClient()
    client.force_authenticate(superuser)
    return client


@pytest.fixture
def outsider(db):
    """A logged-in user who is not staff: may not use the admin nor the staff API."""
    return UserFactory(username="charlie", is_staff=False)


def pytest_collection_modifyitems(config, items):
    skip = pytest.mark.skip(reason="needs PostgreSQL: run with DATABASE_URL=postgres://...")
    for item in items:
        if "postgres" in item.keywords and connection.vendor != "postgresql":
            item.add_marker(skip)
    serialized_transactional_tests_first(items)


def serialized_transactional_tests_first(items):
    """Among the transactional tests (pytest-django's tryfirst hook has put them after the others),
    those with a serialized rollback first: a plain transactional test's flush re-creates the
    content types (post_migrate), which a later serialized test would then load a second time and
    collide with. (pytest calls only functions named pytest_* as hooks.)"""
    transactional = [index for index, item in enumerate(items) if _is_transactional(item)]
    ordered = sorted((items[index] for index in transactional), key=lambda item: not _is_serialized(item))
    for index, item in zip(transactional, ordered, strict=True):
        items[index] = item


class _OneRequestAtATime(WSGIServer):
    """The live server on in-memory SQLite: every request thread would share the one connection
    (Django hands it to them), and two at once (a page and its presence poll) break each other's
    savepoints ("no such savepoint"). Served in turn, each response closes its connection."""

    def __init__(self, *args, connections_override=None, **kwargs):
        super().__init__(*args, **kwargs)  # the server's own thread already uses those connections


@pytest.fixture(scope="session", autouse=True)
def _live_server_in_turn_on_sqlite():
    if connection.vendor == "sqlite":
        LiveServerThread.server_class = _OneRequestAtATime
    yield


def _django_db(item) -> dict:
    marker = item.get_closest_marker("django_db")
    return marker.kwargs if marker else {}


def _is_transactional(item) -> bool:
    return bool(_django_db(item).get("transaction")) or bool(
        {"transactional_db", "live_server"} & set(getattr(item, "fixturenames", ()))
    )


def _is_serialized(item) -> bool:
    return bool(_django_db(item).get("serialized_rollback"))


@pytest.fixture
def fake_openai():
    """A local OpenAI-compatible server (tests/fake_openai.py), stopped after the test."""
    with FakeOpenAI() as server:
        yield server
