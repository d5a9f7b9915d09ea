"""Sweeps over every admin and API route: nothing reachable without the right credentials.

Lists built by hand drift as routes are added; these tests walk the URL resolver instead, so a
new admin view not wrapped in admin_site.admin_view, or a new API view that forgets its
permission class, fails here.
"""

import re

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from core.api.authentication import API_KEY_KEYWORD
from feedback.tokens import feedback_token_issue
from tests.admin.conftest import logged_in
from tests.factories import evaluated_session

pytestmark = pytest.mark.django_db

PUBLIC_PATHS = {"healthz", "api/schema/", "api/docs/"}  # deliberately public: no data behind them
API_CATCH_ALL = "api/"  # the JSON 404 of every unknown address under /api/
UUID = "0b8c6c1e-9a4e-4f7e-8f59-3f1f5f0f8b1a"
ADMIN_PUBLIC = {"login/", "logout/", "password_reset/", "r/<int:content_type_id>/<path:object_id>/"}


def _walk(patterns, prefix=""):
    for entry in patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _walk(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            yield route


def _concrete(route: str) -> str:
    """A requestable path for a route pattern: every parameter filled with a harmless value."""
    route = route.replace("^", "").replace("$", "").replace("\\Z", "")
    route = re.sub(r"\(\?P<[^>]+>[^)]*\{36\}\)", UUID, route)  # a uuid lookup (cases)
    route = re.sub(r"\(\?P<[^>]+>[^)]*\)", "1", route)
    route = re.sub(r"<[^>]+>", "1", route)
    return "/" + route.replace("\\", "")


def _admin_routes():
    routes = []
    for route in _walk(admin.site.get_urls()):
        if route in ADMIN_PUBLIC or route == "" or "jsi18n" in route:
            continue
        if "(?P<app_label>" in route:  # the app index: one concrete app is enough
            routes.append("/admin/diagnosis/")
            continue
        routes.append("/admin/" + _concrete(route).lstrip("/"))
    return sorted(set(routes))


def _api_routes():
    routes = []
    for route in _walk(get_resolver().url_patterns):
        clean = route.removeprefix("^")
        if not clean.startswith("api/") or clean in PUBLIC_PATHS or clean == API_CATCH_ALL:
            continue
        routes.append(_concrete(route))
    return sorted(set(routes))


ADMIN_ROUTES = _admin_routes()
API_ROUTES = _api_routes()


def test_the_sweeps_found_the_routes():
    assert "/admin/diagnosis/diagnosissession/1/review/" in ADMIN_ROUTES
    assert "/admin/calibration/" in ADMIN_ROUTES
    assert "/api/feedback" in API_ROUTES
    assert any(route.startswith("/api/trace/") for route in API_ROUTES)
    assert "/api/evolution/thresholds" in API_ROUTES


@pytest.mark.parametrize("path", ADMIN_ROUTES)
@pytest.mark.parametrize("method", ["get", "post"])
def test_non_staff_user_is_sent_to_the_login_page_on_every_admin_route(outsider, path, method):
    response = getattr(logged_in(outsider), method)(path)

    assert response.status_code == 302, path
    assert response["Location"].startswith("/admin/login/"), path


@pytest.mark.parametrize("path", API_ROUTES)
@pytest.mark.parametrize("method", ["get", "post"])
def test_every_api_route_refuses_anonymous_and_non_staff_callers(outsider, path, method):
    for client in (Client(), logged_in(outsider)):
        response = getattr(client, method)(path, content_type="application/json")
        assert response.status_code in (401, 403, 405), (path, response.status_code)
        assert response.status_code != 405 or method == "get" or path.endswith("/feedback-token"), path


@pytest.mark.parametrize("path", API_ROUTES)
def test_a_feedback_token_opens_no_other_endpoint(project, path):
    session = evaluated_session(project, "s-token")
    token = feedback_token_issue(session=session, end_user_id="u-1").token
    client = Client(HTTP_AUTHORIZATION=f"Feedback-Token {token}")
    if path == "/api/feedback":
        pytest.skip("the one endpoint the token is for")

    for method in ("get", "post"):
        response = getattr(client, method)(path, content_type="application/json")
        assert response.status_code in (401, 403, 405), (path, method, response.status_code)
        assert response.status_code != 405 or method == "get", path


def test_a_key_passed_in_the_query_string_is_ignored(api_key):
    response = Client().get(f"/api/sessions?api_key={api_key}&key={api_key}")

    assert response.status_code in (401, 403)
    assert API_KEY_KEYWORD in response.get("WWW-Authenticate", API_KEY_KEYWORD)


@pytest.mark.parametrize("path", sorted(PUBLIC_PATHS))
def test_the_public_paths_expose_no_project_data(project, path):
    evaluated_session(project, "secret-session-id")
    response = Client().get("/" + path)

    assert response.status_code == 200
    assert b"secret-session-id" not in response.content
