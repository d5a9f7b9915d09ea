"""An API request that carries its own credentials passes by the browser's middleware (session,
user, messages, page policy); a browser's request still gets them."""

import pytest

from tests.feedback.helpers import make_session, post_json

pytestmark = pytest.mark.django_db


def test_a_request_with_its_own_credentials_gets_no_session_and_no_page_policy(api, project):
    make_session(project)

    response = post_json(api, "/api/feedback", {"sessionId": "s-20261129-0001", "feedback": "useful"})

    assert response.status_code == 200
    assert "Content-Security-Policy" not in response
    assert "Vary" not in response or "Cookie" not in response["Vary"]
    assert response["X-Content-Type-Options"] == "nosniff"  # the security headers stay
    assert not hasattr(response.wsgi_request, "session")


def test_a_browser_request_to_the_api_keeps_them(client, superuser):
    client.force_login(superuser)

    response = client.get("/api/sessions")

    assert response.status_code == 200
    assert "Content-Security-Policy" in response
    assert response.wsgi_request.user == superuser
