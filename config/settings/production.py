"""Production: PostgreSQL, database-backed task workers, HTTPS-only cookies, no debug.

Refuses to start when a required setting is missing, so a misconfigured deploy fails loudly.
"""

import os

from django.core.exceptions import ImproperlyConfigured

os.environ.setdefault("DEBUG", "false")
os.environ.setdefault("TASKS_BACKEND", "database")

from .base import *  # noqa: E402,F403
from .base import env_bool, env_int, env_str  # noqa: E402

if DEBUG:  # noqa: F405
    raise ImproperlyConfigured("DEBUG must be off in production")
if not env_str("DATABASE_URL"):
    raise ImproperlyConfigured("DATABASE_URL must be set in production")
if not env_str("ALLOWED_HOSTS"):
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set in production")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Cookies travel over HTTPS only. Turn these off only where the browser reaches the app over plain
# HTTP on purpose (a test on loopback behind a proxy that terminates TLS elsewhere): check --deploy
# then warns, as it should (docs/operations.md).
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", True)
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", True)
X_FRAME_OPTIONS = "DENY"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"},
}
