"""Reads from a read replica (config/replica.py): the admin's lists, its dashboard and the trace API read
from the `replica` alias on GET; writes go to the primary, and a client that wrote reads from the
primary for DATABASE_REPLICA_PIN_SECONDS.

The alias is the test database itself (a TEST MIRROR: a second connection to it), so each test is
transactional: what one connection commits, the other reads, on SQLite as on PostgreSQL.
"""

import datetime as dt
import re

import pytest
import time_machine
from django.apps import apps
from django.core.exceptions import MiddlewareNotUsed
from django.db import connections, transaction
from django.http import HttpResponse
from django.test.utils import CaptureQueriesContext
from django.urls import resolve, reverse

from backoffice.triage import TRIAGE_CHANGELIST
from config.replica import PIN_COOKIE, PRIMARY_APPS, REPLICA, ReplicaReadsMiddleware
from diagnosis.models import DiagnosisSession
from tests import clock
from tests.admin.conftest import _user_in, logged_in
from tests.factories import evaluated_session
from tests.production import production_settings

# The roles are created by a migration; a transactional test's flush must bring them back.
replica_db = pytest.mark.django_db(transaction=True, serialized_rollback=True, databases=["default", "replica"])
SESSION_CHANGELIST = "admin:diagnosis_diagnosissession_changelist"
# The tables of the apps the primary always answers for: who is asking and what they may see.
IDENTITY_TABLES = {
    model._meta.db_table
    for model in apps.get_models(include_auto_created=True)
    if model._meta.app_label in PRIMARY_APPS
}


@pytest.fixture(autouse=True)
def _replica_router(settings):
    """As when DATABASE_REPLICA_URL is set (config/settings/base.py)."""
    settings.DATABASE_ROUTERS = ["config.replica.ReplicaRouter"]


class Queries:
    """The statements each connection ran meanwhile, each as the tables it reads or writes."""

    def __enter__(self):
        self.primary = CaptureQueriesContext(connections["default"]).__enter__()
        self.replica = CaptureQueriesContext(connections[REPLICA]).__enter__()
        return self

    def __exit__(self, *exc_info):
        self.replica.__exit__(*exc_info)
        self.primary.__exit__(*exc_info)

    @staticmethod
    def tables(captured: CaptureQueriesContext) -> list[set[str]]:
        return [set(re.findall(r'(?:FROM|JOIN|INTO|UPDATE) "(\w+)"', query["sql"])) for query in captured]

    @property
    def replica_tables(self) -> set[str]:
        return set().union(*self.tables(self.replica))

    @property
    def primary_tables(self) -> set[str]:
        return set().union(*self.tables(self.primary))

    @property
    def primary_read_only_identity(self) -> bool:
        """Did every statement on the primary read who is asking (session, user, permissions, API key)?"""
        return all(tables & IDENTITY_TABLES for tables in self.tables(self.primary))


@pytest.fixture
def reviewer(db):
    return _user_in("Reviewer", "bob")


@replica_db
def test_admin_lists_and_dashboard_read_from_the_replica(project, reviewer):
    evaluated_session(project, "s-replica-0001", verdict="REJECT", feedback="not_useful")
    client = logged_in(reviewer)

    for url in (reverse(SESSION_CHANGELIST), reverse(TRIAGE_CHANGELIST), reverse("admin:index")):
        with Queries() as queries:
            response = client.get(url)

        assert response.status_code == 200
        assert "diagnosis_diagnosissession" in queries.replica_tables, url
        # Only the reviewer's session, user and permissions come from the primary.
        assert queries.primary_read_only_identity, url
        assert PIN_COOKIE not in response.cookies


@replica_db
def test_trace_api_reads_from_the_replica(project, api):
    evaluated_session(project, "s-replica-0002")

    with Queries() as queries:
        response = api.get("/api/trace/s-replica-0002")

    assert response.status_code == 200
    assert response.json()["session"]["sessionId"] == "s-replica-0002"
    assert {"diagnosis_diagnosissession", "diagnosis_toolinvocation", "diagnosis_claimcheck"} <= queries.replica_tables
    assert queries.primary_read_only_identity  # the API key, unless cached


