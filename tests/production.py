"""Reading `config.settings.production` as a deployment gets it: in a fresh interpreter, with the
environment a deployment sets (the test process has imported the development settings)."""

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEPLOYMENT_ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DATABASE_URL": "postgres://selfeval@db.example.com/selfeval",
    "ALLOWED_HOSTS": "selfeval.example.com",
    "SECRET_KEY": "production-settings-probe-" + "k" * 40,
}


def production_settings(*names: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """The values of `names` under the production settings, with `env` added to the deployment's
    environment (a variable not given keeps its default: the test process's own are dropped).
    Raises RuntimeError with the interpreter's error when the settings refuse to load."""
    clean = {key: value for key, value in os.environ.items() if key not in {*names, "DEBUG", *DEPLOYMENT_ENV}}
    script = (
        "import django, json; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{name: getattr(settings, name) for name in {names!r}}}))"
    )
    result = subprocess.run(  # noqa: S603 (our own interpreter, a fixed script)
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**clean, **DEPLOYMENT_ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
    )
    if result.returncode:
        raise RuntimeError(result.stderr.strip().splitlines()[-1])
    return json.loads(result.stdout)
