"""Bench-only settings: the real settings plus a bare view that is the stack's ceiling. Never deployed."""

from config.settings.base import *  # noqa: F403

ROOT_URLCONF = "bench.ceiling_urls"

# Production shares one Redis (CACHE_URL) that holds every session's rendered trace; the local-memory
# default keeps 300 entries per process, fewer than the 400 traces each gunicorn worker reads here.
CACHES["default"].setdefault("OPTIONS", {})["MAX_ENTRIES"] = 10_000  # noqa: F405
