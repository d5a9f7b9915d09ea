from rest_framework.request import Request
from rest_framework.throttling import ScopedRateThrottle

from selfeval_site.tenancy.models import ProjectAPIKey


class ClientScopedRateThrottle(ScopedRateThrottle):
    """Scoped rates counted per client: per API key, per staff user, per end user of a
    feedback token, and per address for anything else.

    Counted in fixed windows (a minute for "N/min") with the cache's atomic `incr`, instead of
    DRF's per-request timestamp log: one cache operation per request whatever the rate, and no
    read-modify-write race between workers sharing a Redis cache (the log loses concurrent
    requests). A client may spend its quota at the end of one window and again at the start of
    the next.
    """

    def get_cache_key(self, request: Request, view: object) -> str:
        if isinstance(request.auth, ProjectAPIKey):
            ident = f"key:{request.auth.pk}"
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
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        self.now = self.timer()
        window = int(self.now // self.duration)
        self.window_end = (window + 1) * self.duration
        key = f"{self.get_cache_key(request, view)}:{window}"
        try:
            count = self.cache.incr(key)
        except ValueError:  # first request of the window (or the counter just expired)
            count = 1 if self.cache.add(key, 1, self.duration + 1) else self.cache.incr(key)
        return count <= self.num_requests

    def wait(self) -> float:
        return max(0.0, self.window_end - self.now)
