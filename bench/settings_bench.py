"""Bench-only settings: the real settings plus a bare view that is the stack's ceiling. Never deployed."""

from config.settings.base import *  # noqa: F403

ROOT_URLCONF = "bench.ceiling_urls"
