import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import DatabaseError

from tests.production import production_settings

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db
def test_healthz_is_200_when_the_database_answers(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_healthz_is_503_when_the_database_does_not_answer(client, monkeypatch):
    def broken_cursor(*args, **kwargs):
        raise DatabaseError("connection refused")

    monkeypatch.setattr("core.health.connection.cursor", broken_cursor)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable"


@pytest.mark.django_db
def test_openapi_schema_describes_ingestion_and_errors(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    post = schema["paths"]["/api/sessions"]["post"]
    assert {"200", "201", "400", "401", "413"} <= set(post["responses"])
    body = post["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert {"sessionId", "mode", "toolInvocations", "executorOutput"} <= set(
        schema["components"]["schemas"][body]["properties"]
    )
    assert "ProjectApiKey" in schema["components"]["securitySchemes"]


@pytest.mark.django_db
def test_swagger_ui_is_served_from_local_static_files(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in html
    assert "cdn" not in html.lower()


def _run_with_settings(settings_module: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    ignored = {"SECRET_KEY", "DEBUG", "DATABASE_URL", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE"}
    clean = {k: v for k, v in os.environ.items() if k not in ignored}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": settings_module, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_production_settings_refuse_to_start_without_a_secret_key():
    result = _run_with_settings(
        "config.settings.production",
        {"DATABASE_URL": "sqlite://:memory:", "ALLOWED_HOSTS": "x.example.com"},
    )
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_settings_pass_check_deploy():
    result = _run_with_settings(
        "config.settings.production",
        {
            "DATABASE_URL": "sqlite://:memory:",
            "ALLOWED_HOSTS": "x.example.com",
            "SECRET_KEY": "a-long-random-production-secret-" + "k" * 40,
        },
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_strict_boolean_settings_reject_typos():
    result = _run_with_settings("config.settings.base", {"DEBUG": "ture"})
    assert result.returncode != 0
    assert "DEBUG must be a boolean" in result.stderr


def test_secure_cookies_are_on_in_production_by_default():
    assert production_settings("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE") == {
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
    }


def test_secure_cookies_may_be_turned_off_from_the_environment():
    env = {"SESSION_COOKIE_SECURE": "false", "CSRF_COOKIE_SECURE": "0"}

    assert production_settings("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", env=env) == {
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
    }


def test_the_readme_says_when_to_turn_the_secure_cookies_off():
    operations = (ROOT / "README.md").read_text(encoding="utf-8").split("## Operations", 1)[1]
    [bullet] = [item for item in operations.split("\n- ") if item.startswith("**Secure cookies**")]

    assert "`SESSION_COOKIE_SECURE=false`" in bullet and "`CSRF_COOKIE_SECURE=false`" in bullet
    assert "plain HTTP" in bullet and "terminates TLS elsewhere" in bullet
    assert "docs/operations.md" in bullet


@pytest.mark.parametrize("name", ["SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"])
def test_a_secure_cookie_flag_that_is_no_boolean_refuses_to_start(name):
    with pytest.raises(RuntimeError, match=f"{name} must be a boolean"):
        production_settings(name, env={name: "maybe"})