@replica_db
def test_a_saved_review_is_read_back_from_the_primary_until_the_pin_expires(project, reviewer, settings):
    session = evaluated_session(project, "s-replica-0003", verdict="REJECT", feedback="not_useful")
    client = logged_in(reviewer)
    review = reverse("admin:diagnosis_diagnosissession_review", args=[session.pk])

    with Queries() as queries:
        response = client.post(review, {"judgement": "wrong", "verifier_was_right": "yes", "notes": "right to reject"})

    assert response.status_code == 302
    assert "diagnosis_sessionreview" in queries.primary_tables
    assert queries.replica_tables == set()
    assert PIN_COOKIE in response.cookies

    with Queries() as queries:
        queue = client.get(reverse(TRIAGE_CHANGELIST))

    assert queries.replica_tables == set()
    assert "diagnosis_diagnosissession" in queries.primary_tables
    assert session.session_id not in queue.content.decode()  # reviewed: out of the queue

    later = dt.datetime.now(tz=dt.UTC) + dt.timedelta(seconds=settings.DATABASE_REPLICA_PIN_SECONDS + 1)
    with time_machine.travel(later), Queries() as queries:
        client.get(reverse(SESSION_CHANGELIST))

    assert "diagnosis_diagnosissession" in queries.replica_tables
    assert queries.primary_read_only_identity


@replica_db
def test_a_transaction_or_a_write_sends_the_rest_of_the_request_to_the_primary(project, rf):
    read_from = []

    def view(request):
        read_from.append(DiagnosisSession.objects.all().db)
        with transaction.atomic():
            read_from.append(DiagnosisSession.objects.all().db)
        read_from.append(DiagnosisSession.objects.all().db)
        project.save()
        read_from.append(DiagnosisSession.objects.all().db)
        return HttpResponse()

    def handler(request):
        """The URL resolved, the middleware's process_view, then the view: as Django's handler calls them."""
        request.resolver_match = resolve(request.path_info)
        middleware.process_view(request, view, (), {})
        return view(request)

    middleware = ReplicaReadsMiddleware(handler)
    response = middleware(rf.get("/api/trace/s-replica-0004"))

    assert read_from == [REPLICA, "default", REPLICA, "default"]
    assert PIN_COOKIE not in response.cookies  # what a GET writes is upkeep: it pins no one


@replica_db
def test_a_dashboard_that_recounts_a_changed_day_reads_it_back_from_the_primary_and_pins_no_one(project, reviewer):
    evaluated_session(project, "s-replica-0005", created_at=clock.ago(days=2))  # a past day: its rollup is stale
    client = logged_in(reviewer)

    with Queries() as queries:
        response = client.get(reverse("admin:index"))

    assert response.status_code == 200
    assert {"diagnosis_sessionday", "diagnosis_diagnosissession"} <= queries.primary_tables  # recounted, then read
    assert PIN_COOKIE not in response.cookies
    with Queries() as queries:
        client.get(reverse(SESSION_CHANGELIST))
    assert "diagnosis_diagnosissession" in queries.replica_tables


def test_without_the_router_the_middleware_leaves_the_chain(settings):
    settings.DATABASE_ROUTERS = []

    with pytest.raises(MiddlewareNotUsed):
        ReplicaReadsMiddleware(lambda request: HttpResponse())


def test_the_replica_alias_and_router_come_with_database_replica_url():
    primary = production_settings("DATABASES", "DATABASE_ROUTERS", env={"DATABASE_REPLICA_URL": ""})
    assert set(primary["DATABASES"]) == {"default"} and primary["DATABASE_ROUTERS"] == []

    both = production_settings(
        "DATABASES",
        "DATABASE_ROUTERS",
        env={"DATABASE_REPLICA_URL": "postgres://selfeval@replica.example.com/selfeval"},
    )

    replica = both["DATABASES"]["replica"]
    assert (replica["HOST"], replica["TEST"]["MIRROR"]) == ("replica.example.com", "default")
    assert replica["OPTIONS"] == both["DATABASES"]["default"]["OPTIONS"]  # the same pool and timeouts
    assert both["DATABASES"]["default"] == primary["DATABASES"]["default"]
    assert both["DATABASE_ROUTERS"] == ["config.replica.ReplicaRouter"]
