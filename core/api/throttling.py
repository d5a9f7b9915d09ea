"""Rate limits per client and scope, and the RateLimit headers that tell a client its budget.

The headers follow draft-ietf-httpapi-ratelimit-headers-10 (Structured Fields): one quota policy per
throttle scope, named after it, `RateLimit-Policy: "feedback";q=600;w=60`, and the state of its
window, `RateLimit: "feedback";r=597;t=42` (requests left, seconds until the window ends). The
throttle that counted a request leaves its state on the request; `RateLimitHeadersMiddleware` writes
it on the answer, whatever the answer (a 429 says r=0, beside `Retry-After`).
"""

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from django.http import HttpRequest
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle, ScopedRateThrottle

from core.tenancy.models import ProjectAPIKey

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RateLimitState:
    """One scope's budget as counted for this request."""

    policy: str  # the throttle scope
    quota: int  # requests per window
    window: int  # seconds
    remaining: int
    reset: int  # seconds until the window ends

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Policy": f'"{self.policy}";q={self.quota};w={self.window}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset}',
        }


RATE_LIMIT_ATTRIBUTE = "selfeval_rate_limit"


def rate_limit_of(request: HttpRequest) -> RateLimitState | None:
    """The budget a throttle counted this request against, if any did."""
    return getattr(request, RATE_LIMIT_ATTRIBUTE, None)


def client_address(request: HttpRequest | Request) -> str:
    """The client's address: REMOTE_ADDR, or with SELFEVAL_TRUSTED_PROXIES (DRF's NUM_PROXIES) = N
    the address N entries from the end of X-Forwarded-For. One rule for rate limits and logins."""
    return BaseThrottle().get_ident(request)


class ClientScopedRateThrottle(ScopedRateThrottle):
    """Scoped rates counted per client: per API key (by its public prefix), per staff user, per
    end user of a feedback token, and per address for anything else.

    Counted in fixed windows (a minute for "N/min") with the cache's atomic `incr`, instead of
    DRF's per-request timestamp log: one cache operation per request whatever the rate, and no
    read-modify-write race between workers sharing a Redis cache (the log loses concurrent
    requests). A client may spend its quota at the end of one window and again at the start of
    the next.
    """

    def get_cache_key(self, request: Request, view: object) -> str:
        if isinstance(request.auth, ProjectAPIKey):
            # The prefix names the key; its primary key is "prefix.hash" and must not reach the cache.
            ident = f"key:{request.auth.prefix}"
        elif request.user and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            end_user = getattr(request, "feedback_end_user", None)
            ident = f"enduser:{end_user}" if end_user else f"ip:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}

    def allow_request(self, request: Request, view: object) -> bool:
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self._start_window()
        count = self._hit(f"{self.get_cache_key(request, view)}:{self.window}")
        self._record(request, remaining=max(0, self.num_requests - count))
        return count <= self.num_requests

    def _record(self, request: HttpRequest | Request, *, remaining: int) -> None:
        """Leave the counted budget on the Django request (a DRF request wraps one) for the headers."""
        state = RateLimitState(
            policy=self.scope,
            quota=self.num_requests,
            window=self.duration,
            remaining=remaining,
            reset=math.ceil(self.wait()),
        )
        setattr(getattr(request, "_request", request), RATE_LIMIT_ATTRIBUTE, state)

    def _start_window(self) -> None:
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.now = self.timer()
        self.window = int(self.now // self.duration)
        self.window_end = (self.window + 1) * self.duration

    def _hit(self, key: str) -> int:
        try:
            return self.cache.incr(key)
        except ValueError:  # first request of the window (or the counter just expired)
            return 1 if self.cache.add(key, 1, self.duration + 1) else self.cache.incr(key)

    def wait(self) -> float:
        return max(0.0, self.window_end - self.now)


class AuthenticationFailureThrottle(ClientScopedRateThrottle):
    """Failed authentications per client address and credential (scope `auth_failure`).

    A credential is an API key's public prefix (the part before the dot), or the kind of credential
    when it has none (feedback tokens). Past the rate, that credential from that address is refused
    (429) before it is even checked, until the window ends: so a wrong secret cannot be told from a
    right one by a client guessing them, and one misconfigured agent behind a shared address never
    locks out the other agents' keys. The success path costs one cache read; only a failure writes.
    """

    scope = "auth_failure"

    def guard(self, request: HttpRequest | Request, authenticate: Callable[[], T], *, credential: str) -> T:
        """Run `authenticate`, counting its AuthenticationFailed against (client address, `credential`)."""
        self._start_window()
        key = f"throttle_{self.scope}_ip:{client_address(request)}:{credential}:{self.window}"
        if (self.cache.get(key) or 0) >= self.num_requests:
            self._record(request, remaining=0)
            raise exceptions.Throttled(wait=self.wait())
        try:
            return authenticate()
        except exceptions.AuthenticationFailed:
            self._hit(key)
            raise


def api_key_credential(key: str) -> str:
    """What failed authentications with `key` count against: its prefix (the cache key's safe
    characters only, at most 32 of them), never its secret."""
    prefix = key.partition(".")[0]
    return "key:" + "".join(char for char in prefix if char.isascii() and char.isalnum())[:32]
