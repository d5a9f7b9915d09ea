"""Test settings: whatever DATABASE_URL says (SQLite by default), tasks run in process."""

import copy
import os

os.environ.setdefault("TASKS_BACKEND", "immediate")

from .base import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # Tests use an in-memory database of their own, never the development file.
    DATABASES["default"]["NAME"] = ":memory:"  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": ":memory:"}  # noqa: F405
    DATABASES["default"]["OPTIONS"] = {}  # noqa: F405
# Live-server threads must not keep connections open past a test (the test database is dropped).
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405
# The concurrency tests send 50 threads at once through a pool of 8 connections: on a loaded CI
# machine some wait past production's 0.5 s and would get a 503 (tests/production.py checks that
# bound under the production settings).
if "pool" in DATABASES["default"].get("OPTIONS", {}):  # noqa: F405
    DATABASES["default"]["OPTIONS"]["pool"]["timeout"] = 10.0  # noqa: F405
# The `replica` alias is the test database itself (a mirror: a second connection to it). Only the
# replica tests (tests/test_replica.py) install the router that reads through it.
DATABASES["replica"] = copy.deepcopy(DATABASES["default"]) | {"TEST": {"MIRROR": "default"}}  # noqa: F405
# Without a pool: nothing would close a mirror's pool before the test database is dropped.
DATABASES["replica"].get("OPTIONS", {}).pop("pool", None)  # noqa: F405
DATABASE_ROUTERS = []
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
LANGUAGE_CODE = "en"
