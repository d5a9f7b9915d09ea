"""Admin login throttling (django-axes): five wrong passwords for one username from one address lock
that pair out for fifteen minutes, even with the right password; others are not affected."""

import datetime as dt

import pytest
import time_machine
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tests import clock
from tests.admin.conftest import PASSWORD
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

LOGIN = reverse("admin:login")


@pytest.fixture
def staff(db):
    return UserFactory(username="erin", is_staff=True)


def attempt(password: str, *, username: str = "erin", address: str = "198.51.100.7", **headers) -> int:
    client = Client(REMOTE_ADDR=address, **headers)
    response = client.post(LOGIN, {"username": username, "password": password, "next": "/admin/"})
    if response.status_code == 302:  # logged in: the admin answers the session
        assert client.get("/admin/").status_code == 200
    return response.status_code


def test_the_policy_is_five_failures_per_username_and_address_for_fifteen_minutes():
    assert settings.AXES_FAILURE_LIMIT == 5
    assert dt.timedelta(minutes=15) == settings.AXES_COOLOFF_TIME
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]


def test_the_right_password_after_five_wrong_ones_is_locked_out(staff):
    assert [attempt("wrong") for _ in range(4)] == [200] * 4  # the login form again, with its error

    assert attempt("wrong") == 429
    response = Client(REMOTE_ADDR="198.51.100.7").post(LOGIN, {"username": "erin", "password": PASSWORD})
    assert response.status_code == 429
    assert "locked" in response.content.decode()
    assert "_auth_user_id" not in response.wsgi_request.session


def test_the_lockout_ends_after_the_cool_off(staff):
    for _ in range(5):
        attempt("wrong")
    assert attempt(PASSWORD) == 429

    with time_machine.travel(clock.now() + dt.timedelta(minutes=15, seconds=5), tick=False):
        assert attempt(PASSWORD) == 302


def test_another_address_or_another_username_is_not_locked(staff):
    UserFactory(username="frank", is_staff=True)
    for _ in range(5):
        attempt("wrong")

    assert attempt(PASSWORD, address="203.0.113.9") == 302
    assert attempt(PASSWORD, username="frank") == 302


def test_a_successful_login_resets_the_count(staff):
    for _ in range(4):
        attempt("wrong")
    assert attempt(PASSWORD) == 302

    assert [attempt("wrong") for _ in range(4)] == [200] * 4
    assert attempt(PASSWORD) == 302


def test_a_forged_forwarded_for_header_does_not_reset_the_count(staff):
    """No proxy is trusted by default (SELFEVAL_TRUSTED_PROXIES=0): the address is REMOTE_ADDR."""
    for n in range(5):
        attempt("wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")

    assert attempt(PASSWORD, HTTP_X_FORWARDED_FOR="192.0.2.200") == 429


def test_behind_a_trusted_proxy_the_forwarded_address_is_the_client(staff, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    for _ in range(5):
        attempt("wrong", address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.7")

    assert attempt(PASSWORD, address="10.0.0.2", HTTP_X_FORWARDED_FOR="203.0.113.9") == 302
    assert attempt(PASSWORD, address="10.0.0.2", HTTP_X_FORWARDED_FOR="198.51.100.7") == 429


def test_the_demo_accounts_log_in_through_the_login_form(settings):
    settings.DEBUG = True  # create_demo_users is for a local (DEBUG) database, as in `make run`
    call_command("create_demo_users")

    for username, password in [("admin", "demo-admin-password"), ("reviewer", "demo-reviewer-password")]:
        assert attempt(password, username=username) == 302
